"""The whole machine's decisions per second with ``croupier serve --workers N``, N = 1 .. cores.

Usage: python -m bench.workers_throughput [--workers 1,2] [--matches 64] [--seconds S] [--runs N]
                                          [--game chinese_ten] [--layout bots|seats]
                                          [--stream batching|"protocol 1"] [--no-ceiling]

For each N, a fresh ``croupier serve --workers N`` (journals on disk, metrics off),
and one load process per worker keeping ``--matches`` matches running on it with
bench/referee_throughput.py's trivial bots (index 0 at once, over the real bot
stream). Every load process measures the same wall-clock window; their decisions
are summed. The bots run on the same machine, as a tournament's do, so the figure
is what the machine does with its bots on it; the per-worker figure beside it is
the per-core one when N is the core count. Levels alternate within each run, and
the load average is printed with every line: the machine may be shared.

Each run also measures bench/grpc_ceiling.py's bare ping-pong with as many
streams as the workers' matches together (its server and client one process
each, so it too has the machine's cores), and prints the machine's decisions/s
as a fraction of it: issue 21's "per machine" figure beside the per-core one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from bench import grpc_ceiling
from bench.harness import Server, cpu_seconds, machine, python
from bench.referee_throughput import ADMIN_TOKEN, OPTIONS, TrivialBots, Window

SERVING = re.compile(r"worker (\d+) \(pid (\d+)\) serving on (\S+?)(?:,|$)", re.MULTILINE)
RAMP_SECONDS = 4.0
"""Default seconds from starting the load processes to the window (``--ramp``): every match under
way on every worker first."""


@dataclass
class Result:
    workers: int
    decisions: int
    seconds: float
    server_cpu: float
    bots_cpu: float

    @property
    def per_second(self) -> float:
        return self.decisions / self.seconds


class Workers:
    """A ``croupier serve --workers N`` subprocess; its workers' (pid, address)."""

    def __init__(self, count: int, data: Path) -> None:
        argv = python(
            "-m", "croupier.server.cli", "--workers", str(count), "--address", "127.0.0.1:0",
            "--data", str(data), "--admin-token", ADMIN_TOKEN, "--metrics-address", "off",
        )  # fmt: skip
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        self.workers: list[tuple[int, str]] = []
        for line in self.process.stdout:
            found = SERVING.search(line)
            if found:
                self.workers.append((int(found.group(2)), found.group(3)))
            if "spreads over them" in line:
                return
        raise RuntimeError(f"croupier serve --workers {count} exited before listening")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


def measure(count: int, args: argparse.Namespace) -> Result:
    with tempfile.TemporaryDirectory(prefix="croupier-bench-") as data:
        workers = Workers(count, Path(data))
        try:
            start = time.time() + args.ramp
            loads = [
                subprocess.Popen(_load_argv(address, start, args), stdout=subprocess.PIPE, text=True)
                for _, address in workers.workers
            ]
            time.sleep(max(0.0, start - time.time()))
            cpu = sum(cpu_seconds(pid) for pid, _ in workers.workers)
            time.sleep(args.seconds)
            server_cpu = sum(cpu_seconds(pid) for pid, _ in workers.workers) - cpu
            figures = [json.loads(load.communicate(timeout=120)[0]) for load in loads]
        finally:
            workers.stop()
    late = [f for f in figures if f["late"]]
    if late:
        raise RuntimeError(f"{len(late)} load processes were not under way by the window: raise --ramp")
    seconds = statistics.mean(f["seconds"] for f in figures)
    bots_cpu = sum(f["cpu"] for f in figures)
    return Result(count, sum(f["decisions"] for f in figures), seconds, server_cpu, bots_cpu)


def _load_argv(address: str, start: float, args: argparse.Namespace) -> list[str]:
    return python(
        "-m", "bench.workers_throughput", "--load", address, "--at", repr(start),
        "--matches", str(args.matches), "--seconds", str(args.seconds),
        "--game", args.game, "--players", str(args.players), "--layout", args.layout,
        "--stream", args.stream,
    )  # fmt: skip


