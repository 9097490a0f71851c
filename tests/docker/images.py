"""The Docker engine and the images the Docker tests run.

No container registry is reachable from these machines, so croupier's image is built FROM a local
base made from Debian's packages (deploy/debian-base.sh: debootstrap, a few minutes, once per
machine: the tag is kept and reused), and pip inside the build is pointed at the package index
this machine's pip uses. Layers are cached by the engine, so a rebuild with unchanged sources takes
seconds. ``CROUPIER_TEST_BASE_IMAGE`` names another base (``python:3.11-slim`` where a registry
answers).
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from tests.toolchains import missing, need

if TYPE_CHECKING:
    import docker

ROOT = Path(__file__).resolve().parents[2]
BASE_IMAGE = os.environ.get("CROUPIER_TEST_BASE_IMAGE", "croupier-base:bookworm")
IMAGE = "croupier:test-" + hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]
"""One tag per checkout: test runs of two worktrees on one machine each play their own sources."""
LABEL = "croupier.test"
"""On every container a test starts, so a test run interrupted midway is cleaned up by the next."""
PIP_SETTINGS = ("index-url", "extra-index-url", "trusted-host")
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


def engine() -> docker.DockerClient:
    """A client of the Docker engine that answers here; a skip (a failure under CI) without one."""
    try:
        import docker
    except ImportError:
        missing("the docker package is not installed (pip install 'croupier[containers]')")
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except docker.errors.DockerException as exc:
        missing(f"no Docker engine answers (DOCKER_HOST or /var/run/docker.sock): {exc}")
    return client


@contextlib.contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """One builder at a time on this machine (two test runs may start together)."""
    with (Path(tempfile.gettempdir()) / f"croupier-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _has_image(client: docker.DockerClient, tag: str) -> bool:
    import docker

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def base_image(client: docker.DockerClient) -> str:
    """The base image's tag, built by debootstrap the first time on this machine."""
    with machine_lock("base-image"):
        if _has_image(client, BASE_IMAGE):
            return BASE_IMAGE
        if BASE_IMAGE != "croupier-base:bookworm":
            missing(f"the base image {BASE_IMAGE} ($CROUPIER_TEST_BASE_IMAGE) is not on this engine")
        need("debootstrap", "it builds the tests' base image from Debian's packages")
        if os.geteuid() != 0:
            missing("building the base image by debootstrap needs root (or a CROUPIER_TEST_BASE_IMAGE)")
        subprocess.run([str(ROOT / "deploy" / "debian-base.sh"), BASE_IMAGE], check=True)
        return BASE_IMAGE


def pip_build_args() -> dict[str, str]:
    """The build arguments that point pip in the build at the index this machine's pip uses:
    its index URLs (only http(s) ones: a file:// index is a folder of this machine), trusted
    hosts, and the proxies of this environment."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    found: dict[str, tuple[int, str]] = {}
    for line in listed.splitlines():
        key, _, raw = line.partition("=")
        section, _, name = key.rpartition(".")
        if name not in PIP_SETTINGS:
            continue
        rank = {":env:": 0, "install": 1}.get(section, 2)  # pip's order: environment, then files
        with contextlib.suppress(ValueError, SyntaxError):
            raw = ast.literal_eval(raw)
        if name not in found or rank < found[name][0]:
            found[name] = (rank, raw)
    args = {}
    for name, (_, value) in found.items():
        if name.endswith("url"):
            value = " ".join(url for url in value.split() if url.startswith(("http://", "https://")))
        if value:
            args["PIP_" + name.replace("-", "_").upper()] = value
    args.update({proxy: os.environ[proxy] for proxy in PROXIES if os.environ.get(proxy)})
    return args


def croupier_image(client: docker.DockerClient) -> str:
    """croupier's image built from the Dockerfile on the base image, its tag."""
    import docker

    base = base_image(client)
    with machine_lock("image"):
        try:
            client.images.build(
                path=str(ROOT),
                tag=IMAGE,
                buildargs={"BASE_IMAGE": base, **pip_build_args()},
                labels={LABEL: "image"},
                rm=True,
                forcerm=True,
            )
        except docker.errors.BuildError as exc:
            log = "".join(str(part.get("stream", part.get("error", ""))) for part in exc.build_log)
            raise AssertionError(f"docker build failed: {exc}\n{log[-4000:]}") from None
        # the builds a source change replaced, untagged now: ~60 MB each
        client.images.prune(filters={"dangling": True, "label": LABEL})
    return IMAGE


def reap(client: docker.DockerClient) -> None:
    """Remove the containers and networks earlier test runs left behind (a run killed midway)."""
    import docker

    for container in client.containers.list(all=True, filters={"label": LABEL}):
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)
    for network in client.networks.list(filters={"label": LABEL}):
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            network.remove()
