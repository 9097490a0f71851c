"""``croupier review MATCH --boss boss-1``: "could I have won?" A boss replays each of a seat's
decisions in a finished match (the person's: the seat named "you" or "human", else ``--seat``)
from what that seat saw then, and marks where its own choice scores better on average than the
move made (clients/bots/review.py). Each mark names the step to fork from to try it again:
``croupier replay MATCH --fork STEP --bot human --bot boss-1``. ``CROUPIER_BOSS_BUDGET`` scales
the boss's budget as it does at a table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from croupier.clients.terminal.replay_cli import DEFAULT_DATA

PEOPLE = ("you", "human")
"""The names a person's seat is given (``croupier match --human``, a fork's seat)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="MATCH", help="a journal file, or a match id in --data")
    parser.add_argument(
        "--boss", default="boss-1", choices=("boss-1", "boss-2"), help="who judges (default: %(default)s)"
    )
    parser.add_argument(
        "--seat", type=int, action="append", help="a seat to review (default: the seat named you or human)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the boss's seed (default: %(default)s)")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="the referee's data directory (default: %(default)s)"
    )


def run(args: argparse.Namespace) -> int:
    from croupier.clients.bots import boss_level
    from croupier.clients.bots.review import review
    from croupier.clients.terminal.replay_cli import _journal, _not_found
    from croupier.server.journal import Header, read_records

    path = _journal(args, args.source)
    if path is None:
        print(f"croupier review: {_not_found(args, args.source)}")
        return 1
    records = read_records(path)
    header = records[0] if records else None
    if not isinstance(header, Header):
        print(f"croupier review: {path} is not a match journal (no header)")
        return 1
    names = [p.name for p in header.players]
    seats = set(args.seat or (s for s, name in enumerate(names) if name in PEOPLE))
    if not seats or not seats <= set(range(len(names))):
        print(
            f"croupier review: name a seat to review with --seat (0 to {len(names) - 1}: {', '.join(names)})"
        )
        return 1
    try:
        level = boss_level(args.boss)
        decisions = list(review(records, seats, level, args.seed))
    except ValueError as exc:
        print(f"croupier review: {path}: {exc}")
        return 1
    marked = [d for d in decisions if d.better]
    print(f"{header.match_id} ({header.game}): {args.boss} reviews seat {', '.join(map(str, sorted(seats)))}")
    for d in decisions:
        mark = "✗" if d.better else " "
        verdict = (
            f"{args.boss} plays {d.choice}: {d.gain:+.2f} ± {d.error:.2f} on average"
            if d.choice != d.played
            else f"{args.boss} agrees"
        )
        print(f"{mark} step {d.step:>4}  seat {d.seat}  played {d.played}  {verdict}  ({d.worlds} worlds)")
    total = sum(d.gain for d in marked)
    print(
        f"{len(marked)} of {len(decisions)} decisions where {args.boss}'s choice scores better "
        f"(✗, by {total:+.2f} in all); replay one: croupier replay {header.match_id} --fork STEP"
    )
    return 0
