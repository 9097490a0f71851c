"""Tournament bots in Docker containers: a sandbox for bots the organiser does not trust.

A bot given as ``image = "..."`` runs in a container started through the Docker SDK with no
network, a read-only root filesystem (a tmpfs at /tmp is the only place it can write), no
capabilities, no privilege gain, and pids, CPU and memory limits. It reaches the referee
through the referee's Unix socket, whose folder is mounted read-only at /run/croupier.

The runner launches it like any bot: its command, run under the watchdog and restarted when
it exits, is ``python -m croupier.clients.isolation.containers ...`` (``main`` below), which
starts the container, copies its output into the bot's log, says why it ended (its memory
limit, for one) and removes it. Every container carries its tournament's label, so the next
run reaps what a killed runner left behind.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from croupier.clients.isolation.limits import Sandbox

if TYPE_CHECKING:  # the Docker SDK is an extra (croupier[containers]): imported when used
    import docker
    from docker.models.containers import Container


class BotConfig(Protocol):
    """What a container reads of a tournament's bot (tournament/config.py's BotConfig), named here
    rather than imported: the runner's config reads the limits here, and this imports none of it."""

    @property
    def name(self) -> str: ...
    @property
    def image(self) -> str | None: ...
    @property
    def sandbox(self) -> Sandbox | None: ...


LABEL = "croupier.tournament"
"""Names the tournament run a container belongs to (its logs folder)."""
BOT_LABEL = "croupier.bot"
NOBODY = "65534:65534"
"""Who runs an image that would run as root: a bot needs no root, and root could write to /dev."""
SOCKET_FOLDER = "/run/croupier"
"""Where the referee's socket folder is mounted in a bot's container."""
STOP_SECONDS = 2
"""A stopped bot's grace before it is killed (the watchdog kills this launcher 3 s after asking)."""
INSTALL_HINT = "the Docker SDK is not installed: pip install 'croupier[containers]'"


def address_inside(socket: Path) -> str:
    """The referee's address as a bot in a container dials it."""
    return f"unix:{SOCKET_FOLDER}/{socket.name}"


SOCKET_PREFIX = "croupier-sock-"
STALE_SECONDS = 10.0
"""A socket folder's lock this old and held by no one is a killed run's (a live run locks its own
at once, so a younger one may be a run starting)."""


