"""Calibration of ``croupier match --sprt`` on real games.

Usage: python -m bench.sprt_calibration [--game NAME] [--pool SETS] [--tests N] [--seats N]
       python -m bench.sprt_calibration --play [--game NAME] [--runs N] [--power-runs N] [--fresh-runs N]
       (either with --cluster tcp://HOST:8786: the runs on a Dask scheduler's workers)

The default (minutes): per game, two seats and the game's default number, a pool of duplicate
sets played in-process (clients/author/inprocess.py; the heuristic against the heuristic playing a
share q of its moves at random, the other seats the heuristic), then tests drawn from that pool's
distribution of set scores, moved to the mean of elo0 and of elo1 (bench/sprt_resampled.py), for
each candidate test on the same draws (today's GSPRT, fishtest's normalised GSPRT with 30 sets at
least, the one-sided GSPRT): the share accepting H1 at elo0 (false H1, at most α) and at elo1
(power, at least 1 − β), the median sets to a decision, the verdict's estimate (sprt_estimate.simulated, on
today's test: median error and how often its 95% interval holds the truth), and the sets against
a fixed-size test on the same duplicate sets (median and 90th percentile of the ratio). Last, the
same on a constructed distribution no pool shows: a NEW that scores a little better on 97 deals
in 100 and loses the whole set on the others, exactly elo0 on average.

``--play``: every test played to its decision (hours), two seats, elo0=0 elo1=10, α = β = 0.05:

- twins: the same bot twice (the heuristic playing a share q of its moves at random, so that two
  copies do not mirror each other exactly): the share of runs accepting H1 must be at most α
  (within its 95% binomial interval);
- a real difference: the heuristic against that same bot, q chosen by a pilot so that the gap sits
  near elo1 (the gap measured over every set of these runs is printed): the share accepting H1
  must be at least 1 − β;
- games to a decision, for that difference: the duplicate-set SPRT, (a) the fixed number of games
  a one-sided z-test of single games on fresh deals needs for the same α, β and gap (from the
  per-game spread measured in (b)), and (b) the same SPRT on fresh deals, each game its own
  observation (0, ½ or 1, the seats alternating).

Every figure is printed per game, then the table docs/testing-bots.md shows. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench import sprt_resampled
from croupier.clients.author.inprocess import play, pool, workers
from croupier.clients.bots import HeuristicBot
from croupier.clients.results.schedule import Rotations, design
from croupier.clients.results.sets import grid, pair_points
from croupier.clients.results.sprt import Progress, Sprt, Verdict, elo_of, score_of
from croupier.clients.results.sprt_estimate import simulated
from croupier.clients.sdk import Match
from croupier.engine.games import GAMES, get_game

OPTIONS: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 2, "target": 100},
    "pair_battle": {"players": 2, "timing": "lockstep"},
    "platinum_fish": {"players": 2},
    "spoil_five": {"players": 2},
}
"""Each game's options here: two seats, and matches short enough for hundreds of tests."""
TEST = Sprt(elo0=0, elo1=10, alpha=0.05, beta=0.05)
PILOT_SETS = 400
Z = {0.05: 1.6448536269514722}
"""One-sided normal quantiles."""


class Mixed(HeuristicBot):
    """The heuristic, playing a share ``q`` of its moves at random."""

    def __init__(self, match: Match, q: float, rng: random.Random) -> None:
        super().__init__(match)
        self.q, self.rng = q, rng

    def choose(self, view: Any, legal: list[Any]) -> int:
        if self.q and self.rng.random() < self.q:
            return self.rng.randrange(len(legal))
        return super().choose(view, legal)


def mixed(q: float, seed: str) -> Any:
    """A factory of ``Mixed`` bots drawing their random moves from ``seed``."""
    rng = random.Random(seed)
    return lambda match: Mixed(match, q, rng)


@dataclass(frozen=True)
class Run:
    game: str
    new_q: float
    old_q: float
    seed: int
    fresh: bool
    max_games: int
    stop: bool = True
    """Stop at the decision (False: play ``max_games``, for a pilot)."""


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    games: int
    scores: tuple[float, ...]
    """Every observation's score of the new bot: a set's, or a game's on fresh deals."""
    raw: tuple[float, float, float]
    """The Elo estimate and 95% interval of the mean score alone (the live line's)."""
    stopped: tuple[float, float, float]
    """The same, read from where the test stopped (sprt_estimate.simulated: what the verdict line prints)."""


