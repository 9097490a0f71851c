"""Whether a tournament's command bots run isolated: the runner's side of jail.py.

A bot given as a ``command`` is a program on this machine; run as the runner's user it could read
everything the runner and the embedded referee keep (the run's secret in results.db, the live
seeds in ``*.secret``, the admin token, the other bots' logs and environments). As root on
Linux the runner launches each through the jail instead: a user id of its own, no access to the
data directory, no other process's /proc, no network but the referee's Unix socket, limits on
its processes, memory and CPU (a tournament file's [sandbox], as a container's). A tournament
file's ``isolation`` says what is wanted:

- "auto" (the default): isolate where the runner can, and say in one line where it cannot;
- "required": refuse to start where it cannot;
- "off": bots run as the runner's user (bots the organiser trusts).

Whether it can is tried, not guessed: a probe bot is started in the jail and must import the SDK
from this Python in the runner's working directory, as every bundled bot does.
"""

from __future__ import annotations

import itertools
import os
import secrets
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from croupier.clients.isolation import quotas
from croupier.clients.isolation.limits import Sandbox, size_bytes

MODES = ("auto", "required", "off")
FIRST_UID = 0x70000000
"""Bots' user ids start here: a range systemd and subordinate-id files leave unused."""
UID_BLOCKS = 1 << 14
UID_BLOCK = 1024
"""Each run draws a block of this many ids of its own: two runs on one machine share none."""
PROBE = "import os, croupier.clients.sdk; os.listdir('.')"
PROBE_SECONDS = 60.0
AS_YOU = (
    "bots run as you: they can read this tournament's secret; "
    "run them in containers, or as root to isolate them"
)


class IsolationError(Exception):
    """Isolation is required and cannot be had: the message says why, in one line."""


def limits_of(sandbox: Sandbox | None) -> quotas.Limits:
    """A tournament file's [sandbox] limits as the jail applies them (None: the defaults)."""
    if sandbox is None:
        return quotas.Limits()
    memory = size_bytes(sandbox.memory)
    assert memory is not None  # config.py checked it
    return quotas.Limits(pids=sandbox.pids, memory=memory, cpus=sandbox.cpus)


class Jail:
    """Wraps bot commands in the jail, each process with a user id of its own; ``socket`` is the
    referee's Unix socket, the one way out of the jail."""

    def __init__(self, hide: Iterable[Path], socket: Path | None = None) -> None:
        self.hide = tuple(str(Path(path).absolute()) for path in hide)
        self.socket = socket
        first = FIRST_UID + secrets.randbelow(UID_BLOCKS) * UID_BLOCK
        self._uids = iter(range(first, first + UID_BLOCK))
        self.cgroup, self.why_no_cgroup = quotas.cgroup_v2()

    @property
    def server(self) -> str | None:
        """The referee's address as a jailed bot dials it (None: no socket, no way out)."""
        return None if self.socket is None else f"unix:/run/croupier/{self.socket.name}"

    def describe(self, share: quotas.Limits) -> str:
        """What the run says about its bots' limits."""
        return quotas.describe(share, self.cgroup, self.why_no_cgroup)

    def wrap(self, argv: list[str], share: quotas.Limits | None = None) -> list[str]:
        """``argv`` as the jail runs it, under the next user id of this run's block, with
        ``share`` of the machine (None: the Docker sandbox's defaults)."""
        uid = next(self._uids, None)
        if uid is None:
            raise ValueError(f"more than {UID_BLOCK} bot processes: the jail has no user id left")
        hides = itertools.chain.from_iterable(("--hide", path) for path in self.hide)
        socket = ["--socket", str(self.socket.absolute())] if self.socket is not None else []
        cgroup = ["--cgroup", str(self.cgroup)] if self.cgroup is not None else []
        return [
            sys.executable,
            "-m",
            "croupier.clients.isolation.jail",
            "--uid",
            str(uid),
            *hides,
            *socket,
            *(share or quotas.Limits()).argv(),
            *cgroup,
            "--",
            *argv,
        ]

    def probe(self) -> str | None:
        """Why a bot cannot be isolated here (None: it can), from a probe bot's attempt."""
        try:
            done = subprocess.run(
                self.wrap([sys.executable, "-c", PROBE]),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=PROBE_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        if done.returncode == 0:
            return None
        said = [line for line in done.stderr.splitlines() if line.strip()]
        return said[-1] if said else f"the probe bot exited with code {done.returncode}"


def not_root() -> bool:
    return sys.platform != "linux" or os.geteuid() != 0


def require(mode: str, setting: str) -> None:
    """Before anything starts: the IsolationError of a "required" mode the runner cannot have for
    want of root (what else it needs is tried once the referee is up: ``choose``)."""
    if mode == "required" and not_root():
        raise IsolationError(f"{setting}, but bots cannot be isolated here: the runner is not root")


def choose(
    mode: str,
    hide: Iterable[Path],
    setting: str = 'isolation = "required"',
    socket: Path | None = None,
    share: quotas.Limits | None = None,
) -> tuple[Jail | None, str | None]:
    """The jail command bots are launched in (None: they run as you) and the one line to say
    about it (None: nothing to say; with a jail, its limits, ``share`` the first bot's).
    ``setting`` is where "required" was said, for the IsolationError when it cannot be had;
    ``socket`` the referee's Unix socket, the jailed bots' way to it."""
    if mode == "off":
        return None, None
    why: str | None
    if not_root():
        why = "the runner is not root"
        jail = None
    else:
        jail = Jail(hide, socket)
        why = jail.probe()
    if why is None and socket is None:
        why = "the referee has no Unix socket, a jailed bot's only way to it (croupier serve --unix-socket)"
    if why is None:
        assert jail is not None
        return jail, jail.describe(share or quotas.Limits())
    if mode == "required":
        raise IsolationError(f"{setting}, but bots cannot be isolated here: {why}")
    if jail is None:
        return None, AS_YOU
    return None, f"bots run as you (isolating them failed: {why}): they can read this tournament's secret"
