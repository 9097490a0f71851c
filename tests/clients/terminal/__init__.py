"""A real terminal for the spectator's tests: a tmux session on a private socket, read like a screen."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.toolchains import need

REPO = Path(__file__).resolve().parents[3]
WAIT = 60.0
"""Seconds before giving up on a screen: a guard against hangs, never a timing check."""


class Terminal:
    """``command`` running in a tmux pane of ``width`` x ``height``; it stays on screen after it exits."""

    def __init__(self, command: Sequence[str], width: int = 110, height: int = 50) -> None:
        need("tmux", "the spectator's terminal tests need it")
        self.socket = f"croupier-test-{uuid.uuid4().hex[:8]}"
        self.name = "spectator"
        shell = f'{shlex.join(command)}; echo "[exited with $?]"; sleep 600'
        self._tmux(
            "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), "-c", str(REPO), shell
        )

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return result.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def wait_for(self, check: Callable[[str], bool], what: str) -> str:
        """The first screen for which ``check`` holds."""
        deadline = time.monotonic() + WAIT
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {what}; it shows:\n{screen}")
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def croupier(*args: str) -> list[str]:
    return [sys.executable, "-m", "croupier.clients.cli", *args]
