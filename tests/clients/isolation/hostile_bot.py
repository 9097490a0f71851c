"""A command bot that tries to read what the referee and the runner hide, then plays randomly.

Usage: python hostile_bot.py REFEREE_DATA RUNNER_DATA PIDS_FILE SOCKET [SDK OPTIONS...]

Once, when its first match starts (so a live match's ``.secret`` exists), it makes every attack
of ATTACKS and prints one line per attack to its log: ``ATTACK {"attack": NAME, "got": TEXT}``,
with ``got`` null and ``error`` saying why when the attack failed.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Match, main
from croupier.v1 import admin_pb2, admin_pb2_grpc

ATTACKS = (
    "results.db",
    "a match's .secret",
    "admin-token",
    "another bot's log",
    "the runner's environ",
    "the runner's cmdline",
    "the referee's environ",
    "the referee's cmdline",
    "another bot's environ",
    "admin call on the Unix socket",
    "a token on a command line",
)
REFEREE = DATA = PIDS = SOCKET = Path()
"""Set from the command line."""
found: dict[str, str] = {}


def read(path: str | Path) -> str:
    return Path(path).read_bytes().decode(errors="replace")


def first(pattern: str) -> str:
    matches = glob.glob(pattern)
    if not matches:
        raise LookupError(f"nothing matches {pattern} (or its folder is closed)")
    return matches[0]


def pids() -> dict[str, int]:
    for _ in range(600):
        if PIDS.exists() and PIDS.read_text().endswith("\n"):
            return dict(json.loads(PIDS.read_text()))
        time.sleep(0.1)
    raise TimeoutError(f"no {PIDS}")


def processes() -> dict[int, list[str]]:
    """Every process this bot can see, with its command line."""
    seen = {}
    for entry in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            seen[int(entry.split("/")[2])] = read(entry).split("\0")
        except OSError:
            continue
    return seen


def other_bots_environ() -> str:
    """The token of the other bot of this tournament (the one on the same referee)."""
    server = f"CROUPIER_SERVER={os.environ['CROUPIER_SERVER']}"
    for pid, argv in processes().items():
        if pid != os.getpid() and "random" in argv and "--strategy" in argv:
            try:
                environ = read(f"/proc/{pid}/environ").split("\0")
            except OSError:
                continue
            if server in environ:
                return next(v for v in environ if v.startswith("CROUPIER_TOKEN="))
    raise LookupError("no other bot in sight")


def admin_call() -> str:
    admin = found.get("admin-token", "").strip() or next(
        (v.partition("=")[2] for v in found.get("the runner's environ", "").split("\0")
         if v.startswith("CROUPIER_ADMIN_TOKEN=")),
        os.environ["CROUPIER_TOKEN"],
    )  # fmt: skip
    with grpc.insecure_channel(f"unix:{SOCKET}") as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        reply = stub.ListBots(admin_pb2.ListBotsRequest(), metadata=[("croupier-token", admin)], timeout=10)
    return ", ".join(bot.name for bot in reply.bots)


def token_in_argv() -> str:
    token = os.environ["CROUPIER_TOKEN"]
    holders = [pid for pid, argv in processes().items() if any(token in arg for arg in argv)]
    if not holders:
        raise LookupError(f"none of {len(processes())} command lines in sight holds a token")
    return f"processes {holders}"


def attacks() -> dict[str, Callable[[], str]]:
    known = pids()
    return {
        "results.db": lambda: read(DATA / "results.db")[:15],
        "a match's .secret": lambda: read(first(f"{REFEREE}/matches/*.secret")),
        "admin-token": lambda: read(REFEREE / "admin-token"),
        "another bot's log": lambda: read(first(f"{DATA}/logs/*/random.log")),
        "the runner's environ": lambda: read(f"/proc/{known['runner']}/environ"),
        "the runner's cmdline": lambda: read(f"/proc/{known['runner']}/cmdline"),
        "the referee's environ": lambda: read(f"/proc/{known['referee']}/environ"),
        "the referee's cmdline": lambda: read(f"/proc/{known['referee']}/cmdline"),
        "another bot's environ": other_bots_environ,
        "admin call on the Unix socket": admin_call,
        "a token on a command line": token_in_argv,
    }


class HostileBot(RandomBot):
    def __init__(self, match: Match) -> None:
        super().__init__(match)
        if found:
            return
        for name, attack in attacks().items():
            try:
                found[name] = attack()
            except Exception as exc:  # every way an attack fails is a line of the log
                print("ATTACK", json.dumps({"attack": name, "got": None, "error": repr(exc)}), flush=True)
            else:
                print("ATTACK", json.dumps({"attack": name, "got": found[name][:200]}), flush=True)


if __name__ == "__main__":
    REFEREE, DATA, PIDS, SOCKET = (Path(arg).absolute() for arg in sys.argv[1:5])
    del sys.argv[1:5]
    main(HostileBot)
