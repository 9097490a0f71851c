"""Throughput: the bare gRPC ceiling, one referee against it, and every core with ``--workers``.

Usage: python -m bench.throughput ceiling [--streams 1,64,512] [--relay] [--seconds S] [--runs N]
       python -m bench.throughput referee [--matches 1,64,512] [--layouts seats,bots]
                                          [--modes "protocol 1,batching"] [--latency-matches 64]
       python -m bench.throughput workers [--workers 1,2] [--matches 64] [--layout bots|seats]
                                          [--stream batching|"protocol 1"] [--no-ceiling]

``ceiling``: bench/grpc_ceiling.py's ping-pong (``--relay``: beside it, each Move answered on a
partner stream, as the seat layout's are), round trips per second and the server's CPU per round
trip.

``referee``: a fresh ``croupier serve`` (journals on disk, metrics off) per layout and stream
option under bench/trivial_bots.py's N matches, its decisions per second as a fraction of the
ceiling at N streams measured just before and just after it (their mean); the round trip from a
bot's Move to the match's next DecisionRequest; the referee's CPU per decision. Then real-time
Pair Battle: from a play's sending to the other seat's message showing it, beside the ceiling's
round trip.

``workers``: a fresh ``croupier serve --workers N`` for each N (default 1 .. cores), one load
process per worker keeping ``--matches`` matches on it; every load process measures the same
wall-clock window and the machine's decisions are their sum. The bots share the cores, as a
tournament's do; the ceiling runs at as many streams as the workers' matches together.

Every run prints the machine and its load average first: the machine may be shared.
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
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from bench import grpc_ceiling
from bench.grpc_ceiling import ceiling_server
from bench.harness import Server, cpu_seconds, machine, python, referee_argv, spread
from bench.trivial_bots import OPTIONS, Figures, Load, play

SERVING = re.compile(r"worker (\d+) \(pid (\d+)\) serving on (\S+?)(?:,|$)", re.MULTILINE)
ALL_SERVING = re.compile("spreads over them")
"""``croupier serve --workers``'s line once every worker listens."""


