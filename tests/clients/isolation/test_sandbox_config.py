"""Bots given as a Docker image in a tournament file: their sandbox limits, for all bots or one,
and the errors that name a bad setting (no Docker engine needed)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from croupier.clients.isolation import containers
from croupier.clients.isolation.containers import launcher_argv, main
from croupier.clients.isolation.limits import Sandbox
from croupier.clients.tournament.config import ConfigError, TournamentConfig, parse

FILE = """
name = "boxed"

[sandbox]
memory = "1g"
pids = 64

[[games]]
game = "platinum_fish"
seats = 2

[[bots]]
name = "default-limits"
image = "mybot:1"

[[bots]]
name = "own-limits"
image = "registry.example/bots/theirs:2.0"
command = ["bot", "--strategy", "random"]
sandbox = { memory = "256m", cpus = 0.5 }

[[bots]]
name = "plain"
command = "croupier bot"
"""


def read(text: str) -> TournamentConfig:
    return parse(tomllib.loads(text))


def test_limits_come_from_the_file_for_every_bot_and_per_bot() -> None:
    bots = {bot.name: bot for bot in read(FILE).bots}
    assert bots["default-limits"].image == "mybot:1" and bots["default-limits"].command is None
    assert bots["default-limits"].sandbox == Sandbox(memory="1g", cpus=1.0, pids=64, tmp="64m")
    assert bots["own-limits"].command == ("bot", "--strategy", "random")
    assert bots["own-limits"].sandbox == Sandbox(memory="256m", cpus=0.5, pids=64, tmp="64m")
    # a command's limits are its jail's (isolation.py)
    assert bots["plain"].image is None and bots["plain"].sandbox == Sandbox(memory="1g", pids=64)


def test_a_jailed_commands_limits_are_its_sandbox_table() -> None:
    from croupier.clients.isolation.policy import limits_of
    from croupier.clients.isolation.quotas import Limits

    plain = read(FILE.replace('command = "croupier bot"', 'command = "croupier bot"\nsandbox = { cpus = 2 }'))
    assert limits_of(plain.bots[2].sandbox) == Limits(pids=64, memory=1 << 30, cpus=2.0)
    assert limits_of(None) == Limits(pids=128, memory=512 << 20, cpus=1.0)  # the Docker sandbox's


def test_without_a_sandbox_table_the_defaults_hold() -> None:
    config = read(FILE.replace('[sandbox]\nmemory = "1g"\npids = 64\n', ""))
    assert config.bots[0].sandbox == Sandbox()


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            ('memory = "1g"', 'memory = "lots"'),
            'sandbox.memory: a size such as "512m" or "1g" of at least 16m',
        ),
        (('memory = "1g"', 'memory = "4m"'), 'sandbox.memory: a size such as "512m" or "1g" of at least 16m'),
        (('memory = "1g"', "memory = 1024"), 'sandbox.memory: a size such as "512m" or "1g" of at least 16m'),
        (("pids = 64", "pids = 2"), "sandbox.pids: a whole number of at least 8 is required, not 2"),
        (("pids = 64", "pids = true"), "sandbox.pids: a whole number of at least 8 is required, not True"),
        (("cpus = 0.5", "cpus = 0"), "bots[1].sandbox.cpus: a number of cores above 0 (0.5, 2) is required"),
        (
            ("cpus = 0.5", 'cpus = "half"'),
            "bots[1].sandbox.cpus: a number of cores above 0 (0.5, 2) is required",
        ),
        (("cpus = 0.5", 'tmp = "lots"'), 'bots[1].sandbox.tmp: a size such as "512m" or "1g" is required'),
        (("pids = 64", "pid = 64"), "sandbox: unknown setting 'pid' (did you mean pids?)"),
        (('image = "mybot:1"', 'image = ""'), 'bots[0].image: a Docker image such as "mybot:1" is required'),
        (('image = "mybot:1"', "image = 1"), 'bots[0].image: a Docker image such as "mybot:1" is required'),
        (
            ('image = "mybot:1"', 'image = "mybot:1"\nexternal = true'),
            "bots[0].image: bot 'default-limits': either an image (the runner runs it) or external = true",
        ),
        (
            ('command = "croupier bot"', "external = true\nsandbox = { pids = 64 }"),
            "bots[2].sandbox: limits are for a bot the runner launches (an image or a command)",
        ),
    ],
)
def test_a_bad_container_setting_is_one_line_naming_it(change: tuple[str, str], line: str) -> None:
    text = FILE.replace(*change)
    assert text != FILE
    with pytest.raises(ConfigError) as raised:
        read(text)
    assert len(str(raised.value).splitlines()) == 1
    assert str(raised.value).startswith(line), str(raised.value)


def test_the_launcher_reads_back_what_the_runner_wrote(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's command line for a container is the launcher's; here without an engine."""

    def no_engine() -> None:
        raise RuntimeError("no Docker engine answers (here, on purpose)")

    monkeypatch.setattr(containers, "engine", no_engine)
    argv = launcher_argv("b", "mybot:1", ["bot", "--x"], Sandbox(cpus=0.5), Path("/s/referee.sock"), "L")
    assert argv[3:] == [
        "--name", "b", "--image", "mybot:1", "--socket", "/s/referee.sock", "--label", "L",
        "--memory", "512m", "--cpus", "0.5", "--pids", "128", "--tmp", "64m", "--", "bot", "--x",
    ]  # fmt: skip
    assert main(argv[3:]) == 125
    assert "cannot start the container: no Docker engine answers" in capsys.readouterr().out


KILLED_RUN = """
import os, sys, tomllib
from croupier.clients.isolation import containers
from croupier.clients.tournament.config import parse
config = parse(tomllib.loads(sys.argv[1]))
with containers.referee_socket(config.bots) as socket:
    print(socket, flush=True)
    os.kill(os.getpid(), 9)  # killed midway: nothing of its own clean-up runs
"""


def test_the_next_run_removes_the_socket_folder_a_killed_run_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import subprocess
    import sys
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again, here and in the child
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, FILE], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    left = Path(killed.stdout.strip()).parent
    assert left.is_dir() and left.parent == tmp_path
    lock = left.with_name(left.name + ".lock")
    past = lock.stat().st_mtime - 60
    os.utime(lock, (past, past))  # the killed run's lock, a minute old and held by no one
    config = parse(tomllib.loads(FILE))
    with containers.referee_socket(config.bots) as live:  # the next run
        assert live is not None and live.parent.is_dir()
        assert not left.exists() and not lock.exists()
        # a live run's folder stays, however old its lock
        later = live.parent.with_name(live.parent.name + ".lock").stat().st_mtime + 60
        assert containers.sweep_socket_folders(now=later) == 0
        assert live.parent.is_dir()
    assert sorted(tmp_path.iterdir()) == []  # the live run removed its own when it ended
