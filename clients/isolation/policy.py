"""Whether a tournament's command bots run isolated: the runner's side of jail.py.

A bot given as a ``command`` is a program on this machine; run as the runner's user it could read
everything the runner and the embedded referee keep (the run's secret in results.db, the live
seeds in ``*.secret``, the admin token, the other bots' logs and environments). As root on
Linux the runner launches each through the jail instead: a user id of its own, no access to the
data directory, no other process's /proc. A tournament file's ``isolation`` says what is wanted:

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


class Jail:
    """Wraps bot commands in the jail, each process with a user id of its own."""

    def __init__(self, hide: Iterable[Path]) -> None:
        self.hide = tuple(str(Path(path).absolute()) for path in hide)
        first = FIRST_UID + secrets.randbelow(UID_BLOCKS) * UID_BLOCK
        self._uids = iter(range(first, first + UID_BLOCK))

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` as the jail runs it, under the next user id of this run's block."""
        uid = next(self._uids, None)
        if uid is None:
            raise ValueError(f"more than {UID_BLOCK} bot processes: the jail has no user id left")
        hides = itertools.chain.from_iterable(("--hide", path) for path in self.hide)
        return [
            sys.executable,
            "-m",
            "croupier.clients.isolation.jail",
            "--uid",
            str(uid),
            *hides,
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


def choose(
    mode: str, hide: Iterable[Path], setting: str = 'isolation = "required"'
) -> tuple[Jail | None, str | None]:
    """The jail command bots are launched in (None: they run as you) and the one line to say
    about it (None: nothing to say). ``setting`` is where "required" was said, for the
    IsolationError when it cannot be had."""
    if mode == "off":
        return None, None
    why: str | None
    if sys.platform != "linux" or os.geteuid() != 0:
        why = "the runner is not root"
        jail = None
    else:
        jail = Jail(hide)
        why = jail.probe()
    if why is None:
        return jail, None
    if mode == "required":
        raise IsolationError(f"{setting}, but bots cannot be isolated here: {why}")
    if jail is None:
        return None, AS_YOU
    return None, f"bots run as you (isolating them failed: {why}): they can read this tournament's secret"
