"""deploy/k8s/cluster.yaml's Dask scheduler and workers, run from croupier's image as the manifest
runs them (its own commands, user 10001, every capability dropped, the scheduler found by its
Service name ``croupier-dask`` on a network of their own), play a test handed to them from this
machine's checkout: the results are those of the same test on this machine's pool, set for set.
That also shows the image's Croupier (a wheel) and the checkout's (editable) are one code identity:
a run refuses workers whose code differs."""

from __future__ import annotations

import contextlib
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.clients.author.test_cluster import _results
from tests.clients.terminal import croupier
from tests.docker.images import LABEL, ROOT
from tests.reliability.test_deploy import yaml_command_lists

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container
    from docker.models.networks import Network

pytestmark = pytest.mark.timeout(900)  # the image is built first where no other test built it

WAIT = 120
"""Seconds before the cluster or a run is given up: a guard, never a timing check."""
SETS = 6
BOT = """from croupier.clients.bots import HeuristicBot


class Mine(HeuristicBot):
    pass
"""


def _manifest_commands() -> tuple[list[str], list[str]]:
    """The scheduler's and the worker's command lines, as the manifest gives them."""
    commands = yaml_command_lists((ROOT / "deploy" / "k8s" / "cluster.yaml").read_text())
    (scheduler,) = [c for c in commands if c[:2] == ["dask", "scheduler"]]
    (worker,) = [c for c in commands if c[:2] == ["dask", "worker"]]
    return scheduler, worker


def _start(
    client: docker.DockerClient, image: str, argv: list[str], network: Network, alias: str
) -> Container:
    """A container of the image running ``argv`` in place of its entrypoint (as a pod's ``command``
    does), with the manifest's security context, on ``network`` under ``alias``."""
    container = client.containers.create(
        image,
        argv[1:],
        entrypoint=[argv[0]],
        user="10001:10001",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        labels={LABEL: "cluster"},
        detach=True,
    )
    network.connect(container, aliases=[alias])
    container.start()
    return container


@contextlib.contextmanager
def _cluster(client: docker.DockerClient, image: str, workers: int) -> Iterator[str]:
    """The manifest's scheduler and ``workers`` workers; the scheduler's address from this machine."""
    scheduler, worker = _manifest_commands()
    network = client.networks.create(f"croupier-test-{uuid.uuid4().hex[:8]}", labels={LABEL: "cluster"})
    started: list[Container] = []
    try:
        started.append(_start(client, image, scheduler, network, "croupier-dask"))
        for number in range(workers):
            started.append(_start(client, image, worker, network, f"croupier-dask-worker-{number}"))
        started[0].reload()
        ip = started[0].attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        yield f"tcp://{ip}:8786"
    except BaseException:
        for container in started:
            print(container.name, container.logs().decode()[-2000:])
        raise
    finally:
        for container in started:
            container.remove(force=True)
        network.remove()


def _workers_up(address: str, count: int) -> None:
    from distributed import Client

    deadline = time.monotonic() + WAIT
    while True:
        try:
            with Client(address, set_as_default=False, timeout=10) as dask:
                dask.wait_for_workers(count, timeout=WAIT)
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def test_the_manifest_s_cluster_from_the_image_plays_the_local_pool_s_results(
    docker_client: docker.DockerClient, croupier_image: str, tmp_path: Path
) -> None:
    (tmp_path / "mine.py").write_text(BOT)
    test = ["spoil_five", "--option", "players=2", "--bot", "mine.py", "--bot", "heuristic"]
    test += [
        "--sprt",
        "elo0=0",
        "elo1=10",
        "--in-process",
        "--seed",
        "5",
        "--max-games",
        str(2 * SETS),
        "--plain",
    ]
    with _cluster(docker_client, croupier_image, workers=2) as address:
        _workers_up(address, 2)
        for where, extra in (("local", []), ("cluster", ["--cluster", address])):
            run = subprocess.run(
                croupier("match", *test, "--data", where, *extra),
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=WAIT * 3,
            )
            assert run.returncode == 4 and "inconclusive" in run.stdout, run.stdout + run.stderr  # all played
    played = _results(tmp_path / "cluster")
    assert len(played) == 2 * SETS and played == _results(tmp_path / "local")
