"""croupier's image, built from the Dockerfile: the referee in a container serves a tournament
played from this machine, through a port published on 127.0.0.1 only."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.docker.images import LABEL

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

pytestmark = pytest.mark.timeout(900)  # the first test builds the base image: minutes, once per machine

ADMIN_TOKEN = "admin-of-the-image-test"
TOURNAMENT = """
name = "in-a-container"
concurrency = 4

[[games]]
game = "platinum_fish"
seats = 2

[[bots]]
name = "heuristic"
command = "croupier bot --strategy heuristic"

[[bots]]
name = "random"
command = "croupier bot --strategy random"
"""


def wait_healthy(container: Container, seconds: float = 120.0) -> None:
    """Until the image's own HEALTHCHECK (gRPC health) reports the referee healthy."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        container.reload()
        state = container.attrs["State"]
        if not state["Running"]:
            raise AssertionError(f"the referee's container stopped:\n{container.logs().decode()}")
        if state.get("Health", {}).get("Status") == "healthy":
            return
        time.sleep(0.5)
    raise AssertionError(f"the referee never became healthy:\n{container.logs().decode()}")


def test_the_image_serves_a_tournament_played_from_the_host(
    docker_client: docker.DockerClient, croupier_image: str, tmp_path: Path
) -> None:
    referee = docker_client.containers.run(
        croupier_image,
        ["serve", "--address", "0.0.0.0:50051", "--data", "/data", "--metrics-address", "off"],
        environment={"CROUPIER_ADMIN_TOKEN": ADMIN_TOKEN},
        ports={"50051/tcp": ("127.0.0.1", None)},  # a free port, reachable from this machine only
        labels={LABEL: "referee"},
        detach=True,
    )
    try:
        wait_healthy(referee)
        published = referee.ports["50051/tcp"]
        assert [binding["HostIp"] for binding in published] == ["127.0.0.1"]
        (tmp_path / "t.toml").write_text(TOURNAMENT)
        command = [
            sys.executable, "-m", "croupier.clients.cli", "tournament", str(tmp_path / "t.toml"),
            "--server", f"127.0.0.1:{published[0]['HostPort']}", "--admin-token", ADMIN_TOKEN,
            "--data", str(tmp_path / "data"), "--plain", "--samples", "50",
        ]  # fmt: skip
        played = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert played.returncode == 0, played.stdout + played.stderr
        assert "platinum_fish: ratings of in-a-container run 1" in played.stdout
        assert "journals: 2 in /data/matches on the referee's machine" in played.stdout
        journals = referee.exec_run(["sh", "-c", "ls /data/matches/*.jsonl | wc -l"]).output.decode()
        assert journals.strip() == "2", referee.logs().decode()
    finally:
        referee.remove(force=True)


def test_the_image_runs_the_compiled_engine_with_no_compiler_in_it(
    docker_client: docker.DockerClient, croupier_image: str
) -> None:
    """The build stage compiles the engine (mypyc); the runtime stage has its modules, not gcc."""
    version = docker_client.containers.run(croupier_image, ["--version"], remove=True).decode()
    assert "hot path: compiled (mypyc)" in version, version
    compiled = docker_client.containers.run(
        croupier_image,
        ["-c", "import croupier.engine.games.spoil_five as m; print(m.__file__)"],
        entrypoint=["python"],
        remove=True,
    ).decode()
    assert compiled.strip().endswith(".so"), compiled  # the module that runs is the extension
    tools = docker_client.containers.run(
        croupier_image, ["-c", "command -v gcc cc || echo none"], entrypoint=["sh"], remove=True
    ).decode()
    assert tools.strip() == "none", tools