@contextlib.contextmanager
def referee_socket(bots: Iterable[BotConfig], jailed: bool = False) -> Iterator[Path | None]:
    """Where an embedded referee listens for the bots in containers or jails (``jailed``: there
    are jailed bots), if there are any: a folder of its own (the runner mounts all of it), short
    enough for a socket's path.

    The folder's lock file beside it (out of the bots' sight) is held while the run lasts; the
    lock dies with the process, however it ends, so the next run removes what a killed one left."""
    if not jailed and not any(bot.image for bot in bots):
        yield None
        return
    sweep_socket_folders()
    folder = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX))
    try:
        with folder.with_name(folder.name + ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            folder.chmod(0o755)  # a container's user is not ours
            yield folder / "referee.sock"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        folder.with_name(folder.name + ".lock").unlink(missing_ok=True)


def sweep_socket_folders(now: float | None = None) -> int:
    """Remove the socket folders of runs that ended without removing theirs; how many."""
    now = time.time() if now is None else now
    removed = 0
    for lock_path in Path(tempfile.gettempdir()).glob(f"{SOCKET_PREFIX}*.lock"):
        try:
            if now - lock_path.stat().st_mtime < STALE_SECONDS:
                continue
            with lock_path.open("r") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(lock_path.with_suffix(""), ignore_errors=True)
                lock_path.unlink()
                removed += 1
        except OSError:  # held (a live run's), or gone meanwhile, or another user's
            continue
    return removed


def bot_server(bot: BotConfig, replica: str, socket: Path | None) -> str:
    """The referee's address as the bot dials it: the replica's, or in a container the socket's."""
    return address_inside(socket) if bot.image is not None and socket is not None else replica


def bot_command(bot: BotConfig, argv: Sequence[str], socket: Path | None, label: str) -> list[str]:
    """What the runner launches for the bot: its command, or for a bot given as an image the
    launcher of its container (with ``argv`` as the image's command)."""
    if bot.image is None or bot.sandbox is None or socket is None:
        return list(argv)
    return launcher_argv(bot.name, bot.image, argv, bot.sandbox, socket, label)


def label_of(logs: Path) -> str:
    """The label of a tournament run's containers: its logs folder, one per run of a tournament
    and data folder, so a resumed run reaps what the stopped one left and no other's."""
    return str(logs.absolute())


def launcher_argv(
    name: str, image: str, command: Sequence[str], limits: Sandbox, socket: Path, label: str
) -> list[str]:
    """The command the runner launches for a bot in a container (``main`` reads it)."""
    return [
        sys.executable, "-m", "croupier.clients.isolation.containers",
        "--name", name, "--image", image, "--socket", str(socket.absolute()), "--label", label,
        "--memory", limits.memory, "--cpus", f"{limits.cpus:g}", "--pids", str(limits.pids),
        "--tmp", limits.tmp, "--", *command,
    ]  # fmt: skip


def run_options(
    name: str, limits: Sandbox, socket: Path, label: str, env: Mapping[str, str]
) -> dict[str, Any]:
    """The Docker SDK's ``containers.run`` settings of the sandbox."""
    from docker.types import LogConfig, Mount

    return {
        "name": f"croupier-{re.sub(r'[^A-Za-z0-9_.-]', '-', name)}-{secrets.token_hex(3)}",
        "labels": {LABEL: label, BOT_LABEL: name},
        "environment": {
            "CROUPIER_SERVER": address_inside(socket),
            "CROUPIER_TOKEN": env.get("CROUPIER_TOKEN", ""),
            "CROUPIER_BOT_NAME": name,
            "PYTHONUNBUFFERED": "1",
        },
        "network_mode": "none",
        "read_only": True,
        # exec allowed: a bot's own code runs anyway, and some unpack libraries there
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,exec,size={limits.tmp}"},
        "ipc_mode": "none",  # no /dev/shm: /tmp is the one place to write
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": limits.pids,
        "nano_cpus": int(limits.cpus * 1e9),
        "mem_limit": limits.memory,
        "memswap_limit": limits.memory,  # no swap beyond the limit
        "init": True,  # an init as process 1: signals reach the bot, and its zombies are reaped
        # not the image's HEALTHCHECK (croupier's checks a referee): a bot would show "unhealthy",
        # and a check process would start in its container every 10 s
        "healthcheck": {"test": ["NONE"]},
        "mounts": [Mount(SOCKET_FOLDER, str(socket.parent.absolute()), type="bind", read_only=True)],
        "log_config": LogConfig(type="json-file", config={"max-size": "10m", "max-file": "1"}),
        "detach": True,
    }


def engine() -> docker.DockerClient:
    """The Docker engine's client; a RuntimeError says why there is none."""
    try:
        import docker
    except ImportError:
        raise RuntimeError(INSTALL_HINT) from None
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        raise RuntimeError(f"no Docker engine answers (DOCKER_HOST or /var/run/docker.sock): {exc}") from None
    return client


def prepare(bots: Sequence[BotConfig], replicas: Sequence[str], socket: Path | None, label: str) -> int:
    """Before launching the bots given as an image: the Docker engine, their images and the
    referee's socket are there; the containers an earlier run of this tournament left behind
    are removed (how many is returned). A RuntimeError says what is missing. Without image bots
    nothing is asked of Docker, so its SDK (an extra) need not be installed."""
    images = [(bot.name, bot.image) for bot in bots if bot.image is not None]
    if not images:
        return 0
    if socket is None or len(replicas) > 1:
        raise RuntimeError(
            f"bot {images[0][0]} runs in a container, which reaches one referee through its Unix socket: "
            + ("play on one referee" if len(replicas) > 1 else "give --unix-socket with --server")
        )
    with contextlib.closing(engine()) as client:
        import docker  # engine() found it

        for name, image in images:
            try:
                client.images.get(image)
            except docker.errors.ImageNotFound:
                raise RuntimeError(
                    f"bot {name}: image {image} is not on the Docker engine; build or pull it first"
                ) from None
        return _remove(client, label)


def reap(label: str) -> int:
    """Remove every container of this tournament run still there; how many."""
    try:
        client = engine()
    except RuntimeError:
        return 0
    with contextlib.closing(client):
        return _remove(client, label)


def _remove(client: docker.DockerClient, label: str) -> int:
    import docker

    removed = 0
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}={label}"}):
        with contextlib.suppress(docker.errors.NotFound):  # it was removed meanwhile
            container.remove(force=True)
            removed += 1
    return removed


