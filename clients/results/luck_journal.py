"""Each seat's luck in a match played over the referee, measured from its journal (issue #46).

The journal holds the seed and every action, so the match replays through the engine with a
``LuckMeter`` following it, exactly as an in-process match is followed while it is played: the same
value function, committed with the run's schedule (``identities``), gives the same luck, which is
what lets ``croupier verify`` recompute every stored corrected score from the export alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.results.luck import Evaluator, LuckMeter, default_evaluator, seat_luck
from croupier.clients.results.luck_games import PROGRESS
from croupier.server.journal import Header, Record, apply_record

if TYPE_CHECKING:
    from croupier.clients.results.store import SeatResult

__all__ = [
    "LUCK_DIGITS",
    "evaluator_of",
    "evaluators",
    "identities",
    "journal_luck",
    "records_luck",
    "with_luck",
]

LUCK_DIGITS = 9
"""A seat's luck as stored and exported: rounded, so a recomputation elsewhere compares exactly."""


MEASURED = ("chinese_ten", "platinum_fish")
"""The games whose luck a tournament measures: those with chance after the deal that V narrows
(docs/testing-bots.md); Spoil Five's and Pair Battle's correction is zero to rounding, at a cost."""


def evaluators(games: Iterable[str]) -> dict[str, Evaluator]:
    """The default V of each game measured (the others are left plain)."""
    return {game: default_evaluator(game) for game in games if game in MEASURED}


def identities(games: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What a run's schedule commits to, per game measured: its V's identity (luck.Evaluator.identity)."""
    return {game: evaluator.identity() for game, evaluator in evaluators(games).items()}


def evaluator_of(identity: dict[str, Any]) -> Evaluator:
    """The V a committed identity names; ValueError if this code is not the code it names."""
    game = identity.get("game")
    if not isinstance(game, str) or game not in PROGRESS:
        raise ValueError(f"a luck identity of an unknown game {game!r}")
    fields = {name: identity[name] for name in ("scale", "outcomes", "seed", "poor") if name in identity}
    evaluator = default_evaluator(game, **fields)
    if evaluator.identity()["hash"] != identity.get("hash"):
        raise ValueError(
            f"{game}'s luck value function is not the one committed to (hash {identity.get('hash')}, "
            f"this croupier's {evaluator.identity()['hash']}): use the croupier that played the run"
        )
    return evaluator


def records_luck(
    records: Sequence[Record], seed: int, evaluator: Evaluator, fresh: bool
) -> list[float | None]:
    """Each seat's luck (its mean over every pair it is in, luck.seat_luck) in the match whose
    journal records these are (the header first), replayed from ``seed``; ``fresh``: the deal is
    chance too (fresh deals; duplicate cancels it)."""
    from croupier.engine.games import get_game
    from croupier.engine.rng import Rng

    header = records[0]
    if not isinstance(header, Header):
        raise ValueError("a journal starts with its header")
    if header.game != evaluator.game:
        raise ValueError(f"a {header.game} journal measured with {evaluator.game}'s value function")
    spec = get_game(header.game)
    options = spec.options(header.options)
    seats = len(header.players)
    meter = LuckMeter(evaluator, [(a, b) for a in range(seats) for b in range(a + 1, seats)], fresh=fresh)
    state = meter.follow(spec.new_game(options, Rng(seed)), spec, options)
    for record in records[1:]:
        apply_record(spec, state, record)
    luck = seat_luck([(a, b, value) for (a, b), value in meter.luck.items()], seats)
    return [None if value is None else round(value, LUCK_DIGITS) for value in luck]


def journal_luck(path: Path, evaluator: Evaluator, fresh: bool) -> list[float | None] | None:
    """Each seat's luck in the finished match journaled at ``path`` (its seed read from its end);
    None for a journal that is not there or has not ended."""
    from croupier.server.journal import End, read_records

    try:
        records = read_records(path)
    except OSError:
        return None
    if len(records) < 2 or not isinstance(records[-1], End):
        return None
    return records_luck(records, records[-1].seed, evaluator, fresh)


def with_luck(results: Sequence[SeatResult], luck: Sequence[float | None] | None) -> list[SeatResult]:
    """The results, each seat's luck beside its score (unchanged where none was measured)."""
    if luck is None:
        return list(results)
    return [replace(result, luck=luck[result.seat]) for result in results]
