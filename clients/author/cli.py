"""The ``croupier match`` command: a match between bots (match_run.py), or with ``--sprt`` a sequential
test of the first bot against the second (sprt_run.py). Kept apart so that neither imports the other's
command line the wrong way round: sprt_run.py builds on match_run.py's reading of bots and options."""

from __future__ import annotations

import argparse

from croupier.clients.author import match_run as match
from croupier.clients.author import sprt_run as sprt

__doc__ = f"{match.__doc__}\nWith --sprt: {sprt.__doc__}"  # what `croupier match --help` explains


def add_arguments(parser: argparse.ArgumentParser) -> None:
    match.add_arguments(parser)
    sprt.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.human and (args.sprt or args.in_process):
        from croupier.clients.results.ratings_cli import fail

        return fail(
            "croupier match: --human seats you in the browser, on a referee: not with --sprt or --in-process",
            2,
        )
    return sprt.run(args) if args.sprt else match.run(args)
