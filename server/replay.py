"""``croupier replay JOURNAL``: re-run a match from its journal and check it reproduces the result."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from croupier.engine.core import GameState
from croupier.server.journal import Cancel, End, Header, Record, apply_record, scan, seed_beside, seed_sha256


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("journals", type=Path, nargs="+", metavar="JOURNAL", help="matches/<id>.jsonl files")
    parser.add_argument(
        "--seed", type=int, help="the seed of an unfinished match (else read from its .secret file beside it)"
    )


def run(args: argparse.Namespace) -> int:
    failures = 0
    for path in args.journals:
        seed = args.seed if args.seed is not None else seed_beside(path)
        try:
            state, records = replay_journal(path, seed)
        except (ReplayMismatch, OSError, ValueError, KeyError) as exc:
            print(f"{path}: FAILED: {exc}")
            failures += 1
            continue
        last = records[-1]
        if isinstance(last, Cancel):
            print(f"{path}: ok: {len(records)} records replay; the match was cancelled: {last.reason}")
        elif isinstance(last, End):
            scores = ", ".join(map(str, state.outcome().scores))
            print(f"{path}: ok: {len(records)} records reproduce the result (scores {scores})")
        else:
            print(f"{path}: ok so far: {len(records)} records replay; the match has not ended")
    return 1 if failures else 0


class ReplayMismatch(Exception):
    """A journal the engine does not reproduce."""


def replay_journal(path: Path, seed: int | None = None) -> tuple[GameState[Any, Any], list[Record]]:
    """Re-run a match from its journal; check the seed and, if it ended, its result.

    The seed comes from the journal's end, else from ``seed``. Raises
    ReplayMismatch if anything differs (or the journal is damaged).
    """
    from croupier.engine.games import get_game  # the games only when a journal is replayed
    from croupier.engine.rng import Rng

    journal = scan(path)
    if journal.damage:
        raise ReplayMismatch(f"{path}: {journal.damage}")
    header = journal.records[0]
    assert isinstance(header, Header)  # scan's first record
    records = journal.records
    end = records[-1] if isinstance(records[-1], End) else None
    if end is not None:
        seed = end.seed
    if seed is None:
        raise ReplayMismatch(f"{path}: the match has not ended, so its seed is not in the journal; give it")
    if seed_sha256(seed) != header.seed_sha256:
        raise ReplayMismatch(f"{path}: the seed {seed} does not match the published hash")
    spec = get_game(header.game)
    state = spec.new_game(spec.options(header.options), Rng(seed))
    for number, record in enumerate(records[1:], 2):
        try:
            apply_record(spec, state, record)
        except ValueError as exc:
            raise ReplayMismatch(f"{path}: line {number} ({record.KIND}) does not apply: {exc}") from None
    if end is not None:
        if not state.is_over():
            raise ReplayMismatch(f"{path}: the replayed match is not over where the journal ends it")
        outcome = state.outcome()
        if (outcome.scores, outcome.places) != (end.scores, end.engine_places):
            raise ReplayMismatch(
                f"{path}: replay gives scores {list(outcome.scores)} places {list(outcome.places)}, "
                f"the journal says scores {list(end.scores)} places {list(end.engine_places)}"
            )
    return state, records
