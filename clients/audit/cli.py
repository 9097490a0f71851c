"""``croupier verify FILE``: a whole tournament run audited from its archive, or a reveal's deals.

Given an archive of ``croupier export`` (a .tar.gz), the whole run is checked from it alone,
with no referee: the schedule against the commitment published at its start (``--commitment``),
every deal against the secret, every journal replayed through the engine to its result, every
seat's result, that no scheduled match is missing or added, and the ratings (archive_check.py).

Given a reveal file (``DATA/reveals/NAME-RUN.json``), only its deals are checked: every seed
against the secret and its commitment, and with ``--server`` against what a referee publishes
(reveal.py); a ladder's epoch (``croupier ladder``) with ``--commitment``: also that the secret and
the luck value functions are the ones committed to when the epoch opened, and each seat's luck is
recomputed from the journals (epoch_check.py).

Exit status: 0 verified, 1 a problem found (one line each, naming the match and what differs),
2 a file that cannot be checked.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from croupier.clients.audit import reveal


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
        "or the file holding them: DATA/reveals/NAME-RUN.schedule.sha256); with a ladder epoch's reveal "
        "file: the one published when the epoch opened (DATA/reveals/NAME-EPOCH.commitment.sha256)",
    )
    parser.add_argument(
        "--journals",
        type=Path,
        action="append",
        metavar="DIR",
        help="with a ladder epoch's reveal file: also look for the matches' journals (MATCH_ID.jsonl) here, "
        "to recompute each seat's luck (default: the matches folder beside the reveals folder)",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        action="append",
        help="with a reveal file: also check against what this referee publishes (repeatable: each replica)",
    )


def run(args: argparse.Namespace) -> int:
    from croupier.clients.audit import archive_check as audit
    from croupier.clients.results.ratings_cli import fail

    committed = None
    if args.commitment is not None:
        try:
            committed = _commitment(args.commitment)
        except (OSError, ValueError) as exc:
            return fail(f"--commitment: {exc}", 2)
    if not audit.is_archive(args.file):  # with a commitment: a ladder's epoch, its secret's
        return reveal.run(args, secret_sha256=committed)
    if args.server:
        return fail("--server checks a reveal file; an archive is checked with nothing else", 2)
    return audit.run(args.file, committed)


def _commitment(given: str) -> str:
    """The 64 hex digits given, or read from the file named (``sha256sum`` form)."""
    from croupier.clients.audit import commitment

    path = Path(given)
    return commitment.read_commitment(path.read_text(encoding="ascii") if path.is_file() else given)