def levels(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


# --- ceiling ---------------------------------------------------------------------------------------


async def ceiling(args: argparse.Namespace) -> None:
    reply, move = grpc_ceiling.decision_sample(), grpc_ceiling.move_sample()
    print(f"ping {move.ByteSize()} B (a Move), pong {reply.ByteSize()} B (a median chinese_ten decision)")
    print(grpc_ceiling.HEADER)
    kinds = ("ping-pong", "relay") if args.relay else ("ping-pong",)
    with ceiling_server() as server:
        for streams in levels(args.streams):
            rates: dict[str, list[float]] = {kind: [] for kind in kinds}
            for _ in range(args.runs):
                for kind in kinds:
                    figures = await grpc_ceiling.load(
                        server.port, streams, args.seconds, server.pid, relay=kind == "relay"
                    )
                    rates[kind].append(figures.per_second)
                    print(grpc_ceiling.row(figures, kind), flush=True)
            for kind, values in rates.items():
                if len(values) > 1:
                    print(
                        f"{'':>7} {kind}: median {spread(values)} round trips/s, "
                        f"stdev {statistics.pstdev(values):,.0f}"
                    )


# --- referee ---------------------------------------------------------------------------------------


async def on_fresh_referee(load: Load, serve_flags: list[str]) -> Figures:
    """A fresh referee (empty data directory) measured under ``load``."""
    with (
        tempfile.TemporaryDirectory(prefix="croupier-bench-") as data,
        Server(referee_argv(Path(data), *serve_flags)) as referee,
    ):
        return await play(f"127.0.0.1:{referee.port}", load, server_pid=referee.pid)


Turn = TypeVar("Turn")


def turns(configurations: Sequence[Turn], runs: int) -> Iterator[Turn | None]:
    """The order ``referee`` measures in: each run the ceiling (None), then every configuration
    followed by the ceiling again, and the whole round once per run (round-robin, not each
    configuration's runs one after another): a configuration's ratio is to the ceilings just
    before and after it, and a change of the machine's load falls on every configuration alike."""
    for _ in range(runs):
        yield None
        for configuration in configurations:
            yield configuration
            yield None


async def referee(args: argparse.Namespace) -> None:
    """Everything on one event loop (grpc.aio keeps its poller on the first loop it meets)."""
    layouts, modes = args.layouts.split(","), args.modes.split(",")
    flags = ["--event-loop", args.event_loop] if args.event_loop else []
    print(
        f"{args.game}, {args.players} players, default options; layouts {', '.join(layouts)}; "
        f"stream options: {', '.join(modes)}; {args.seconds:g} s per run, {args.runs} runs per level, "
        "each referee between two runs of the ceiling (its ratio: to their mean); load average "
        + load_average()
    )
    print(
        f"{'matches':>7} {'layout':>6} {'stream':>10} {'ceiling/s':>10} {'decisions/s':>11} {'ratio':>6}"
        f" {'p50 µs':>8} {'p99 µs':>8} {'ceil p50':>8} {'ceil p99':>8} {'srv µs/dec':>10}"
        f" {'ceil µs/rt':>10} {'client cpu':>10} {'dec B':>6}  load average"
    )
    with ceiling_server() as bare:
        for matches in levels(args.matches):
            ratios: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
            top: grpc_ceiling.Figures | None = None  # the ceiling just before the referee measured
            measured: tuple[str, str, Figures] | None = None  # a referee waiting for the ceiling after it
            for turn in turns([(layout, mode) for layout in layouts for mode in modes], args.runs):
                if turn is not None:
                    layout, mode = turn
                    load = Load(args.game, args.players, matches, layout, args.seconds, mode)
                    measured = (layout, mode, await on_fresh_referee(load, flags))
                    continue
                after = await grpc_ceiling.load(bare.port, matches, args.seconds, bare.pid)
                if measured is not None and top is not None:
                    layout, mode, got = measured
                    ceiling_rate = (top.per_second + after.per_second) / 2
                    ratio = got.per_second / ceiling_rate
                    ratios[(layout, mode)].append(ratio)
                    sizes, trips = got.window.decision_bytes, got.window.round_trips
                    print(
                        f"{matches:>7} {layout:>6} {mode:>10} {ceiling_rate:>10,.0f}"
                        f" {got.per_second:>11,.0f} {ratio:>6.2f}"
                        f" {trips.percentile(50):>8,.0f} {trips.percentile(99):>8,.0f}"
                        f" {top.latencies.percentile(50):>8,.0f} {top.latencies.percentile(99):>8,.0f}"
                        f" {got.server_cpu_us:>10,.1f} {top.server_cpu_us:>10,.1f}"
                        f" {got.client_cpu / got.seconds:>9.0%}"
                        f" {statistics.mean(sizes) if sizes else 0:>6,.0f}  {load_average()}",
                        flush=True,
                    )
                top, measured = after, None
            for (layout, mode), values in ratios.items():
                print(
                    f"{'':>7} {matches} matches, {layout} layout, {mode}: ratio to the ceiling median "
                    f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})",
                    flush=True,
                )
        if args.latency_matches:
            await latency(args, bare, modes, flags)


async def latency(args: argparse.Namespace, bare: Server, modes: list[str], flags: list[str]) -> None:
    """Real-time Pair Battle (two seats a match, seat layout): from a play's sending to another seat's
    message showing it, beside the ceiling's round trip at as many streams, alternating."""
    matches = args.latency_matches
    print(
        f"real-time Pair Battle, 2 players, countdown 0, {matches} matches: play sent -> the opponent's "
        "message showing it (µs)"
    )
    header = ("stream", "p50", "p99", "samples", "ceil p50", "ceil p99", "p99 ratio")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (10, 8, 8, 8, 8, 8, 9), strict=True)))
    for _ in range(args.runs):
        top = await grpc_ceiling.load(bare.port, matches, args.seconds, bare.pid)
        for mode in modes:
            load = Load("pair_battle", 2, matches, "seats", args.seconds, mode, {"countdown_tick": 0.0})
            seen = (await on_fresh_referee(load, flags)).window.latencies
            top_p99 = top.latencies.percentile(99)
            print(
                f"{mode:>10} {seen.percentile(50):>8,.0f} {seen.percentile(99):>8,.0f} {len(seen):>8}"
                f" {top.latencies.percentile(50):>8,.0f} {top_p99:>8,.0f}"
                f" {seen.percentile(99) / top_p99:>9.2f}",
                flush=True,
            )


