"""The Docker tests' engine and images, shared by the whole session (building is the slow part).
`make test`'s two workers may each run a Docker file: a lock on the machine makes their tests
take turns, and a session's reap (every labelled container) waits for the other's test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.docker import images

if TYPE_CHECKING:
    import docker


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    client = images.engine()
    with images.machine_lock("docker-test"):
        images.reap(client)
    yield client
    with images.machine_lock("docker-test"):
        images.reap(client)
    client.close()


@pytest.fixture(autouse=True)
def one_docker_test_at_a_time() -> Iterator[None]:
    """A session's reap removes every labelled container on the machine: never while another
    session's Docker test runs (a CI run saw a referee's container reaped under its test by a
    second session starting beside it)."""
    with images.machine_lock("docker-test"):
        yield


@pytest.fixture(scope="session")
def croupier_image(docker_client: docker.DockerClient) -> str:
    return images.croupier_image(docker_client)
