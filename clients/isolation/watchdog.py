"""Run a bot's command and end it when the tournament runner goes away.

Usage: ``python -m croupier.clients.isolation.watchdog COMMAND [ARG ...]``. The runner
holds the write end of this process's stdin; when the runner exits for any
reason (even SIGKILL), stdin reaches end of file and the bot is stopped, so
an interrupted tournament leaves no bot behind; and should this process itself
be killed (the runner does so when it does not end in time), the kernel kills the
command with it. Only the standard library is imported: it starts in milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from types import FrameType

STOP_GRACE_SECONDS = 3.0
PR_SET_PDEATHSIG = 1


def _die_with(watchdog: int) -> None:
    """In the command's process before it starts: SIGKILL when this watchdog dies, however; and
    no start at all if it died already (killed while starting the command: the request would
    come too late to be kept)."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != watchdog:
        os._exit(1)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m croupier.clients.isolation.watchdog COMMAND [ARG ...]", file=sys.stderr)
        return 2
    try:
        # a process group of its own: a command run through a shell (sh -c "python bot.py") is
        # stopped with the shell, which passes no signal on to its children
        watchdog = os.getpid()
        bot = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, process_group=0, preexec_fn=lambda: _die_with(watchdog)
        )
    except OSError as exc:
        print(f"cannot start {argv[0]!r}: {exc}", file=sys.stderr)
        return 127

    def signal_bot(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):  # every process of the group has ended
            os.killpg(bot.pid, signum)

    def stop() -> None:
        """Ask the bot to end, and make sure it does. The main thread's wait() reaps it:
        waiting here too would queue behind that wait's lock."""
        if bot.poll() is None:
            signal_bot(signal.SIGTERM)
            # only if it ignores the request
            killer = threading.Timer(STOP_GRACE_SECONDS, signal_bot, [signal.SIGKILL])
            killer.daemon = True
            killer.start()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def watch_runner() -> None:
        # os.read, not sys.stdin: an unbuffered read holds no lock that would block our exit
        while os.read(0, 4096):
            pass
        stop()  # end of file: the runner is gone

    threading.Thread(target=watch_runner, daemon=True).start()
    code = bot.wait()
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