# --- workers ---------------------------------------------------------------------------------------


def on_workers(count: int, args: argparse.Namespace) -> tuple[int, float, float, float]:
    """A fresh ``croupier serve --workers count`` under one load process per worker: the decisions,
    the window's seconds, the workers' and the bots' CPU seconds over it."""
    with tempfile.TemporaryDirectory(prefix="croupier-bench-") as data:
        argv = referee_argv(Path(data), "--workers", str(count))
        with Server(argv, ready=ALL_SERVING, stop_seconds=60) as serve:
            workers = [(int(m[2]), m[3]) for m in SERVING.finditer("".join(serve.output))]
            start = time.time() + args.ramp
            argvs = [load_argv(address, start, args) for _, address in workers]
            loads = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for argv in argvs]
            time.sleep(max(0.0, start - time.time()))
            before = sum(cpu_seconds(pid) for pid, _ in workers)
            time.sleep(args.seconds)
            server_cpu = sum(cpu_seconds(pid) for pid, _ in workers) - before
            figures = [json.loads(load.communicate(timeout=120)[0]) for load in loads]
    if any(f["late"] for f in figures):
        raise RuntimeError("load processes were not under way by the window: raise --ramp")
    seconds = statistics.mean(f["seconds"] for f in figures)
    return sum(f["decisions"] for f in figures), seconds, server_cpu, sum(f["cpu"] for f in figures)


def load_argv(address: str, start: float, args: argparse.Namespace) -> list[str]:
    return python(
        "-m", "bench.throughput", "load", address, "--at", repr(start),
        "--matches", str(args.matches), "--seconds", str(args.seconds),
        "--game", args.game, "--players", str(args.players), "--layout", args.layout,
        "--stream", args.stream,
    )  # fmt: skip


async def load_process(args: argparse.Namespace) -> None:
    """One workers' load process: its figures as a JSON line."""
    load = Load(args.game, args.players, args.matches, args.layout, args.seconds, args.stream)
    got = await play(args.address, load, at=args.at)
    window = {"decisions": got.window.decisions, "seconds": got.seconds, "cpu": got.client_cpu}
    print(json.dumps({**window, "late": got.late}))


async def workers(args: argparse.Namespace) -> None:
    """Every level in turn, each beside the ceiling; the workers' own measuring in a thread."""
    counts = levels(args.workers)
    print(
        f"{args.game}, {args.players} players, layout {args.layout}, stream {args.stream}, "
        f"{args.matches} matches per worker, one load process per worker; {args.seconds:g} s per run, "
        f"{args.runs} runs, levels alternating"
    )
    print(
        f"{'workers':>7} {'decisions/s':>11} {'per worker':>10} {'srv µs/dec':>10} {'bots µs/dec':>11}"
        f" {'ceiling/s':>10} {'ratio':>6} {'load average':>18}"
    )
    rates: dict[int, list[float]] = {n: [] for n in counts}
    ratios: dict[int, list[float]] = {n: [] for n in counts}
    with contextlib.ExitStack() as stack:
        bare = stack.enter_context(ceiling_server()) if args.ceiling else None
        for _ in range(args.runs):
            for count in counts:
                decisions, seconds, server_cpu, bots_cpu = await asyncio.to_thread(on_workers, count, args)
                rate = decisions / seconds
                rates[count].append(rate)
                against = f"{'':>10} {'':>6}"
                if bare is not None:
                    top = await grpc_ceiling.load(bare.port, count * args.matches, args.seconds, bare.pid)
                    ratios[count].append(rate / top.per_second)
                    against = f"{top.per_second:>10,.0f} {rate / top.per_second:>6.2f}"
                print(
                    f"{count:>7} {rate:>11,.0f} {rate / count:>10,.0f}"
                    f" {server_cpu / max(1, decisions) * 1e6:>10,.1f}"
                    f" {bots_cpu / max(1, decisions) * 1e6:>11,.1f} {against} {load_average():>18}",
                    flush=True,
                )
    base = statistics.median(rates[counts[0]])
    for count in counts:
        median = statistics.median(rates[count])
        against = ""
        if values := ratios[count]:
            against = (
                f"; {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f}) of the bare "
                f"ceiling at {count * args.matches} streams"
            )
        print(
            f"{count} workers: median {median:,.0f} decisions/s for the machine, {median / count:,.0f} per "
            f"worker; {median / base:.2f}x {counts[0]} worker{'s' if counts[0] > 1 else ''}{against}",
            flush=True,
        )


