"""Match journals: one append-only file of JSON lines per match.

The first line describes the match (game, options, players, clocks, the
SHA-256 of the seed); then one line per thing that changed the match, with
its referee time ``at`` (seconds since the match started); the last line,
``end``, holds the result and reveals the seed. Actions are stored in their
text form, so replaying is the same for every game: ``apply_record``.

Record kinds (``t``):
  match    the header                      start    play begins (at 0); its events are the game's opening
  act      a bot's accepted action         timeout  a clock ran out: the referee played ``action``
  auto     the referee played a forfeited seat
  refuse   a refused action (the game's penalty, if any, is re-applied from it)
  clock    time passed (the game's countdowns and windows: ``advance``)
  forfeit  a seat was forfeited            resume   a restarted referee took the match up again
  recount  every seat of a resumed real-time match is back: the countdown starts again (``at``)
  end      the result and the seed
  cancel   the admin called the match off (``reason``): the last record, no result, the seed
           kept secret (a tournament may deal it again) in the seed file, which stays

Durability: every record is written and flushed to the OS before anyone is
told of it, so a referee killed with SIGKILL loses nothing the bots saw; the
file is fsync'ed at the start and the end of a match only (an fsync per
decision would cost more than the decision). A machine crash may lose the
last records of running matches: they resume from an earlier point. A record
that cannot be written whole (a full disk) is cut off again and not applied
(``datafiles.Appender``), so the journal always ends with a whole record.

The seed of an unfinished match lives beside its journal in a private file
(mode 0600, replaced atomically) with the hashes of its seat tokens, for
resuming after a crash; it is deleted when the match ends. Journals are 0600
too: they hold discards and lockstep answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.engine.core import Event, GameSpec, GameState
from croupier.server.datafiles import Appender, replace_file

VERSION = 1

Record = dict[str, Any]

ACTION_RECORDS = frozenset({"act", "timeout", "auto"})


def seed_sha256(seed: int) -> str:
    return hashlib.sha256(str(seed).encode()).hexdigest()


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""One record as one compact line (one encoder for every write: ``json.dumps`` with options
builds a new one each call)."""


class JournalWriter:
    """Appends records; each is whole in the OS's cache when ``write`` returns, or not in the file at
    all and ``write`` raises ``OSError`` (a full disk): nobody may then be told of it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = Appender(path)

    def write(self, record: Record) -> None:
        self._file.append(_encode(record).encode() + b"\n")

    def sync(self) -> None:
        self._file.sync()

    def close(self) -> None:
        self._file.close()


def read_records(path: Path) -> list[Record]:
    """Every complete record; a last line cut short by a crash is dropped (nobody was told of it)."""
    return scan(path).records


@dataclass(frozen=True)
class Scan:
    """A journal read line by line, up to its first damaged line (if any)."""

    records: list[Record]
    lines: list[bytes]
    """The raw lines of ``records``: the valid prefix to keep if the rest is damaged."""
    damage: str
    """What is wrong after ``records`` ("" if nothing)."""

    def prefix(self, count: int) -> bytes:
        return b"".join(self.lines[:count])


def scan(path: Path) -> Scan:
    """The records of a journal up to the first line that is torn or not a record."""
    records: list[Record] = []
    lines: list[bytes] = []
    damage = ""
    with path.open("rb") as file:
        for number, line in enumerate(file, 1):
            if not line.endswith(b"\n"):
                damage = f"line {number} is cut short"
                break
            try:
                record = json.loads(line)
            except ValueError:
                damage = f"line {number} is not JSON"
                break
            if not isinstance(record, dict) or not isinstance(record.get("t"), str):
                damage = f"line {number} is not a journal record"
                break
            records.append(record)
            lines.append(line)
    return Scan(records, lines, damage)


def header_and_last(path: Path) -> tuple[Record, Record] | None:
    """The first and the last record, without reading the whole file; None unless both are sound and
    the file ends with a whole line (then read it whole: ``scan``)."""
    try:
        with path.open("rb") as file:
            header = json.loads(file.readline())
            size = file.seek(0, os.SEEK_END)
            chunk = min(size, 1 << 16)
            while True:
                file.seek(size - chunk)
                lines = file.read(chunk).split(b"\n")
                complete = lines[:-1]  # the part after the last newline: empty, or a torn line
                if len(complete) >= 2 or chunk == size:
                    break
                chunk = min(size, chunk * 4)
        last = json.loads(complete[-1])
    except (ValueError, IndexError):
        return None
    if lines[-1] or not isinstance(header, dict) or not isinstance(last, dict):
        return None
    return header, last


def twin_unfinished(path: Path) -> bool:
    """Whether another journal beside ``path`` deals from the same seed and is not over (no end or
    cancel record): the referee's sealing rule (``Referee.sealed``) read from the files, for whoever
    serves journals from disk while no referee answers. Such a match's hands, seed and record stay
    sealed, since a live or resumable twin is being dealt the same cards."""
    ends = header_and_last(path)
    digest = ends[0].get("seed_sha256") if ends else None
    if not digest:
        return False
    for other in path.parent.glob("*.jsonl"):
        if other == path:
            continue
        twin = header_and_last(other)
        if twin is None:  # torn or damaged: the referee resumes it up to the damage, so it may be live
            with contextlib.suppress(OSError, ValueError, AttributeError), other.open("rb") as file:
                if json.loads(file.readline()).get("seed_sha256") == digest:
                    return True
            continue
        if twin[0].get("seed_sha256") == digest and twin[1].get("t") not in ("end", "cancel"):
            return True
    return False


def write_private(path: Path, data: dict[str, Any]) -> None:
    """A file only the referee's user may read, whole on disk before this returns."""
    replace_file(path, json.dumps(data).encode())


