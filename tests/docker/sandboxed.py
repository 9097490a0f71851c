"""Bots that attack their sandbox, for the container tests: each plays at random, but first,
at every decision, tries what a sandboxed bot must not do. Copied into a bot image built FROM
croupier's (test_sandbox.py), run as ``croupier bot --strategy sandboxed:NetworkBot``.

A refused attempt raises out of ``choose``, as it would in a careless or hostile bot: the SDK
logs it, the decision times out and the seat is forfeited.
"""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path
from typing import Any

from croupier.clients.sdk import Bot

TARGET = os.environ.get("CROUPIER_TEST_TARGET", "")
"""HOST:PORT of a listener on the test's machine (the Docker bridge's side): a bot that reached
it would be a bot with a network."""


class NetworkBot(Bot):
    """Opens a TCP connection to the test's listener."""

    def choose(self, view: Any, legal: list[Any]) -> int:
        host, _, port = TARGET.rpartition(":")
        socket.create_connection((host, int(port)), timeout=2).close()
        return random.randrange(len(legal))


class WriterBot(Bot):
    """Writes outside /tmp (which it may use): the image's files, its home, the socket's folder,
    /dev; its image claims root (test_sandbox.py), which the runner does not grant."""

    def choose(self, view: Any, legal: list[Any]) -> int:
        Path("/tmp/allowed").write_text("scratch space is fine")
        paths = ("/data/escaped", "/etc/escaped", "/etc/hosts", "/run/croupier/escaped", "/dev/escaped")
        for path in (*paths, "/dev/shm/escaped", "/proc/sys/kernel/hostname"):
            try:
                Path(path).write_text("out of the box")
            except OSError as exc:
                print(f"writing {path}: {exc}", flush=True)
            else:
                print(f"WROTE {path}", flush=True)
        raise PermissionError("nowhere to write but /tmp")


class ForkBot(Bot):
    """A fork bomb: every process forks for ever, ignoring refusals."""

    def choose(self, view: Any, legal: list[Any]) -> int:
        said = False
        while True:
            try:
                os.fork()
            except OSError as exc:
                if not said:
                    print(f"fork refused: {exc}", flush=True)
                    said = True
                time.sleep(0.01)


class HogBot(Bot):
    """Takes memory, a touched 16 MiB at a time, without end."""

    hoard: list[bytes] = []  # noqa: RUF012  (grows until the kernel kills the bot)

    def choose(self, view: Any, legal: list[Any]) -> int:
        while True:
            self.hoard.append(b"\1" * (16 << 20))
