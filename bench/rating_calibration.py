"""Are the rating intervals honest? Tournaments of identical twins, rated as the runner rates them.

Usage: python -m bench.rating_calibration [--tournaments K] [--rounds R] [--samples B]
       [--seating before|after] [--seats 2 3 4] [--game NAME ...] [--prior P ...]
       python -m bench.rating_calibration --pair-battle-twins [--tournaments K] [--rounds R]

Each of K tournaments has four bots: two identical heuristic bots and two
identical random ones (``random`` seeded per match), with a fresh secret, and
plays every game at 2, 3 and 4 seats, R rounds of one deal per group. Matches
are played in-process through the engine (``sdk.play_offline``), as fast as
the rules go; the referee adds nothing to who wins.

``--seating after`` schedules and rates as the runner now does
(schedule.game_schedule: Williams rotations, each group and set its own deal,
bots shuffled into the design by the seed; intervals widened for few sets,
ratings.widen). ``--seating before`` does as it did up to this change: cyclic
rotations in file order, every group dealt the same cards, the plain bootstrap.

Per seats and game it prints, for each model (Plackett-Luce, pairwise Elo)
and bootstrap (over duplicate sets, or over groups and then their sets):
- excl0: how often the 95% interval of a twin pair's difference excludes 0
  (2 pairs per tournament; honest intervals: about 5%);
- LOS quintiles: how the twins' likelihoods of superiority spread over
  [0, .2, .4, .6, .8, 1] (honest: about K*2/5 each);
- held-out log-likelihood per match of the rankings of half the sets, with
  ratings fitted on the other half (both halves in turn; higher is better);
- known strengths: for the 4 heuristic-random pairs of each tournament, per
  model, the head-to-head score observed against the score the fitted Elo gap
  predicts, 1 / (1 + 10^(-gap/400)): how many pairs' prediction lies within
  the 95% (Wilson) interval of their observed score, and the mean difference
  over the tournaments with its 95% interval (a prior that compresses gaps
  predicts too little: the difference is positive); and the same difference
  on held-out sets (gaps fitted on half the sets, scores observed on the
  other half, both ways round).
Each ``--prior`` (virtual draws per pair) rates the same matches; a summary
per prior closes the run: the twins' excl0 and the known-strength difference
over every game and seat count.
Figures are printed, never asserted; docs/tournaments.md records a run.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import secrets
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.harness import machine
from croupier.clients.bots import HeuristicBot, RandomBot
from croupier.clients.results.ratings import (
    DEFAULT_PRIOR,
    DEFAULT_RESAMPLE,
    TIE,
    Model,
    Places,
    RatedSet,
    Resample,
    Tally,
    bootstrap,
    choices,
    fit,
    log_likelihood,
    merged,
    t_975,
)
from croupier.clients.results.schedule import (
    DuplicateSet,
    MatchKey,
    Rotations,
    ScheduledMatch,
    deal_seed,
    game_schedule,
    seatings,
)
from croupier.clients.sdk import BotFactory, play_offline
from croupier.engine.games import get_game

BOTS = ("heuristic-1", "heuristic-2", "random-1", "random-2")
TWINS = (("heuristic-1", "heuristic-2"), ("random-1", "random-2"))
KNOWN = tuple((strong, weak) for strong in TWINS[0] for weak in TWINS[1])
"""Pairs whose stronger side is known: heuristic against random."""
GAMES = ("chinese_ten", "spoil_five", "platinum_fish", "pair_battle")
OPTIONS: dict[str, dict[str, Any]] = {
    "chinese_ten": {"target": 300},  # as tournaments/demo.toml
    "pair_battle": {"timing": "lockstep"},
}
VARIANTS = [(model, resample) for model in Model for resample in Resample]
ENDLESS = {
    ("platinum_fish", 2): "two heuristic bots can hold one unmatched card each with the stock empty, for ever"
}
"""Line-ups the bench skips: ``play_offline`` has no clock to end them."""


def legacy_schedule(game: str, seats: int, rounds: int, secret: bytes) -> list[DuplicateSet]:
    """The schedule before this change: cyclic rotations in file order, one deal per round for
    every group (seeded here from the secret; how the old seeds were made is not the point)."""
    sets = []
    for round_number in range(rounds):
        seed = deal_seed(secret, game, round_number, 0, 0, None)
        for number, group in enumerate(itertools.combinations(BOTS, seats)):
            orders = seatings(group, Rotations.CYCLIC)
            sets.append(
                DuplicateSet(
                    tuple(
                        ScheduledMatch(MatchKey(game, round_number, number, 0, rotation), seed, order)
                        for rotation, order in enumerate(orders)
                    )
                )
            )
    return sets


def factory(bot: str, match_number: int, tournament: str) -> BotFactory:
    if bot.startswith("heuristic"):
        return HeuristicBot
    # Seeded by the tournament too: seeded by name and match number alone, a random bot replayed
    # the same choices in every tournament, so its tournaments were not independent samples
    # (random-1 fell behind random-2 in lockstep Pair Battle at z -4 to -7 over 100 of them).
    rng = random.Random(f"{tournament}/{bot}/{match_number}")
    return lambda match: RandomBot(match, rng)


def play(game: str, seats: int, schedule: Sequence[DuplicateSet], tournament: str) -> list[RatedSet]:
    spec = get_game(game)
    options = spec.options({**OPTIONS.get(game, {}), "players": seats})
    sets = []
    number = 0
    for duplicate in schedule:
        matches: list[Places] = []
        for match in duplicate.matches:
            number += 1
            bots = [factory(bot, number, tournament) for bot in match.seats]
            outcome = play_offline(spec, options, bots, match.seed)
            matches.append({bot: outcome.places[seat] for seat, bot in enumerate(match.seats)})
        sets.append(RatedSet(tournament, tuple(sorted(duplicate.bots)), tuple(matches)))
    return sets


@dataclass
class Figures:
    excluded: dict[tuple[Model, Resample], int] = field(default_factory=dict)
    los: dict[tuple[Model, Resample], list[float]] = field(default_factory=dict)
    pairs: int = 0
    held_out: dict[Model, float] = field(default_factory=dict)
    held_out_matches: int = 0
    known: dict[Model, Known] = field(default_factory=lambda: {model: Known() for model in Model})

    def add(self, other: Figures) -> None:
        """Pool another game's figures into these (the summary's default bootstrap only)."""
        for model in Model:
            variant = (model, DEFAULT_RESAMPLE)
            self.excluded[variant] = self.excluded.get(variant, 0) + other.excluded[variant]
            mine, theirs = self.known[model], other.known[model]
            mine.misses += theirs.misses
            mine.observed += theirs.observed
            mine.predicted += theirs.predicted
            mine.within += theirs.within
            mine.held_out += theirs.held_out
        self.pairs += other.pairs


@dataclass
class Known:
    """Heuristic against random: how well the fitted gaps predict the scores."""

    misses: list[float] = field(default_factory=list)
    """Per tournament, the known pairs' mean (observed - predicted) score."""
    observed: list[float] = field(default_factory=list)
    predicted: list[float] = field(default_factory=list)
    within: int = 0
    """Pairs whose predicted score lies in the 95% interval of the observed one."""
    held_out: list[float] = field(default_factory=list)
    """Per tournament, the same difference on held-out sets: gaps fitted on one half of the
    sets, scores observed on the other (both ways round)."""


