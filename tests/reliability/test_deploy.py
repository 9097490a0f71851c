"""The shipped deployment files ask only for what the commands accept: every command line in the
Dockerfile, deploy/compose.yaml and deploy/k8s/ parses with the croupier CLI, and the tournament
files they play load."""

from __future__ import annotations

import argparse
import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.cli import SUBCOMMANDS
from croupier.clients.tournament.config import load

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = [ROOT / "deploy" / "compose.yaml", *sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))]


def parse(argv: list[str]) -> argparse.Namespace:
    """``croupier ARGV`` parsed as the CLI would (nothing run)."""
    name, *rest = argv
    module_name, _ = SUBCOMMANDS[name]
    parser = argparse.ArgumentParser(prog=f"croupier {name}", exit_on_error=False)
    importlib.import_module(module_name).add_arguments(parser)
    return parser.parse_args(rest)


def parse_dask(argv: list[str]) -> dict[str, Any]:
    """``dask scheduler|worker ARGV`` (deploy/k8s/cluster.yaml) parsed as Dask's CLI would."""
    from distributed.cli import dask_scheduler, dask_worker

    command = {"scheduler": dask_scheduler.main, "worker": dask_worker.main}[argv[1]]
    return dict(command.make_context(f"dask {argv[1]}", argv[2:]).params)


def yaml_command_lists(text: str) -> list[list[str]]:
    """Each ``command:`` or ``args:`` block of a YAML file: its ``- item`` lines, unquoted."""
    lists = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.fullmatch(r"\s*(command|args):\s*", line):
            indent = len(line) - len(line.lstrip())
            items = []
            for item in lines[i + 1 :]:
                stripped = item.strip()
                if not stripped.startswith("- ") or len(item) - len(item.lstrip()) < indent:
                    break
                items.append(stripped[2:].split("  #")[0].strip().strip('"'))
            lists.append(items)
    return lists


def test_the_images_default_command_is_a_valid_serve() -> None:
    cmd = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("CMD "))
    args = parse(json.loads(cmd.removeprefix("CMD ")))
    assert (args.address, str(args.data), args.metrics_address) == ("0.0.0.0:50051", "/data", "0.0.0.0:9464")


@pytest.mark.parametrize("path", DEPLOY, ids=lambda p: p.name)
def test_every_command_in_the_deployment_files_parses(path: Path) -> None:
    commands = yaml_command_lists(path.read_text())
    if path.name in ("kustomization.yaml",):
        assert commands == []
        return
    assert commands, f"no command found in {path}"
    for argv in commands:
        substituted = [re.sub(r"\$\{(\w+)[^}]*\}|\$\((\w+)\)", "x", arg) for arg in argv]
        args = parse_dask(substituted) if argv[0] == "dask" else parse(substituted)
        assert args is not None


def test_the_tournament_files_deploy_plays_load_and_their_bot_commands_parse(tmp_path: Path) -> None:
    block = (ROOT / "deploy" / "k8s" / "tournament.yaml").read_text().split("tournament.toml: |\n", 1)[1]
    toml = "\n".join(line[4:] for line in block.split("\n---", 1)[0].splitlines())
    (tmp_path / "k8s.toml").write_text(toml)
    # compose plays tournaments/$CROUPIER_TOURNAMENT, demo.toml by default
    for config in (load(tmp_path / "k8s.toml"), load(ROOT / "tournaments" / "demo.toml")):
        for bot in config.bots:
            if bot.command is not None:
                argv = [arg for arg in bot.command if arg != "croupier"]
                assert argv[0] == "bot" and parse(argv) is not None
    assert "CROUPIER_TOURNAMENT=demo.toml" in (ROOT / "deploy" / "example.env").read_text()


def test_the_deployed_runners_spread_over_every_replica_each_advertising_its_own_name() -> None:
    """Each runner targets a name that resolves to every referee replica; each replica advertises a
    name of its own that reaches it (the runner follows each match there)."""
    k8s = (ROOT / "deploy" / "k8s" / "referee.yaml").read_text()
    service = re.search(r"kind: Service\nmetadata:\n  name: (\S+)", k8s)
    assert service is not None and "clusterIP: None" in k8s  # headless: its name gives every pod
    (serve,) = [parse(argv) for argv in yaml_command_lists(k8s)]
    assert serve.advertise == f"$(POD_NAME).{service.group(1)}:50051" and "fieldPath: metadata.name" in k8s
    (job,) = [
        parse(argv) for argv in yaml_command_lists((ROOT / "deploy" / "k8s" / "tournament.yaml").read_text())
    ]
    assert job.server == f"dns:///{service.group(1)}:50051"

    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    services = dict(
        re.findall(r"\n  ([\w-]+):\n    <<: \*referee\n    command:\n((?:      - .*\n)+)", compose)
    )
    assert len(services) >= 2 and "aliases: [referees]" in compose
    for name, block in services.items():
        argv = [line.strip()[2:] for line in block.splitlines()]
        assert parse(argv).advertise == f"{name}:50051"
    tournament = [parse(argv) for argv in yaml_command_lists(compose) if argv[0] == "tournament"]
    assert [args.server for args in tournament] == ["dns:///referees:50051"]


def test_the_dask_workers_play_on_the_scheduler_s_service_one_set_at_a_time() -> None:
    """deploy/k8s/cluster.yaml: the workers reach the scheduler by its Service, one thread each."""
    k8s = (ROOT / "deploy" / "k8s" / "cluster.yaml").read_text()
    service = re.search(r"kind: Service\nmetadata:\n  name: (\S+)", k8s)
    assert service is not None
    scheduler, worker = [parse_dask(argv) for argv in yaml_command_lists(k8s)]
    assert worker["scheduler"] == f"tcp://{service.group(1)}:{scheduler['port']}"
    assert worker["nthreads"] == 1