def main(argv: Sequence[str]) -> int:
    """Run one bot's container until it ends or this process is asked to stop, its output on
    stdout; the container's exit code (125: it could not be started)."""
    parser = argparse.ArgumentParser(prog="python -m croupier.clients.isolation.containers")
    for option in ("--name", "--image", "--socket", "--label", "--memory", "--tmp"):
        parser.add_argument(option, required=True)
    parser.add_argument("--cpus", type=float, required=True)
    parser.add_argument("--pids", type=int, required=True)
    parser.add_argument("command", nargs="*", help="the bot's command in the image (its CMD by default)")
    args = parser.parse_args(argv)
    limits = Sandbox(memory=args.memory, cpus=args.cpus, pids=args.pids, tmp=args.tmp)
    import docker

    try:
        client = engine()
    except RuntimeError as exc:
        print(f"cannot start the container: {exc}", flush=True)
        return 125
    stopping = threading.Event()
    started: list[Container] = []

    def stop() -> None:
        for container in started:
            with contextlib.suppress(docker.errors.DockerException):
                container.stop(timeout=STOP_SECONDS)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()
        threading.Thread(target=stop, daemon=True).start()  # the main thread is reading the logs

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    options = run_options(args.name, limits, Path(args.socket), args.label, os.environ)
    try:
        if _runs_as_root(client.images.get(args.image).attrs["Config"].get("User") or ""):
            options["user"] = NOBODY
        started.append(client.containers.run(args.image, args.command or None, **options))
    except docker.errors.DockerException as exc:
        print(f"cannot start the container of image {args.image}: {exc}", flush=True)
        return 125
    if stopping.is_set():  # asked while it was being created
        stop()
    try:
        return _follow(started[0], limits, stopping)
    except docker.errors.DockerException as exc:
        print(f"lost the container: {exc}", flush=True)
        return 125
    finally:
        with contextlib.suppress(docker.errors.DockerException):
            started[0].remove(force=True)


def _follow(container: Container, limits: Sandbox, stopping: threading.Event) -> int:
    """Copy the container's output to stdout until it ends; its exit code, and why it ended."""
    for chunk in container.logs(stream=True, follow=True):
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
    code = int(container.wait()["StatusCode"])
    container.reload()
    if not stopping.is_set():
        print(f"--- {_ended(container.attrs['State'], code, limits)}", flush=True)
    return code


def _runs_as_root(user: str) -> bool:
    """Whether an image's USER (name or uid, with an optional group) is root."""
    return user.partition(":")[0] in ("", "root", "0")


def _ended(state: Mapping[str, Any], code: int, limits: Sandbox) -> str:
    """Why a container ended, as its log's last line says it."""
    if state.get("OOMKilled"):
        return f"the bot was killed: it used more than its memory limit ({limits.memory})"
    if code > 128:
        return f"the bot was killed by signal {code - 128}"
    return f"the bot's container exited with code {code}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