def measure(
    sets: Sequence[RatedSet], samples: int, seed: int, figures: Figures, few: bool, prior: float
) -> None:
    for variant in VARIANTS:
        draws = bootstrap(
            sets, prior=prior, samples=samples, seed=seed, model=variant[0], resample=variant[1], few=few
        )
        for a, b in TWINS:
            diffs = sorted(d[a] - d[b] for d in draws if a in d and b in d)
            if not diffs:  # no interval at all (one group to resample): nothing excluded
                figures.excluded.setdefault(variant, 0)
                figures.los.setdefault(variant, [])
                continue
            low, high = diffs[int(0.025 * (len(diffs) - 1))], diffs[int(0.975 * (len(diffs) - 1))]
            figures.excluded[variant] = figures.excluded.get(variant, 0) + (low > 0 or high < 0)
            los = sum(1.0 if x > TIE else 0.5 if x >= -TIE else 0.0 for x in diffs) / len(diffs)
            figures.los.setdefault(variant, []).append(los)
    figures.pairs += len(TWINS)
    for model in Model:
        known_strengths(sets, prior, model, figures.known[model])
    halves = (sets[0::2], sets[1::2])
    held_misses: dict[Model, list[float]] = {model: [] for model in Model}
    for train, test in (halves, halves[::-1]):
        held = [places for rated in test for places in rated.matches]
        tally = Tally(held)
        for model in Model:
            elo = fit(merged(choices(p, model) for rated in train for p in rated.matches), prior)
            held_misses[model] += [
                tally.points[strong, weak] / tally.games[strong, weak] - expected(elo[strong] - elo[weak])
                for strong, weak in KNOWN
                if tally.games.get((strong, weak)) and strong in elo and weak in elo
            ]
            usable = [p for p in held if all(bot in elo for bot in p)]
            figures.held_out[model] = figures.held_out.get(model, 0.0) + sum(
                log_likelihood(elo, p) for p in usable
            )
        figures.held_out_matches += len(usable)
    for model, misses in held_misses.items():
        if misses:
            figures.known[model].held_out.append(statistics.fmean(misses))