def one_run(run: Run) -> Outcome:
    """Play one test to its decision (or to ``max_games``)."""
    spec = get_game(run.game)
    options = spec.options(OPTIONS[run.game])
    progress = Progress(TEST, grid(1 if run.fresh else 2))
    rng = random.Random(run.seed)
    scores: list[float] = []
    games = 0
    while games < run.max_games and (not run.stop or progress.status.verdict is Verdict.CONTINUE):
        deal = rng.getrandbits(63)
        rotations = [(0, 1)] if run.fresh else [(0, 1), (1, 0)]
        if run.fresh and len(scores) % 2:
            rotations = [(1, 0)]  # the seats alternate from game to game
        points = 0.0
        for rotation, order in enumerate(rotations):
            factories = [
                mixed(run.new_q if who == 0 else run.old_q, f"{run.seed}/{games}/{rotation}/{who}")
                for who in order
            ]
            played = play(spec, options, deal, factories)
            new_seat = order.index(0)
            points += pair_points(played.places[new_seat], played.places[1 - new_seat])
            games += 1
        scores.append(points / len(rotations))
        progress.add(scores[-1])
    status, stopped = progress.status, simulated(TEST, progress.counts, progress.grid)
    raw = (status.elo, status.low, status.high)
    return Outcome(status.verdict, games, tuple(scores), raw, (stopped.elo, stopped.low, stopped.high))


def estimates(outcomes: list[Outcome], truth: float) -> str:
    """How the two estimates of these tests sit about the true gap: their medians (the stopped one
    is meant to be median-unbiased) and how often their 95% intervals hold the truth."""

    def held(estimate: tuple[float, float, float]) -> bool:
        return estimate[1] <= truth <= estimate[2]

    parts = []
    for name, pick in (("mean alone", lambda o: o.raw), ("read from the stop", lambda o: o.stopped)):
        chosen = [pick(o) for o in outcomes]
        covered = sum(map(held, chosen))
        parts.append(
            f"{name}: median {statistics.median(e[0] for e in chosen):+.1f}, "
            f"interval holds it {covered}/{len(chosen)}"
        )
    return f"estimates about {truth:+.1f}: " + "; ".join(parts)


