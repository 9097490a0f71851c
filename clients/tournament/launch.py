"""Launching the tournament's bots and keeping them running.

Each launched bot runs under ``croupier.clients.isolation.watchdog`` in its own session:
Ctrl-C in the terminal reaches only the runner (which may want to finish the
matches in progress), and the bot ends whenever the runner ends, even killed.
A bot that exits while the tournament goes on is restarted with a growing
delay; its seats in running matches are taken back on reconnection or
forfeited by the referee after the grace time. Output goes to a log file.

What is launched is an ``Instance``: a bot, for one rotation of every set or
for all of them, on one replica. Each instance has its own bot id, token,
process and log, so one process never plays two rotations of one deal when
the tournament asks for a process per rotation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import string
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PLACEHOLDERS = ("server", "name")
"""No {token}: a command line is public (ps); the token is in the bot's environment."""
TOKEN_IN_ARGV = (
    "{token} would put the bot's token on its command line, which every user of the machine "
    "reads (ps): the bot is given it as $CROUPIER_TOKEN"
)
PRIVATE = ("CROUPIER_ADMIN_TOKEN",)
"""The runner's own settings a bot is not given."""
FIRST_DELAY, MAX_DELAY = 0.5, 10.0
STABLE_SECONDS = 30.0
"""A bot that ran this long before exiting is restarted without delay growth."""


def expand(command: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """The command with ``{server}`` and ``{name}`` filled in."""
    out = []
    for part in command:
        for _, field, _, _ in string.Formatter().parse(part):
            if field == "token":
                raise ValueError(TOKEN_IN_ARGV)
            if field is not None and field not in PLACEHOLDERS:
                raise ValueError(
                    f"unknown placeholder {{{field}}} in {part!r}; known: "
                    + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                )
        out.append(part.format_map(values))
    return out


def bot_environment(name: str, server: str, token: str) -> dict[str, str]:
    """The runner's environment but its admin token, the bot's settings, and this Python's
    scripts first on PATH (so ``croupier`` and ``python`` in a command are the ones the runner
    runs with)."""
    env = {key: value for key, value in os.environ.items() if key not in PRIVATE}
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([scripts, env.get("PATH", "")])
    env.update(CROUPIER_SERVER=server, CROUPIER_TOKEN=token, CROUPIER_BOT_NAME=name)
    return env


@dataclass(frozen=True, slots=True)
class Instance:
    """One bot as the referee knows it and the runner launches it: the bot, and the rotation of
    every set it plays (None: every rotation)."""

    bot: str
    rotation: int | None = None

    @property
    def label(self) -> str:
        """Its name on the referee and in notes: NAME, or NAME#ROTATION."""
        return self.bot if self.rotation is None else f"{self.bot}#{self.rotation}"

    def process(
        self,
        command: Sequence[str],
        server: str,
        token: str,
        logs: Path,
        notify: Callable[[str], None],
        replica: str | None = None,
        wrap: Callable[[list[str]], list[str]] | None = None,
    ) -> BotProcess:
        """Its process (not started) dialling ``server``, its placeholders filled in and the
        result passed through ``wrap`` (the container launcher's, for a bot given as an image);
        ``replica``: one of several replicas, named in its label and log."""
        argv = expand(command, {"server": server, "name": self.bot})
        if wrap is not None:
            argv = wrap(argv)
        name = f"{self.label}@{replica}" if replica else self.label
        log = logs / (re.sub(r"[^\w.@#-]", "_", name) + ".log")  # a replica's name may hold '/' or ':'
        return BotProcess(name, argv, bot_environment(self.bot, server, token), log, notify)


class BotProcess:
    """One launched bot: started, restarted when it exits, stopped at the end."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        notify: Callable[[str], None],
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.log_path = log_path
        self.notify = notify
        self.starts = 0
        self.exits: list[int] = []
        """Exit codes of the runs that ended while the tournament went on."""
        self._process: asyncio.subprocess.Process | None = None
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._supervise(), name=f"bot {self.name}")

    async def _supervise(self) -> None:
        delay = FIRST_DELAY
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        while not self._stopping:
            started = time.monotonic()
            with self.log_path.open("ab") as log:
                log.write(
                    f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(self.argv)}\n".encode()
                )
                log.flush()
                self._process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "croupier.clients.isolation.watchdog",
                    *self.argv,
                    # stdin is never written: its end of file tells the watchdog the runner is gone
                    stdin=asyncio.subprocess.PIPE,
                    stdout=log,
                    stderr=log,
                    env=self.env,
                    start_new_session=True,
                )
            self.starts += 1
            code = await self._process.wait()
            if self._stopping:
                return
            self.exits.append(code)
            if time.monotonic() - started > STABLE_SECONDS:
                delay = FIRST_DELAY
            self.notify(
                f"bot {self.name} exited with code {code}; restarting in {delay:g}s (log: {self.log_path})"
            )
            await asyncio.sleep(delay)
            delay = min(MAX_DELAY, delay * 2)

    def log_tail(self, lines: int = 10) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    async def stop(self) -> None:
        self._stopping = True
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()  # the watchdog stops the bot, then exits
            try:
                await asyncio.wait_for(process.wait(), 5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if process is not None and process.stdin is not None:
            process.stdin.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
