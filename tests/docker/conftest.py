"""The Docker tests' engine and images, shared by the whole session (building is the slow part)."""

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
    images.reap(client)
    yield client
    images.reap(client)
    client.close()


@pytest.fixture(scope="session")
def croupier_image(docker_client: docker.DockerClient) -> str:
    return images.croupier_image(docker_client)