async def load(args: argparse.Namespace) -> None:
    """One load process: ``--matches`` matches on the worker at ``--load``, measured from ``--at``."""
    async with grpc.aio.insecure_channel(args.load) as channel:
        loop = asyncio.get_running_loop()
        far = loop.time() + 3600
        window = Window(start=far, stop=far + args.seconds)
        bots = TrivialBots(
            channel, args.game, args.players, args.matches, args.layout, window, OPTIONS[args.stream]
        )
        runner = asyncio.create_task(bots.run())
        await asyncio.wait_for(bots.all_started.wait(), 120)
        late = time.time() > args.at
        await asyncio.sleep(max(0.0, args.at - time.time()))
        bots.measure_from_now(args.seconds)
        cpu = time.process_time()
        await asyncio.sleep(args.seconds)
        cpu = time.process_time() - cpu
        await runner
        if bots.errors:
            raise RuntimeError(f"{len(bots.errors)} errors, the first: {bots.errors[0]}")
        seconds = window.stop - window.start
        print(json.dumps({"decisions": window.decisions, "seconds": seconds, "cpu": cpu, "late": late}))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = len(os.sched_getaffinity(0))
    parser.add_argument("--workers", default=",".join(str(n) for n in range(1, cores + 1)))
    parser.add_argument(
        "--matches", type=int, default=64, help="matches kept running per worker (default 64)"
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time per run (default 5)")
    parser.add_argument("--runs", type=int, default=3, help="runs per level, levels alternating (default 3)")
    parser.add_argument("--game", default="chinese_ten")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--layout", choices=("bots", "seats"), default="bots")
    parser.add_argument(
        "--stream",
        choices=list(OPTIONS),
        default="batching",
        help="the bots' stream options (default batching)",
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=RAMP_SECONDS,
        help=f"seconds for every match to start before the window (default {RAMP_SECONDS:g})",
    )
    parser.add_argument(
        "--no-ceiling", dest="ceiling", action="store_false", help="skip the bare ping-pong ceiling"
    )
    parser.add_argument("--load", help=argparse.SUPPRESS)  # a load process: the worker's address
    parser.add_argument("--at", type=float, help=argparse.SUPPRESS)  # its window's start (time.time())
    return parser.parse_args()


def main() -> None:
    args = arguments()
    if args.load:
        asyncio.run(load(args))
        return
    asyncio.run(compare(args))


async def compare(args: argparse.Namespace) -> None:
    """Every level in turn, each beside the ceiling; one event loop (grpc.aio keeps its poller on the
    first loop it meets), the referee's own measuring in a thread."""
    levels = [int(n) for n in args.workers.split(",")]
    print(machine())
    print(
        f"{args.game}, {args.players} players, layout {args.layout}, stream {args.stream}, "
        f"{args.matches} matches per worker, one load process per worker; {args.seconds:g} s per run, "
        f"{args.runs} runs, levels alternating"
    )
    print(
        f"{'workers':>7} {'decisions/s':>11} {'per worker':>10} {'srv µs/dec':>10} {'bots µs/dec':>11}"
        f" {'ceiling/s':>10} {'ratio':>6} {'load average':>18}"
    )
    results: dict[int, list[Result]] = {n: [] for n in levels}
    ratios: dict[int, list[float]] = {n: [] for n in levels}
    with contextlib.ExitStack() as stack:
        ceiling = None
        if args.ceiling:
            ceiling = stack.enter_context(
                Server(python("-m", "bench.grpc_ceiling", "--serve", "127.0.0.1:0"))
            )
        for _ in range(args.runs):
            for count in levels:
                result = await asyncio.to_thread(measure, count, args)
                results[count].append(result)
                bare = f"{'':>10} {'':>6}"
                if ceiling is not None:
                    bare_load = grpc_ceiling.load(
                        ceiling.port, count * args.matches, args.seconds, ceiling.pid
                    )
                    rate = (await bare_load).per_second
                    ratios[count].append(result.per_second / rate)
                    bare = f"{rate:>10,.0f} {result.per_second / rate:>6.2f}"
                load_average = ", ".join(f"{x:.2f}" for x in os.getloadavg())
                print(
                    f"{count:>7} {result.per_second:>11,.0f} {result.per_second / count:>10,.0f}"
                    f" {result.server_cpu / max(1, result.decisions) * 1e6:>10,.1f}"
                    f" {result.bots_cpu / max(1, result.decisions) * 1e6:>11,.1f} {bare} {load_average:>18}",
                    flush=True,
                )
    base = statistics.median(r.per_second for r in results[levels[0]])
    for count in levels:
        median = statistics.median(r.per_second for r in results[count])
        against = ""
        if values := ratios[count]:
            against = (
                f"; {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f}) of the bare "
                f"ceiling at {count * args.matches} streams"
            )
        print(
            f"{count} workers: median {median:,.0f} decisions/s for the machine, {median / count:,.0f} per "
            f"worker; {median / base:.2f}x {levels[0]} worker{'s' if levels[0] > 1 else ''}{against}",
            flush=True,
        )


if __name__ == "__main__":
    main()