# --- the command line ------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{ceiling,referee,workers}")
    each = {
        "ceiling": commands.add_parser("ceiling", help="the bare grpc.aio ping-pong (and relay)"),
        "referee": commands.add_parser("referee", help="one referee against the ceiling"),
        "workers": commands.add_parser("workers", help="croupier serve --workers N, the whole machine"),
        "load": commands.add_parser("load"),  # a workers' load process
    }
    for name, sub in each.items():
        seconds = 3.0 if name in ("ceiling", "referee") else 5.0
        sub.add_argument(
            "--seconds", type=float, default=seconds, help=f"measured time per run ({seconds:g})"
        )
        if name != "load":
            sub.add_argument("--runs", type=int, default=3, help="runs per level, alternating (3)")
        if name != "ceiling":
            sub.add_argument("--game", default="chinese_ten", help="the game played (chinese_ten)")
            sub.add_argument("--players", type=int, default=2)
    each["ceiling"].add_argument("--streams", default="1,64,512", help="comma-separated concurrency levels")
    each["ceiling"].add_argument(
        "--relay", action="store_true", help="alternate each ping-pong with the relay between paired streams"
    )
    referee = each["referee"]
    referee.add_argument("--matches", default="1,64,512", help="comma-separated concurrency levels")
    referee.add_argument("--layouts", default="seats,bots", help="comma-separated: seats, bots (both)")
    referee.add_argument("--modes", default=",".join(OPTIONS), help=f"stream options: {', '.join(OPTIONS)}")
    referee.add_argument(
        "--latency-matches", type=int, default=64, help="real-time Pair Battle matches (0: none; 64)"
    )
    referee.add_argument("--event-loop", choices=("uvloop", "asyncio"), help="the referee's event loop")
    cores = len(os.sched_getaffinity(0))
    each["workers"].add_argument(
        "--workers",
        default=",".join(str(n) for n in range(1, cores + 1)),
        help="comma-separated counts (1 .. cores)",
    )
    each["workers"].add_argument(
        "--ramp", type=float, default=4.0, help="seconds for every match to start before the window (4)"
    )
    each["workers"].add_argument(
        "--no-ceiling", dest="ceiling", action="store_false", help="skip the bare ping-pong ceiling"
    )
    each["load"].add_argument("address")
    each["load"].add_argument("--at", type=float, required=True)  # the window's start (time.time())
    for name in ("workers", "load"):
        each[name].add_argument("--matches", type=int, default=64, help="matches per worker (64)")
        each[name].add_argument("--layout", choices=("bots", "seats"), default="bots")
        each[name].add_argument("--stream", choices=list(OPTIONS), default="batching")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    if args.command == "load":
        asyncio.run(load_process(args))
        return
    print(machine())
    run = {"ceiling": ceiling, "referee": referee, "workers": workers}[args.command]
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
