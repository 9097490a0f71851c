"""The ``croupier`` command: one entry point, a subcommand per job.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and
``run(args) -> int``; only the module of the subcommand asked for is imported (a bot started
with ``croupier bot`` loads no referee code), and modules keep heavy imports inside ``run``
so ``--help`` is quick.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# grpc's core writes INFO lines to stderr unless told otherwise (a fork while its threads run, a
# peer's GOAWAY): they would break the one-line errors every command gives. Its errors still show.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

IN_PROCESS = {"tournament": "croupier.clients.author.tournament_cli"}
"""Commands whose ``--in-process`` runs are another module's: the author's loop (clients/author/),
which the command's own room may not import."""

# name -> (module with `add_arguments(parser)` and `run(args) -> int`, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("croupier.server.cli", "run a referee: bots, spectators and admins connect to it over gRPC"),
    "bot": (
        "croupier.clients.bots.cli",
        "play on a referee: a bundled bot (random, heuristic, boss-1, boss-2) or your own Bot class",
    ),
    "check-bot": (
        "croupier.clients.checkbot.cli",
        "take a bot in any language through the protocol's corner cases, check by check",
    ),
    "watch": (
        "croupier.clients.terminal.watch",
        "watch a live match: the table, hands, scores, clock and last events",
    ),
    "replay": (
        "croupier.clients.terminal.replay_cli",
        "step through a finished match, every hand shown (--check: verify journals)",
    ),
    "review": (
        "croupier.clients.terminal.review_cli",
        "could I have won? a boss replays each of your decisions in a finished match and marks better ones",
    ),
    "web": (
        "croupier.clients.web.cli",
        "watch matches in a browser: live tables, replays, tournament pages",
    ),
    "tournament": (
        "croupier.clients.tournament.cli",
        "run or resume a duplicate round-robin tournament (TOML file)",
    ),
    "ladder": (
        "croupier.clients.ladder.cli",
        "run a standing arena: every registered bot that connects plays rated sets, scheduled by information",
    ),
    "ratings": (
        "croupier.clients.results.ratings_cli",
        "print every game's Elo ratings from the results database",
    ),
    "match": (
        "croupier.clients.author.cli",
        "play a game between bots (bundled, or any command) on an embedded referee: results and ratings",
    ),
    "register": ("croupier.clients.register", "register a bot on a referee and print its token"),
    "revoke": ("croupier.clients.revoke", "revoke a version of your bot: its token opens nothing more"),
    "matches": (
        "croupier.clients.results.matches_cli",
        "list the matches in the results database: ids, seats, scores (then croupier replay ID)",
    ),
    "export": (
        "croupier.clients.audit.archive",
        "write a finished tournament run in one archive for anyone to audit: schedule, journals, results",
    ),
    "verify": (
        "croupier.clients.audit.cli",
        "audit a tournament run from its archive alone (or check a reveal file's deals)",
    ),
}


class Version(argparse.Action):
    """``--version``: this package's version, the identity of its code (a cluster's workers must
    show the same), and which build of the hot path runs (compiled by mypyc, or pure Python and
    why), found only when asked (it imports the engine)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        from croupier.clients.author.cluster import code_identity
        from croupier.wire import native

        try:
            number = version("croupier")
        except PackageNotFoundError:
            number = "(not installed)"
        print(f"croupier {number} (code {code_identity()}); hot path: {native.build()}")
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="croupier",
        description="Croupier: a referee for card-game bots (gRPC), tournaments and ratings.",
    )
    parser.add_argument(
        "--version", action=Version, nargs=0, help="the version, and whether the hot path is compiled"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    words = sys.argv[1:] if argv is None else list(argv)
    asked = next((word for word in words if not word.startswith("-")), None)  # no option takes a value
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        if name != asked:
            commands.add_parser(name, help=help_text)  # listed in --help; never parsed
            continue
        module = importlib.import_module(module_name)
        # The module's docstring explains the subcommand at length; the list shows the one line.
        sub = commands.add_parser(
            name,
            help=help_text,
            description=(module.__doc__ or help_text).replace("``", ""),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(module=module_name)
        module.add_arguments(sub)
    args = parser.parse_args(argv)
    if getattr(args, "in_process", False) and args.command in IN_PROCESS:
        args.module = IN_PROCESS[args.command]
    code: int = importlib.import_module(args.module).run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