def expected(gap: float) -> float:
    """The score the stronger side of an Elo gap is expected to make."""
    return 1 / (1 + 10 ** (-gap / 400))


def known_strengths(sets: Sequence[RatedSet], prior: float, model: Model, known: Known) -> None:
    """Does the fitted gap of each heuristic-random pair predict its head-to-head score?"""
    tally = Tally(places for rated in sets for places in rated.matches)
    elo = fit(merged(choices(p, model) for rated in sets for p in rated.matches), prior)
    misses = []
    for strong, weak in KNOWN:
        games = tally.games.get((strong, weak), 0)
        if not games:
            continue
        observed = tally.points[strong, weak] / games  # heuristic-* sorts before random-*
        predicted = expected(elo[strong] - elo[weak])
        misses.append(observed - predicted)
        known.observed.append(observed)
        known.predicted.append(predicted)
        low, high = wilson(observed, games)
        known.within += low <= predicted <= high
    if misses:
        known.misses.append(statistics.fmean(misses))


def wilson(score: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson interval of a score over n results (sensible at 0 and 1, unlike the normal one)."""
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def implied(score: float) -> float:
    """The Elo gap at which the stronger side is expected to make ``score``."""
    return math.inf if score >= 1 else 400 * math.log10(score / (1 - score))


def known_line(known: Known) -> str:
    if len(known.misses) < 2:
        return "known strengths: too few tournaments"
    observed, predicted = statistics.fmean(known.observed), statistics.fmean(known.predicted)
    return (
        f"within {100 * known.within / len(known.observed):5.1f}%; score {observed:.3f} observed "
        f"({implied(observed):3.0f} Elo), {predicted:.3f} predicted ({implied(predicted):3.0f} Elo); "
        f"difference {interval(known.misses)}; held out {interval(known.held_out)}"
    )


def interval(values: Sequence[float]) -> str:
    """The mean and its 95% interval (Student's t)."""
    if len(values) < 2:
        return "n/a"
    mean = statistics.fmean(values)
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:+.4f} [{mean - half:+.4f}, {mean + half:+.4f}]"


def quintiles(values: Sequence[float]) -> str:
    counts = [0] * 5
    for value in values:
        counts[min(4, int(value * 5))] += 1
    return " ".join(f"{count:3d}" for count in counts)


def pair_battle_twins(tournaments: int, rounds: int) -> None:
    """Issue 30's anomaly: does random-1 fall behind its twin random-2 in lockstep Pair Battle?
    Demo-shaped tournaments (the four bots two to a table, two deals per group and round, Williams
    seating, each its own secret), played through the engine alone: no processes, no referee, so
    what is left is the rules, the seating and the answer order. Paired units as the anomaly
    counted them: per tournament, round and deal, random-1's pairwise points minus random-2's
    against each heuristic, and their head-to-head; and seat 0's share of every match's points,
    which an answer order favouring the first seat would lift above one half."""
    points: dict[tuple[int, int, int, str, str], float] = {}
    seat0, matches = 0.0, 0
    for k in range(tournaments):
        schedule = game_schedule("pair_battle", BOTS, 2, rounds, 2, seed=k, secret=secrets.token_bytes(32))
        for duplicate, rated in zip(schedule, play("pair_battle", 2, schedule, f"t{k}"), strict=True):
            for match, places in zip(duplicate.matches, rated.matches, strict=True):
                first, second = match.seats
                ahead = places[second] - places[first]
                score = 1.0 if ahead > 0 else 0.5 if ahead == 0 else 0.0
                seat0, matches = seat0 + score, matches + 1
                for bot, opponent, won in ((first, second, score), (second, first, 1 - score)):
                    unit = (k, match.key.round, match.key.deal, bot, opponent)
                    points[unit] = points.get(unit, 0.0) + won
    gaps = [
        won - points[(k, r, d, "random-2", "random-1" if opponent == "random-2" else opponent)]
        for (k, r, d, bot, opponent), won in points.items()
        if bot == "random-1"
    ]
    mean = sum(gaps) / len(gaps)
    spread = (sum((gap - mean) ** 2 for gap in gaps) / (len(gaps) - 1)) ** 0.5
    share = seat0 / matches
    print(
        f"pair_battle twins: {tournaments} tournaments x {rounds} rounds, {len(gaps)} paired units: "
        f"random-1 minus random-2 {mean:+.3f} points a unit (z {mean / spread * len(gaps) ** 0.5:+.2f}), "
        f"behind in {sum(gap < 0 for gap in gaps)}, ahead in {sum(gap > 0 for gap in gaps)}; seat 0 takes "
        f"{share:.3f} of {matches} matches' points (z {(share - 0.5) / (0.25 / matches) ** 0.5:+.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tournaments", type=int, default=20, help="K (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=4, help="deals per group (default %(default)s)")
    parser.add_argument("--samples", type=int, default=200, help="bootstrap samples (default %(default)s)")
    parser.add_argument("--seating", choices=("before", "after"), default="after")
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--game", nargs="+", default=list(GAMES))
    parser.add_argument("--pair-battle-twins", action="store_true", help="only issue 30's twin anomaly")
    parser.add_argument(
        "--prior",
        type=float,
        nargs="+",
        default=[DEFAULT_PRIOR],
        help="virtual draws per pair, each rating the same matches (default %(default)s)",
    )
    args = parser.parse_args()
    print(f"# {machine()}")
    if args.pair_battle_twins:
        pair_battle_twins(args.tournaments, args.rounds)
        return
    print(
        f"# seating {args.seating}: {args.tournaments} tournaments x {args.rounds} rounds, "
        f"{args.samples} bootstrap samples, priors {args.prior}"
    )
    schedule_of: Callable[[str, int, bytes, int], list[DuplicateSet]]
    if args.seating == "before":
        schedule_of = lambda game, seats, secret, k: legacy_schedule(game, seats, args.rounds, secret)  # noqa: E731
    else:
        schedule_of = lambda game, seats, secret, k: game_schedule(  # noqa: E731
            game, BOTS, seats, args.rounds, 1, seed=k, secret=secret
        )
    print("seats game           prior model          bootstrap excl0  LOS quintiles (0-.2 ... .8-1)")
    overall = {prior: Figures() for prior in args.prior}
    for seats in args.seats:
        for game in args.game:
            if (game, seats) in ENDLESS:
                print(f"{seats:5d} {game:14s} skipped: {ENDLESS[game, seats]}")
                continue
            figures = {prior: Figures() for prior in args.prior}
            started, played = time.perf_counter(), 0
            for k in range(args.tournaments):
                schedule = schedule_of(game, seats, secrets.token_bytes(32), k)
                sets = play(game, seats, schedule, f"t{k}")
                played += sum(len(s.matches) for s in sets)
                for prior in args.prior:
                    measure(sets, args.samples, k, figures[prior], args.seating == "after", prior)
            for prior in args.prior:
                report(seats, game, prior, figures[prior])
                overall[prior].add(figures[prior])
            print(f"{seats:5d} {game:14s} {played} matches, {time.perf_counter() - started:.0f}s", flush=True)
    for prior, figures in overall.items():
        for model in Model:
            excluded = 100 * figures.excluded.get((model, DEFAULT_RESAMPLE), 0) / max(1, figures.pairs)
            print(
                f"# all prior {prior:4g} {model.value:14s} twins excl0 {excluded:4.1f}% of {figures.pairs}; "
                f"heuristic vs random {known_line(figures.known[model])}"
            )


def report(seats: int, game: str, prior: float, figures: Figures) -> None:
    for variant in VARIANTS:
        excluded = 100 * figures.excluded[variant] / figures.pairs
        print(
            f"{seats:5d} {game:14s} {prior:5g} {variant[0].value:14s} {variant[1].value:9s} "
            f"{excluded:4.1f}%  {quintiles(figures.los[variant])}"
        )
    n = max(1, figures.held_out_matches)
    pl, pairwise = (figures.held_out[model] / n for model in (Model.PLACKETT_LUCE, Model.PAIRWISE))
    print(
        f"{seats:5d} {game:14s} {prior:5g} held-out log-likelihood per match: Plackett-Luce {pl:.4f}, "
        f"pairwise {pairwise:.4f}"
    )
    for model in Model:
        print(f"{seats:5d} {game:14s} {prior:5g} {model.value:14s} known {known_line(figures.known[model])}")


if __name__ == "__main__":
    main()
