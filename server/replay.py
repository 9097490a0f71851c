"""``croupier replay JOURNAL``: re-run a match from its journal and check it reproduces the result."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("journals", type=Path, nargs="+", metavar="JOURNAL", help="matches/<id>.jsonl files")
    parser.add_argument(
        "--seed", type=int, help="the seed of an unfinished match (else read from its .secret file beside it)"
    )


def run(args: argparse.Namespace) -> int:
    from croupier.server.journal import Cancel, End, ReplayMismatch, replay_journal, seed_beside

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