def read_private(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def seed_beside(journal: Path) -> int | None:
    """The seed in the private file beside a journal (an unfinished match's), if it is there."""
    secret = journal.with_suffix(".secret")
    return int(read_private(secret)["seed"]) if secret.exists() else None


def apply_record(spec: GameSpec[Any], state: GameState[Any, Any], record: Record) -> list[Event]:
    """Re-apply one journal record to the engine: the one definition of what each kind does."""
    kind = record["t"]
    if kind in ACTION_RECORDS:
        return state.apply(record["seat"], spec.parse_action(record["action"]), record["at"])
    if kind == "refuse":
        return state.penalize(record["seat"], record["reason"], record["at"])
    if kind == "clock":
        return state.advance(record["at"])
    if kind == "recount":
        return state.recount(record["at"])
    if kind == "start":
        return list(state.opening)  # made by new_game: told at the start, like any other change
    return []


def replayed(spec: GameSpec[Any], options: Any, seed: int, records: list[Record]) -> GameState[Any, Any]:
    """The engine after a journal's records (the header is record 0)."""
    from croupier.engine.rng import Rng

    state = spec.new_game(options, Rng(seed))
    for record in records[1:]:
        apply_record(spec, state, record)
    return state


class ReplayMismatch(Exception):
    """A journal the engine does not reproduce."""


def replay_journal(path: Path, seed: int | None = None) -> tuple[GameState[Any, Any], list[Record]]:
    """Re-run a match from its journal; check the seed and, if it ended, its result.

    The seed comes from the journal's end, else from ``seed``. Raises
    ReplayMismatch if anything differs.
    """
    from croupier.engine.games import get_game
    from croupier.engine.rng import Rng

    records = read_records(path)
    if not records or records[0].get("t") != "match":
        raise ReplayMismatch(f"{path} does not start with a match header")
    header = records[0]
    end = records[-1] if records[-1]["t"] == "end" else None
    if end is not None:
        seed = end["seed"]
    if seed is None:
        raise ReplayMismatch(f"{path}: the match has not ended, so its seed is not in the journal; give it")
    if seed_sha256(seed) != header["seed_sha256"]:
        raise ReplayMismatch(f"{path}: the seed {seed} does not match the published hash")
    spec = get_game(header["game"])
    state = spec.new_game(spec.options(header["options"]), Rng(seed))
    for record in records[1:]:
        try:
            apply_record(spec, state, record)
        except ValueError as exc:
            raise ReplayMismatch(f"{path}: record {record} does not apply: {exc}") from None
    if end is not None:
        if not state.is_over():
            raise ReplayMismatch(f"{path}: the replayed match is not over where the journal ends it")
        outcome = state.outcome()
        recorded = (end["scores"], end["engine_places"])
        if (list(outcome.scores), list(outcome.places)) != (recorded[0], recorded[1]):
            raise ReplayMismatch(
                f"{path}: replay gives scores {list(outcome.scores)} places {list(outcome.places)}, "
                f"the journal says scores {recorded[0]} places {recorded[1]}"
            )
    return state, records
