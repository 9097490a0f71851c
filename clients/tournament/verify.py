"""``croupier verify FILE``: a whole tournament run audited from its archive, or a reveal's deals.

Given an archive of ``croupier export`` (a .tar.gz), the whole run is checked from it alone,
with no referee: the schedule against the commitment published at its start (``--commitment``),
every deal against the secret, every journal replayed through the engine to its result, every
seat's result, that no scheduled match is missing or added, and the ratings (audit.py).

Given a reveal file (``DATA/reveals/NAME-RUN.json``), only its deals are checked: every seed
against the secret and its commitment, and with ``--server`` against what a referee publishes
(reveal.py).

Exit status: 0 verified, 1 a problem found (one line each, naming the match and what differs),
2 a file that cannot be checked.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from croupier.clients.tournament import reveal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        type=Path,
        help="an archive of croupier export (DATA/reveals/NAME-RUN.audit.tar.gz), or a reveal file "
        "(DATA/reveals/NAME-RUN.json: its deals only)",
    )
    parser.add_argument(
        "--commitment",
        metavar="HASH",
        help="with an archive: the schedule's commitment as published at the run's start (64 hex digits, "
        "or the file holding them: DATA/reveals/NAME-RUN.schedule.sha256)",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        action="append",
        help="with a reveal file: also check against what this referee publishes (repeatable: each replica)",
    )


def run(args: argparse.Namespace) -> int:
    from croupier.clients.results.ratings_cli import fail
    from croupier.clients.tournament import audit, commitment

    if not audit.is_archive(args.file):
        if args.commitment is not None:
            return fail(f"--commitment checks an archive of croupier export; {args.file} is not one", 2)
        return reveal.run(args)
    if args.server:
        return fail("--server checks a reveal file; an archive is checked with nothing else", 2)
    committed = None
    if args.commitment is not None:
        given = Path(args.commitment)
        try:
            text = given.read_text(encoding="ascii") if given.is_file() else args.commitment
            committed = commitment.read_commitment(text)
        except (OSError, ValueError) as exc:
            return fail(f"--commitment: {exc}", 2)
    return audit.run(args.file, committed)