def runs(executor: concurrent.futures.Executor, batch: list[Run], label: str) -> list[Outcome]:
    """Every run of ``batch``, a progress line on stderr as they end (a game's row takes minutes
    to an hour)."""
    began, done = time.monotonic(), []
    for outcome in executor.map(one_run, batch, chunksize=max(1, len(batch) // (16 * workers()))):
        done.append(outcome)
        games = sum(o.games for o in done)
        print(
            f"\r{label}: {len(done)}/{len(batch)} tests, {games} games, {time.monotonic() - began:.0f} s",
            end="\n" if len(done) == len(batch) else "",
            file=sys.stderr,
            flush=True,
        )
    return done


def binomial_interval(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% interval for a share of k in n."""
    z = 1.959963984540054
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def gap(scores: list[float]) -> tuple[float, float, float]:
    """The Elo of a mean score, with its 95% interval."""
    mean = statistics.fmean(scores)
    margin = 1.96 * statistics.pstdev(scores) / math.sqrt(len(scores))
    return elo_of(mean), elo_of(mean - margin), elo_of(mean + margin)


def calibrate(executor: concurrent.futures.Executor, game: str, args: argparse.Namespace) -> dict[str, Any]:
    began = time.monotonic()
    q = args.q
    if q is None:  # the pilot: a share of random moves, then scaled to a gap of about elo1
        trial = 0.05
        pilot = runs(
            executor,
            [Run(game, 0.0, trial, 10_000 + i, False, PILOT_SETS // 4, stop=False) for i in range(8)],
            f"{game} pilot",
        )
        elo = gap([s for o in pilot for s in o.scores])[0]
        q = min(0.5, max(0.002, trial * TEST.elo1 / elo)) if elo > 0 else 0.5
        print(f"{game}: pilot at q={trial}: {elo:+.1f} Elo; q={q:.4f} for about {TEST.elo1:g}", flush=True)
    cap = args.max_games
    twins = runs(
        executor, [Run(game, q, q, 20_000 + i, False, cap) for i in range(args.runs)], f"{game} twins"
    )
    power = runs(
        executor,
        [Run(game, 0.0, q, 30_000 + i, False, cap) for i in range(args.power_runs)],
        f"{game} difference",
    )
    fresh = runs(
        executor,
        [Run(game, 0.0, q, 40_000 + i, True, 20 * cap) for i in range(args.fresh_runs)],
        f"{game} fresh deals",
    )
    false_h1 = sum(o.verdict is Verdict.H1 for o in twins)
    true_h1 = sum(o.verdict is Verdict.H1 for o in power)
    set_scores = [s for o in power for s in o.scores]
    game_scores = [s for o in fresh for s in o.scores]
    sigma_game = statistics.pstdev(game_scores)
    delta = score_of(TEST.elo1) - score_of(TEST.elo0)
    fixed = math.ceil(((Z[TEST.alpha] + Z[TEST.beta]) * sigma_game / delta) ** 2)
    result = {
        "game": game,
        "q": q,
        "gap": gap(set_scores),
        "set_spread": statistics.pstdev(set_scores),
        "game_spread": sigma_game,
        "twins": (false_h1, len(twins), binomial_interval(false_h1, len(twins))),
        "twins_games": statistics.fmean(o.games for o in twins),
        "power": (true_h1, len(power), binomial_interval(true_h1, len(power))),
        "duplicate_games": statistics.fmean(o.games for o in power),
        "fresh_games": statistics.fmean(o.games for o in fresh),
        "fresh_undecided": sum(o.verdict is Verdict.CONTINUE for o in fresh),
        "fixed_games": fixed,
        "seconds": time.monotonic() - began,
        "twin_estimates": estimates(twins, 0.0),
        "power_estimates": estimates(power, gap(set_scores)[0]),
    }
    show(result)
    return result


def show(r: dict[str, Any]) -> None:
    k, n, (low, high) = r["twins"]
    pk, pn, (plow, phigh) = r["power"]
    elo, elo_low, elo_high = r["gap"]
    print(
        f"{r['game']}: q={r['q']:.4f}; true gap {elo:+.1f} Elo [{elo_low:+.1f}, {elo_high:+.1f}]; "
        f"set spread {r['set_spread']:.3f}, game spread {r['game_spread']:.3f}\n"
        f"  twins: H1 in {k}/{n} = {k / n:.3f} [{low:.3f}, {high:.3f}] (α = {TEST.alpha}), "
        f"{r['twins_games']:.0f} games on average\n"
        f"    {r['twin_estimates']}\n"
        f"  difference: H1 in {pk}/{pn} = {pk / pn:.3f} [{plow:.3f}, {phigh:.3f}] (1 − β = {1 - TEST.beta})\n"
        f"    {r['power_estimates']}\n"
        f"  games to a decision: duplicate SPRT {r['duplicate_games']:.0f}; (a) fixed-N {r['fixed_games']}; "
        f"(b) SPRT on fresh deals {r['fresh_games']:.0f} ({r['fresh_undecided']} undecided at the cap); "
        f"duplicate / fixed-N = {r['duplicate_games'] / r['fixed_games']:.3f}\n"
        f"  ({r['seconds']:.0f} s)",
        flush=True,
    )


def table(results: list[dict[str, Any]]) -> None:
    print(
        "\n| game | q | true gap (Elo) | twins: false H1 | difference: H1 | games: duplicate SPRT "
        "| (a) fixed N | (b) SPRT, fresh deals | duplicate / (a) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        k, n, (low, high) = r["twins"]
        pk, pn, (plow, phigh) = r["power"]
        elo, elo_low, elo_high = r["gap"]
        print(
            f"| {r['game']} | {r['q']:.3f} | {elo:+.1f} [{elo_low:+.1f}, {elo_high:+.1f}] "
            f"| {k}/{n} = {k / n:.3f} [{low:.3f}, {high:.3f}] "
            f"| {pk}/{pn} = {pk / pn:.2f} [{plow:.2f}, {phigh:.2f}] "
            f"| {r['duplicate_games']:.0f} | {r['fixed_games']} | {r['fresh_games']:.0f} "
            f"| {r['duplicate_games'] / r['fixed_games']:.2f} |"
        )


def pool_options(game: str, seats: int | None) -> Any:
    """The game's options here, with ``seats`` (None: the game's default number)."""
    chosen = {k: v for k, v in OPTIONS[game].items() if k != "players"}
    return get_game(game).options(chosen | ({"players": seats} if seats else {}))


def pool_set(job: tuple[str, int | None, float, int]) -> float:
    """One duplicate set's score of the heuristic against the heuristic playing a share q of its
    moves at random (the other seats the heuristic), every rotation of a Williams design."""
    game, seats, q, seed = job
    spec, options = get_game(game), pool_options(game, seats)
    rows = design(options.players, Rotations.WILLIAMS)
    points = 0.0
    for rotation, row in enumerate(rows):
        factories = [mixed(q if who == 1 else 0.0, f"{seed}/{rotation}/{who}") for who in row]
        played = play(spec, options, seed, factories)
        points += pair_points(played.places[row.index(0)], played.places[row.index(1)])
    return points / len(rows)


def resampled(
    executor: concurrent.futures.Executor, game: str, seats: int | None, args: argparse.Namespace
) -> None:
    """The pool of ``game``'s sets, then the candidate tests drawn from it (see the docstring)."""
    began = time.monotonic()
    jobs = [(game, seats, args.q or 0.1, 50_000 + i) for i in range(args.pool)]
    scores = list(executor.map(pool_set, jobs, chunksize=max(1, len(jobs) // (8 * workers()))))
    options = pool_options(game, seats)
    values = grid(len(design(options.players, Rotations.WILLIAMS)))
    counts = [sum(abs(s - v) < 1e-9 for s in scores) for v in values]
    label = f"{game}, {options.players} seats"
    print(
        f"{label}: pool of {len(scores)} sets, mean {statistics.fmean(scores):.3f} "
        f"({elo_of(statistics.fmean(scores)):+.1f} Elo), spread {statistics.pstdev(scores):.3f} "
        f"({time.monotonic() - began:.0f} s to play)",
        flush=True,
    )
    compare(label, values, counts, args)


def compare(label: str, values: tuple[float, ...], counts: list[int], args: argparse.Namespace) -> None:
    """Every candidate test on the same draws at elo0 and at elo1, and the verdict's estimate."""
    began = time.monotonic()
    test = Sprt(args.elo0, args.elo1)
    at = {elo: sprt_resampled.at_elo(values, counts, elo) for elo in (test.elo0, test.elo1)}
    fixed = {elo: sprt_resampled.fixed_sets(test, values, q) for elo, q in at.items()}
    rows = []
    for name in sprt_resampled.TESTS:
        got = {
            elo: sprt_resampled.run(name, test, values, q, args.tests, args.cap, seed=7)
            for elo, q in at.items()
        }
        h1 = {elo: float(np.mean(r.verdicts == 1)) for elo, r in got.items()}
        sets = {elo: float(np.median(r.sets)) for elo, r in got.items()}
        undecided = sum(int(np.sum(r.verdicts == 0)) for r in got.values())
        ratio = np.concatenate([r.sets / fixed[elo] for elo, r in got.items()])
        rows.append(
            f"  {name:9}: false H1 {h1[test.elo0]:.3f}, power {h1[test.elo1]:.3f}; median sets "
            f"{sets[test.elo0]:.0f} at elo0, {sets[test.elo1]:.0f} at elo1 ({undecided} undecided at the "
            f"cap, not H1); / fixed-size test on the "
            f"same sets ({fixed[test.elo0]}, {fixed[test.elo1]}): median {np.median(ratio):.2f}, "
            f"p90 {np.quantile(ratio, 0.9):.2f}"
        )
        if name == "gsprt":
            rows.append("    " + stopped_estimates(test, values, got))
    print(f"{label} ({args.tests} tests a row, {time.monotonic() - began:.0f} s, load {load()}):", flush=True)
    print("\n".join(rows), flush=True)


def stopped_estimates(test: Sprt, values: tuple[float, ...], got: dict[float, sprt_resampled.Runs]) -> str:
    """The verdict's estimate (sprt_estimate.simulated) of today's tests against the truth each ran at: its
    median error, how often it fell below the truth, how often its interval held the truth; and
    the printed LLR against Sprt.llr on the same counts (the bench's copy of the statistic)."""
    parts, worst = [], 0.0
    for truth, r in got.items():
        chosen = r.verdicts != 0
        read = [simulated(test, [int(c) for c in counts], values) for counts in r.counts[chosen][:100]]
        if not read:
            parts.append(f"at {truth:+g}: no test decided")
            continue
        errors = [s.elo - truth for s in read]
        held = sum(s.low <= truth <= s.high for s in read)
        below = sum(e < 0 for e in errors)
        parts.append(
            f"at {truth:+g}: median error {statistics.median(errors):+.1f}, below {below}/{len(read)}, "
            f"interval holds it {held}/{len(read)}"
        )
        for counts, last in zip(r.counts[chosen][:20], r.last[chosen][:20], strict=True):
            worst = max(worst, abs(test.llr([int(c) for c in counts], values) - last))
    return "estimate read from the stop " + "; ".join(parts) + f" (bench LLR within {worst:.0e} of Sprt.llr)"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="only this game (repeatable)")
    parser.add_argument("--play", action="store_true", help="play every test to its decision (hours)")
    parser.add_argument("--pool", type=int, default=200, help="sets played for a pool (default: %(default)s)")
    parser.add_argument("--tests", type=int, default=100, help="tests drawn per row (default: %(default)s)")
    parser.add_argument(
        "--cap", type=int, default=2000, help="a drawn test's cap in sets (default: %(default)s)"
    )
    parser.add_argument(
        "--seats", type=int, action="append", help="seats (default: 2 and the game's default)"
    )
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument(
        "--runs", type=int, default=200, help="--play: twin tests per game (default: %(default)s)"
    )
    parser.add_argument(
        "--power-runs",
        type=int,
        default=100,
        help="--play: tests of the real difference (default: %(default)s)",
    )
    parser.add_argument(
        "--fresh-runs", type=int, default=20, help="--play: tests on fresh deals (default: %(default)s)"
    )
    parser.add_argument(
        "--max-games", type=int, default=20_000, help="--play: a duplicate test's cap (default: %(default)s)"
    )
    parser.add_argument(
        "--q", type=float, help="the share of random moves (default: 0.1 for a pool; --play: from a pilot)"
    )
    parser.add_argument(
        "--cluster", metavar="ADDRESS", help="run the tests on a Dask scheduler's workers (croupier[cluster])"
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.cluster:
            from croupier.clients.author.cluster import connect

            cluster = stack.enter_context(connect(args.cluster, {}, code=["bench"]))  # one_run is here
            executor, where = cluster.executor, f"Dask at {args.cluster}, {cluster.threads} worker threads"
        else:
            executor, where = stack.enter_context(pool()), f"{workers()} worker processes"
        print(f"{where}; load {load()}", flush=True)
        if not args.play:
            print(f"tests elo0={args.elo0:g} elo1={args.elo1:g}, α=β=0.05", flush=True)
            for game in args.game or sorted(OPTIONS):
                default = pool_options(game, None).players
                for seats in args.seats or sorted({2, default}):
                    resampled(executor, game, seats, args)
            blunder = (0.0, 0.015, 0.515, 1.0)  # 0.97·0.515 + 0.03·0.015 = 0.5: exactly elo0=0
            compare("rare whole-set losses (constructed, mean 0.5)", blunder, [0, 3, 97, 0], args)
            return
        results = []
        print(f"test elo0={TEST.elo0:g} elo1={TEST.elo1:g}, α=β={TEST.alpha}", flush=True)
        for game in args.game or sorted(OPTIONS):
            results.append(calibrate(executor, game, args))
    table(results)


if __name__ == "__main__":
    main()
