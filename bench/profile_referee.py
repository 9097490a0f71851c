"""Where the referee's time goes per decision: cProfile of a referee under trivial bots.

Usage: python -m bench.profile_referee [--matches 64] [--seconds 5] [--game chinese_ten] [--top 30]
                                       [--layout seats|bots] [--stream "protocol 1"|batching]

Runs ``croupier serve`` under cProfile in its own process, keeps N matches of
trivial bots going (as bench/referee_throughput.py does), stops the referee
gracefully so the profile is written, and prints the functions by own time,
then the hot path's stages (decode, engine, views, journal, encode, gRPC) as
microseconds per decision. cProfile slows Python code about twofold: read
the stages as shares, not as absolute costs.
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import tempfile
from pathlib import Path

from bench.harness import Server, machine
from bench.referee_throughput import OPTIONS, TrivialBots, Window, referee_argv

UPB_MESSAGE = "google._upb._message.Message"
STAGES: dict[str, tuple[str, str]] = {
    # stage: (file suffix, function name) whose cumulative time is the stage's
    "decode a Move (gRPC parser)": ("wire/errors.py", "parse"),
    "route a Move to its match": ("server/bots.py", "_read"),
    "match job: check + apply + journal + result": ("server/moves.py", "_play"),
    "engine: apply": ("", "apply"),
    "engine: legal_actions": ("", "legal_actions"),
    "engine: view": ("", "view"),
    "convert: view -> bytes": ("wire/convert.py", "view_bytes"),
    "convert: action -> bytes": ("wire/convert.py", "action_bytes"),
    "convert: event -> bytes": ("wire/convert.py", "event_bytes"),
    "journal: write": ("server/journal.py", "write"),
    "publish: decisions and views": ("server/match.py", "_publish"),
    "build DecisionRequest": ("server/match_state.py", "_decision_message"),
    "build ViewUpdate": ("server/match_state.py", "_view_message"),
    "build ActionResult": ("server/match_state.py", "_result"),
    "metrics": ("prometheus_client/metrics.py", "inc"),
    "send to the stream's outbox": ("server/session.py", "send"),
    "encode (SerializeToString)": ("~", f"<method 'SerializeToString' of '{UPB_MESSAGE}' objects>"),
    "write a Batch": ("wire/framing.py", "batch"),
}


def stage_costs(stats: pstats.Stats, decisions: int) -> list[tuple[str, float]]:
    """Cumulative µs per decision of each stage's function (summed over the games' modules for engine)."""
    table = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table in .stats
    out = []
    for stage, (suffix, name) in STAGES.items():
        total = 0.0
        for (file, _line, function), (_cc, _nc, _tt, ct, _callers) in table.items():
            if function != name:
                continue
            if suffix == "" and "engine/games/" not in file:
                continue
            if suffix not in ("", "~") and not file.endswith(suffix):
                continue
            total += ct
        out.append((stage, total / max(1, decisions) * 1e6))
    return out


async def drive(port: int, game: str, matches: int, seconds: float, layout: str, stream: str) -> int:
    import grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        loop = asyncio.get_running_loop()
        far = loop.time() + 3600
        window = Window(start=far, stop=far + seconds)
        bots = TrivialBots(channel, game, 2, matches, layout, window, OPTIONS[stream])
        runner = asyncio.create_task(bots.run())
        await asyncio.wait_for(bots.all_started.wait(), 120)
        bots.measure_from_now(seconds)
        await runner
        return window.decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--game", default="chinese_ten")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--layout", choices=("seats", "bots"), default="seats")
    parser.add_argument("--stream", choices=list(OPTIONS), default="protocol 1", help="stream options")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(prefix="croupier-profile-") as tmp:
        out = Path(tmp) / "referee.prof"
        argv = referee_argv(Path(tmp) / "data")
        argv[1:3] = ["-m", "cProfile", "-o", str(out), "-m", "croupier.server.cli"]
        with Server(argv) as referee:
            asyncio.run(drive(referee.port, args.game, args.matches, args.seconds, args.layout, args.stream))
        # the referee stops on SIGTERM and cProfile writes the file as it exits
        stats = pstats.Stats(str(out))
        total = asyncio.run(count_from_journals(Path(tmp) / "data"))
    print(
        f"{args.game}, {args.matches} matches, {args.layout} layout, {args.stream}: {total} decisions "
        "profiled (whole run, warm-up included)"
    )
    stats.sort_stats("tottime").print_stats(args.top)
    print(f"{'stage (cumulative, overlapping)':<46} {'µs/decision':>11}")
    for stage, us in stage_costs(stats, total):
        print(f"{stage:<46} {us:>11.1f}")


async def count_from_journals(data: Path) -> int:
    """Every bot action the referee accepted in the run, from the journals."""
    count = 0
    for journal in (data / "matches").glob("*.jsonl"):
        with journal.open(encoding="utf-8") as file:
            count += sum(1 for line in file if line.startswith('{"t":"act"'))
    return count


if __name__ == "__main__":
    main()
