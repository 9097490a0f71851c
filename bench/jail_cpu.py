"""A CPU-hungry jailed bot against a canary match: does the jail keep the machine's share for others?

Usage (as root): python -m bench.jail_cpu [--seconds S] [--rounds N]

A referee runs in its own process (``croupier serve``); two prompt bots in this process play a
canary match on it (Spoil Five for two, index 0 at once: anonymous_load.py's). Beside it, one of:

- quiet: nothing;
- jailed hog: a command bot in the jail (isolation.py, the default limits: 1 CPU) that starts 4
  processes spinning for the whole load;
- free hog: the same 4 processes as the runner's user, unjailed (issue #41's case: they doubled
  a canary's p99).

Each load runs ``--rounds`` times, interleaved (quiet, jailed, free, quiet, ...), so a change in the
machine's load meets them all. It prints, for each, the canary's decisions/s and its round trip from
a bot's Move to the next DecisionRequest (p50, p99: the median over the rounds, and their range),
the p99 against quiet's, and the machine's load average before each round.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.anonymous_load import own_connection, play
from bench.harness import ADMIN, Latencies, Server, create_request, machine, referee_argv
from croupier.clients.isolation.policy import Jail
from croupier.clients.isolation.quotas import Limits
from croupier.v1 import admin_pb2, admin_pb2_grpc, match_pb2

LOADS = ("quiet", "jailed hog", "free hog")
HOG = "import os, time\nfor _ in range(2):\n    os.fork()\nwhile True:\n    pass\n"
"""Four processes spinning (two forks of two): more than the machine's 2 cores."""


def start_hog(load: str) -> subprocess.Popen[bytes] | None:
    if load == "quiet":
        return None
    argv = [sys.executable, "-c", HOG]
    if load == "jailed hog":
        argv = Jail([]).wrap(argv)
    return subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL)


def stop_hog(hog: subprocess.Popen[bytes] | None) -> None:
    if hog is not None:
        os.killpg(hog.pid, 9)
        hog.wait()


async def canary(port: int, seconds: float, load: str) -> tuple[float, float, float]:
    """The canary match under ``load``: its decisions/s, round trip p50 and p99 in ms."""
    async with own_connection(port) as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        seats = [admin_pb2.SeatSpec(name="a"), admin_pb2.SeatSpec(name="b")]
        request = create_request("spoil_five", seats, seed=5, deals=1000)
        request.clocks.CopyFrom(match_pb2.Clocks(decision_ms=250, bank_ms=0, max_timeouts=1000))
        live = await admin.CreateMatch(request, metadata=ADMIN)
        hog = start_hog(load)
        try:
            await asyncio.sleep(1.0)  # the hog is spinning
            latencies, counts = Latencies(), Counter[str]()
            started = time.monotonic()
            await play(channel, list(live.seat_tokens), seconds, latencies, counts)
            elapsed = time.monotonic() - started
        finally:
            stop_hog(hog)
        await admin.CancelMatch(
            admin_pb2.CancelMatchRequest(match_id=live.match.match_id, reason="bench"), metadata=ADMIN
        )
    return counts["decisions"] / elapsed, latencies.percentile(50) / 1000, latencies.percentile(99) / 1000


def spread(values: list[float], digits: int) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


async def main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("the jail needs root: run this as root", file=sys.stderr)
        return 2
    print(machine())
    jail = Jail([])
    print(f"jailed hog's {jail.describe(Limits())}")
    rows: dict[str, list[tuple[float, float, float]]] = {load: [] for load in LOADS}
    loads: dict[str, list[float]] = {load: [] for load in LOADS}
    with tempfile.TemporaryDirectory() as data, Server(referee_argv(Path(data))) as referee:
        for _ in range(args.rounds):
            for load in LOADS:
                loads[load].append(os.getloadavg()[0])
                rows[load].append(await canary(referee.port, args.seconds, load))
    quiet_p99 = statistics.median(row[2] for row in rows["quiet"])
    print(f"{args.rounds} rounds of {args.seconds:g} s per load, interleaved")
    print("| beside the canary | decisions/s | round trip p50 ms | p99 ms | p99 / quiet's | load average |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for load, measured in rows.items():
        p99 = statistics.median(row[2] for row in measured)
        print(
            f"| {load} | {spread([r[0] for r in measured], 0)} | {spread([r[1] for r in measured], 2)} "
            f"| {spread([r[2] for r in measured], 2)} | {p99 / quiet_p99:.2f} "
            f"| {', '.join(f'{x:.2f}' for x in loads[load])} |"
        )
    return 0


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="each round's canary (default: %(default)s)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every load (default: %(default)s)")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse())))
