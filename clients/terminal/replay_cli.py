"""``croupier replay``: step through a finished match, every hand shown, or check journals.

A match comes from its journal (a file, or its id in the data directory),
re-run here with the engine, which also says whether the re-run reproduces
the recorded result; or from a referee (``--server``), which re-runs its own
journal. ``--check`` is the non-interactive check for scripts: each journal is
re-run and compared with its recorded result (exit code 1 if any differs). ``--fork STEP
--bot SPEC...`` plays a finished match on from a step (``clients/terminal/fork_cli.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported in run(): `croupier --help` stays quick
    from rich.console import Console

    from croupier.clients.scenes import Replay

DEFAULT_DATA = Path("croupier-data")
KEYS = "→/n/space next · ←/p back · ↓/↑ 10 steps · Home/g first · End/G last · q quit"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="MATCH",
        help="a journal file (DATA/matches/<id>.jsonl), or a match id (in --data, else asked of --server)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="no viewer: re-run each journal and check it reproduces its recorded result (exit 1 if not)",
    )
    parser.add_argument(
        "--seed", type=int, help="the seed of an unfinished match (else read from its .secret file beside it)"
    )
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="the referee's data directory (default: %(default)s)"
    )
    parser.add_argument(
        "--server",
        default=os.environ.get("CROUPIER_SERVER"),
        help="ask this referee (HOST:PORT) for a match not found in --data (default: $CROUPIER_SERVER)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="lets --server show a match that is still running (default: $CROUPIER_ADMIN_TOKEN)",
    )
    parser.add_argument(
        "--at",
        type=int,
        help="print this step (1 the start; negative from the end, -1 the last) and exit; "
        "the default on a terminal is the interactive viewer, elsewhere the last step",
    )
    parser.add_argument("--tls-ca", type=Path, help="PEM root certificate for --server: connect with TLS")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write the replay as one self-contained web page that opens offline, and exit",
    )
    parser.add_argument(
        "--fork",
        type=int,
        metavar="STEP",
        help="play a finished match on from this step (as --at counts them) with the same deal and "
        "history, one --bot per seat from there; never rated (docs/spectator.md)",
    )
    parser.add_argument(
        "--bot",
        action="append",
        metavar="SPEC",
        help="with --fork: a seat's bot from the step on, as croupier match takes them (random, "
        "heuristic, or a command), or human: you, in the browser; one per seat, in seat order",
    )
    parser.add_argument(
        "--human",
        action="store_true",
        help="with --fork: you play the first seat, in the browser (a link to it is printed), the "
        "--bots the others; a minute a move and five in the bank",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console()
    if args.check:
        return _check(args, console)
    if len(args.sources) > 1:
        console.print("croupier replay: the viewer shows one match at a time (--check takes several)")
        return 2
    if args.fork is not None:
        import asyncio

        from croupier.clients.terminal.fork_cli import fork

        return asyncio.run(fork(args, console, _journal(args, args.sources[0])))
    if args.bot or args.human:
        console.print("croupier replay: --bot and --human play a fork: give --fork STEP too")
        return 2
    try:
        replay = _load(args, args.sources[0])
    except (OSError, ValueError, LookupError) as exc:
        console.print(f"croupier replay: {exc}")
        return 1
    if not replay.scenes:
        console.print(f"croupier replay: match {replay.header.match_id} has no steps to show yet")
        return 1
    if args.html is not None:
        return _export(console, replay, args.html)
    if args.at is not None or not (sys.stdin.isatty() and console.is_terminal):
        return _print_step(console, replay, -1 if args.at is None else args.at)
    return view(console, replay)


def _export(console: Console, replay: Replay, path: Path) -> int:
    from croupier.clients.web.frames import replay_json
    from croupier.clients.web.html_file import replay_page, write_page

    try:
        write_page(path, replay_page(replay_json(replay)))
    except OSError as exc:
        console.print(f"croupier replay: cannot write {path}: {exc}")
        return 1
    console.print(
        f"wrote {path}: {len(replay.scenes)} steps of match {replay.header.match_id}, opens offline"
    )
    return 0


def _journal(args: argparse.Namespace, source: str) -> Path | None:
    from croupier.clients.scenes import JOURNAL_FOLDERS

    path = Path(source)
    if path.is_file():
        return path
    for folder in JOURNAL_FOLDERS:
        in_data: Path = args.data / folder / f"{source}.jsonl"
        if in_data.is_file():
            return in_data
    return None


def _not_found(args: argparse.Namespace, source: str) -> str:
    from croupier.clients.scenes import JOURNAL_FOLDERS

    folders = " nor ".join(f"{args.data}/{folder}/{source}.jsonl" for folder in JOURNAL_FOLDERS)
    return f"no journal {source!r} (nor {folders})"


def _check(args: argparse.Namespace, console: Console) -> int:
    """The journal check of ``server/replay.py``, on files or match ids."""
    from croupier.server import replay as journal_check

    paths = []
    for source in args.sources:
        path = _journal(args, source)
        if path is None:
            console.print(f"croupier replay: {_not_found(args, source)}")
            return 1
        paths.append(path)
    return journal_check.run(argparse.Namespace(journals=paths, seed=args.seed))


def _load(args: argparse.Namespace, source: str) -> Replay:
    from croupier.clients.scenes import from_journal

    path = _journal(args, source)
    if path is not None:
        return from_journal(path, args.seed)
    if args.server is None:
        raise LookupError(f"{_not_found(args, source)}; give --server to ask a referee")
    return _from_server(args, source)


def _from_server(args: argparse.Namespace, match_id: str) -> Replay:
    import grpc

    from croupier.clients.scenes import RECORD_BYTES, from_record
    from croupier.v1 import spectator_pb2, spectator_pb2_grpc

    credentials = grpc.ssl_channel_credentials(args.tls_ca.read_bytes()) if args.tls_ca else None
    # GetRecord is one message: a normal match is under 150 kB, but every refused move is a frame
    # (~8000 of a flooding bot pass gRPC's 4 MB default in Platinum Fish: bench/record_size.py).
    options = [("grpc.max_receive_message_length", RECORD_BYTES)]
    channel = (
        grpc.secure_channel(args.server, credentials, options=options)
        if credentials
        else grpc.insecure_channel(args.server, options=options)
    )
    metadata = (("croupier-token", args.admin_token),) if args.admin_token else ()
    with channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        try:
            record = stub.GetRecord(spectator_pb2.GetRecordRequest(match_id=match_id), metadata=metadata)
        except grpc.RpcError as exc:
            raise LookupError(f"{args.server}: {exc.code().name}: {exc.details()}") from None
    return from_record(record)


def _print_step(console: Console, replay: Replay, at: int) -> int:
    from croupier.clients.terminal.render import render

    count = len(replay.scenes)
    if at == 0 or not -count <= at <= count:
        console.print(
            f"croupier replay: there are {count} steps: --at takes 1 to {count} (or -1 to -{count})"
        )
        return 2
    index = at - 1 if at > 0 else count + at
    console.print(render(replay.header, replay.scenes[index], footer=f"step {index + 1} of {count}"))
    return 0


def view(console: Console, replay: Replay) -> int:
    """The interactive viewer: one step on screen, moved by keys, until q."""
    from rich.console import RenderableType
    from rich.live import Live

    from croupier.clients.terminal.render import render

    index, count = 0, len(replay.scenes)

    def screen() -> RenderableType:
        return render(replay.header, replay.scenes[index], footer=f"step {index + 1} of {count} · {KEYS}")

    with _raw_keys() as keys, Live(screen(), console=console, screen=True, auto_refresh=False) as live:
        for key in keys:
            move = MOVES.get(key)
            if move == "quit":
                break
            if move == "first":
                index = 0
            elif move == "last":
                index = count - 1
            elif move in STEPS:
                index = min(count - 1, max(0, index + STEPS[move]))
            else:
                continue
            live.update(screen(), refresh=True)
    return 0


MOVES = {
    "right": "next", "n": "next", " ": "next", "l": "next",
    "left": "back", "p": "back", "b": "back", "h": "back",
    "down": "ahead", "pagedown": "ahead", "up": "behind", "pageup": "behind",
    "home": "first", "g": "first", "end": "last", "G": "last",
    "q": "quit", "escape": "quit", "ctrl-c": "quit",
}  # fmt: skip
STEPS = {"next": 1, "back": -1, "ahead": 10, "behind": -10}
ESCAPES = {
    "\x1b[C": "right", "\x1b[D": "left", "\x1b[A": "up", "\x1b[B": "down",
    "\x1b[H": "home", "\x1b[F": "end", "\x1b[1~": "home", "\x1b[4~": "end", "\x1bOH": "home", "\x1bOF": "end",
    "\x1b[5~": "pageup", "\x1b[6~": "pagedown", "\x1b": "escape", "\x03": "ctrl-c",
}  # fmt: skip
SEQUENCES = sorted(ESCAPES, key=len, reverse=True)
"""Longest first: an arrow's escape sequence before a lone Escape."""


class _raw_keys:
    """The terminal's keys, one name each, without echo or line buffering, until closed."""

    def __enter__(self) -> _raw_keys:
        import termios
        import tty

        self.fd = sys.stdin.fileno()
        self.saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        import termios

        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def __iter__(self) -> Iterator[str]:
        while data := os.read(self.fd, 64).decode(errors="replace"):  # empty: the terminal is gone
            while data:  # keys typed quickly arrive together
                name = next((seq for seq in SEQUENCES if data.startswith(seq)), data[0])
                data = data[len(name) :]
                yield ESCAPES.get(name, name)
