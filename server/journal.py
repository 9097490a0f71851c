"""Match journals: one append-only file of JSON lines per match. Over 600 lines: the one format,
every record's reading, writing and migration in one place (no other code knows their JSON).

The first line describes the match (game, options, players, clocks, the
SHA-256 of the seed); then one line per thing that changed the match, with
its referee time ``at`` (seconds since the match started); the last line,
``end``, holds the result and reveals the seed. Actions are stored in their
text form, so replaying is the same for every game: ``apply_record``.

Record kinds (``t``), one frozen class each (``Record``; ``to_json`` and ``from_json`` are the only
code that knows their JSON, so what is written stays what it always was):
  match    the header                      start    play begins (at 0); its events are the game's opening
  act      a bot's move (and comment)      timeout  a clock ran out: the referee played ``action``
  auto     the referee played a forfeited seat
  refuse   a refused action (the game's penalty, if any, is re-applied from it)
  clock    time passed (the game's countdowns and windows: ``advance``)
  forfeit  a seat was forfeited            resume   a restarted referee took the match up again
  recount  every seat of a resumed real-time match is back: the countdown starts again (``at``)
  end      the result and the seed
  cancel   the admin called the match off (``reason``): the last record, no result, the seed
           kept secret (a tournament may deal it again) in the seed file, which stays
  fork     a forked match's own play begins (the header's ``forked_from``): the records before it
           are its original's, replayed as they were; every seat's clock and strikes start over

Durability: every record is written and flushed to the OS before anyone is
told of it, so a referee killed with SIGKILL loses nothing the bots saw; the
file is fsync'ed at the start and the end of a match only (an fsync per
decision would cost more than the decision). A machine crash may lose the
last records of running matches: they resume from an earlier point. A record
that cannot be written whole (a full disk) is cut off again and not applied
(``datafiles.Appender``), so the journal always ends with a whole record.

The header's ``version`` is ``VERSION``; a journal of an older version is migrated as it is read
(``MIGRATIONS``; an unfinished one is rewritten in today's version when the referee resumes it), one of a
newer version is refused (the match is listed DAMAGED, its files left as they are).

The seed of an unfinished match lives beside its journal in a private file
(mode 0600, replaced atomically) with the hashes of its seat tokens, for
resuming after a crash; it is deleted when the match ends. Journals are 0600
too: they hold discards and lockstep answers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, assert_never, get_type_hints

from croupier.engine.core import Event, GameSpec, GameState
from croupier.server.clocks import Clocks
from croupier.server.datafiles import Appender, replace_file
from croupier.wire.errors import clip

_T = TypeVar("_T")

QUOTED = 80
"""The most characters of a damaged line a reason quotes."""

VERSION = 2
"""The journal format this code writes (the header's ``version``) and reads; older ones are migrated
in memory (``MIGRATIONS``), newer ones refused. Version 2 added an act's ``comment``, the header's
``forked_from`` and the ``fork`` record: a referee of version 1 would have read them as damage and
cut the journal there, where it now refuses the whole journal and leaves it as it is."""

MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: lambda record: record}
"""``MIGRATIONS[n]`` turns one record of a version ``n`` journal (its JSON object) into version
``n + 1``'s. Add one, and bump VERSION, with every change a journal written today would not read back
as it was (a renamed or retyped field, a new required one, a kind that changed its meaning), or that
an older Croupier would misread. (1 to 2: every version 1 record is a version 2 record as it is.)"""


# --- the records -----------------------------------------------------------------------------------


class RecordError(ValueError):
    """A journal line that is not a record this code knows; the message says why (after "line N")."""


class VersionError(RecordError):
    """A journal of a version this code cannot read."""


@dataclass(frozen=True, slots=True)
class Seated:
    """A player as the header names it."""

    name: str
    bot_id: str


@dataclass(frozen=True, slots=True)
class Header:
    """The first record: the match as created (never its seed, only the seed's SHA-256)."""

    KIND: ClassVar[str] = "match"
    match_id: str
    game: str
    options: dict[str, Any]
    players: tuple[Seated, ...]
    clocks: Clocks
    seed_sha256: str
    created_ms: int
    version: int = VERSION
    forked_from: str = ""
    """"ID@STEP" for a fork (``server/forks.py``; no key otherwise): the match and step it plays on from."""

    @property
    def at(self) -> float:
        return 0.0


@dataclass(frozen=True, slots=True)
class Timed:
    """A record of something that happened at referee time ``at`` (seconds since the start)."""

    KIND: ClassVar[str]
    at: float


@dataclass(frozen=True, slots=True)
class Start(Timed):
    """Play begins (at 0); its events are the game's opening."""

    KIND = "start"


@dataclass(frozen=True, slots=True)
class Played(Timed):
    """An action played for ``seat``, in its text form (``GameSpec.parse_action`` reads it back)."""

    seat: int
    action: str


@dataclass(frozen=True, slots=True)
class Act(Played):
    """A bot's accepted action: its decision, how long it thought, its time bank after."""

    KIND = "act"
    decision_id: int = field(metadata={"key": "d"})
    think: float
    bank: float
    comment: str = field(default="", metadata={"optional": True})
    """What the bot said of its move for its author (``Move.comment``); "" (no key) if nothing."""


@dataclass(frozen=True, slots=True)
class Timeout(Played):
    """A seat's clock ran out on ``decision_id``: the referee played ``action``."""

    KIND = "timeout"
    decision_id: int = field(metadata={"key": "d"})


@dataclass(frozen=True, slots=True)
class Auto(Played):
    """The referee played for a forfeited seat."""

    KIND = "auto"


@dataclass(frozen=True, slots=True)
class Refuse(Timed):
    """A refused move (``action``: what was tried, maybe no action at all); the game's penalty, if any,
    is re-applied from it."""

    KIND = "refuse"
    seat: int
    reason: str
    action: str


@dataclass(frozen=True, slots=True)
class Clock(Timed):
    """Time passed: the game's countdowns and windows (``GameState.advance``)."""

    KIND = "clock"


@dataclass(frozen=True, slots=True)
class Recount(Timed):
    """Every seat of a resumed real-time match is back: the countdown starts again."""

    KIND = "recount"


@dataclass(frozen=True, slots=True)
class Forfeit(Timed):
    """A seat was forfeited (``reason``: "timeouts", "refusals", "disconnected")."""

    KIND = "forfeit"
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class Resume(Timed):
    """A restarted referee took the match up again."""

    KIND = "resume"


@dataclass(frozen=True, slots=True)
class Fork(Timed):
    """A forked match's own play begins here (at its original's time): seats start afresh."""

    KIND = "fork"


@dataclass(frozen=True, slots=True)
class End(Timed):
    """The last record of a finished match: its result, and the seed revealed."""

    KIND = "end"
    seed: int
    scores: tuple[int, ...]
    engine_places: tuple[int, ...]
    places: tuple[int, ...]
    timeouts: tuple[int, ...]
    refusals: tuple[int, ...]
    forfeited: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cancel(Timed):
    """The admin called the match off: the last record, no result, the seed kept secret."""

    KIND = "cancel"
    reason: str
    forfeited: tuple[str, ...]


Record = (
    Header | Start | Act | Timeout | Auto | Refuse | Clock | Recount | Forfeit | Resume | Fork | End | Cancel
)
"""One journal line. A new kind goes here, in ``KINDS`` and in every ``match`` on records (mypy
checks that each one handles it)."""

KINDS: dict[str, type[Record]] = {
    kind.KIND: kind
    for kind in (
        Header,
        Start,
        Act,
        Timeout,
        Auto,
        Refuse,
        Clock,
        Recount,
        Forfeit,
        Resume,
        Fork,
        End,
        Cancel,
    )
}

CLOSING = (End, Cancel)
"""The records that end a match: nothing may follow them."""


def _checker(kind: Any) -> Callable[[Any], bool]:
    """Whether a JSON value fits a record field's type (one of the few the records use)."""
    if kind is int:
        return lambda v: type(v) is int
    if kind is float:  # an int is a float here (PEP 484), kept as it was so it encodes back the same
        return lambda v: type(v) in (int, float)
    if kind is str:
        return lambda v: type(v) is str
    if kind == tuple[int, ...]:
        return lambda v: type(v) is list and all(type(x) is int for x in v)
    if kind == tuple[str, ...]:
        return lambda v: type(v) is list and all(type(x) is str for x in v)
    raise TypeError(f"no JSON check for {kind}")  # a new field type: add its check here


_Shape = tuple[tuple[str, str, Callable[[Any], bool], bool, bool], ...]


def _shape(kind: type[Timed]) -> _Shape:
    """Per field of a timed record: its name, its JSON key, its check, whether it is a tuple, and
    whether it is optional (no key when it holds its default: journals without it read the same,
    and a record that does not use it writes the line it always did)."""
    hints = get_type_hints(kind)
    return tuple(
        (f.name, f.metadata.get("key", f.name), _checker(hint), hint in _TUPLES, "optional" in f.metadata)
        for f, hint in ((f, hints[f.name]) for f in dataclasses.fields(kind))
    )


_TUPLES = (tuple[int, ...], tuple[str, ...])
_SHAPES: dict[type[Any], _Shape] = {kind: _shape(kind) for kind in KINDS.values() if issubclass(kind, Timed)}


def to_json(record: Record) -> dict[str, Any]:
    """A record as the JSON object its journal line holds (keys in the order they always had)."""
    if isinstance(record, Header):
        header = {
            "t": Header.KIND,
            "version": record.version,
            "match_id": record.match_id,
            "game": record.game,
            "options": record.options,
            "players": [{"name": p.name, "bot_id": p.bot_id} for p in record.players],
            "clocks": dataclasses.asdict(record.clocks),
            "seed_sha256": record.seed_sha256,
            "created_ms": record.created_ms,
        }
        return {**header, "forked_from": record.forked_from} if record.forked_from else header
    data: dict[str, Any] = {"t": record.KIND}
    for name, key, _check, _tuple, optional in _SHAPES[type(record)]:
        value = getattr(record, name)
        if not (optional and not value):
            data[key] = value
    return data


def from_json(data: Any) -> Record:
    """The record a journal line's JSON object (of this VERSION) holds; RecordError if it is none."""
    kind = data.get("t") if isinstance(data, dict) else None
    if not isinstance(kind, str):
        raise RecordError("is not a journal record")
    cls = KINDS.get(kind)
    if cls is None:
        raise RecordError(f"is a record of unrecognized kind {_quoted(kind)}")
    if cls is Header:
        return _header(data)
    values: dict[str, Any] = {}
    for name, key, check, is_tuple, optional in _SHAPES[cls]:
        if optional and key not in data:
            continue
        value = data.get(key)
        if not check(value) or (optional and not value):  # an empty one is written as no key
            raise RecordError(f"is {_a(kind)} {kind} record whose {key} is {_missing(key, data)}")
        values[name] = tuple(value) if is_tuple else value
    if len(data) != len(values) + 1:
        extra = sorted(set(data) - {"t", *(shape[1] for shape in _SHAPES[cls])})
        raise RecordError(f"is {_a(kind)} {kind} record with unknown fields {clip(', '.join(extra), QUOTED)}")
    return cls(**values)


def _header(data: dict[str, Any]) -> Header:
    try:
        players = tuple(Seated(_text(p["name"]), _text(p["bot_id"])) for p in data["players"])
        header = Header(
            match_id=_text(data["match_id"]),
            game=_text(data["game"]),
            options=dict(data["options"]),
            players=players,
            clocks=Clocks(**data["clocks"]),
            seed_sha256=_text(data["seed_sha256"]),
            created_ms=_typed(data["created_ms"], int),
            version=_typed(data["version"], int),
            forked_from=_text(data.get("forked_from", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:  # InvalidArgument (clocks out of range) is one
        raise RecordError(f"is a match header that cannot be read ({_quoted(exc)})") from None
    if header.version != VERSION:  # read_line migrates first
        raise VersionError(f"is journal version {header.version}, not {VERSION}: it was not migrated")
    return header


def _text(value: Any) -> str:
    return _typed(value, str)


def _typed(value: Any, kind: type[_T]) -> _T:
    if type(value) is not kind:
        raise TypeError(f"{value!r} is not {kind.__name__}")
    result: _T = value
    return result


def _a(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"


def _missing(key: str, data: dict[str, Any]) -> str:
    return f"{_quoted(data[key])}, not of its type" if key in data else "missing"


def _quoted(value: Any) -> str:
    """A value from a damaged file, short enough for a one-line reason."""
    return clip(repr(value), QUOTED)


def migrated(data: Any, version: Any) -> Any:
    """One record of a version ``version`` journal as this VERSION writes it (VersionError if the
    version is newer than this code, or one it never wrote)."""
    if version == VERSION:
        return data
    if type(version) is not int or version < 1 or any(v not in MIGRATIONS for v in range(version, VERSION)):
        raise VersionError(f"is journal version {version!r}, which no Croupier wrote")
    if version > VERSION:
        raise VersionError(
            f"is journal version {version}, newer than this Croupier reads ({VERSION}): upgrade Croupier"
        )
    for older in range(version, VERSION):
        data = MIGRATIONS[older](data)
        if isinstance(data, dict) and data.get("t") == Header.KIND:
            data = {**data, "version": older + 1}
    return data


def version_of(header: Any) -> Any:
    """The version a journal's first line says it is written in (VERSION if that line is no header:
    ``from_json`` says so)."""
    if isinstance(header, dict) and header.get("t") == Header.KIND:
        return header.get("version")
    return VERSION


def read_line(data: Any, version: Any) -> Record:
    """A journal line's JSON object, of a journal in ``version``, as a record of today's format."""
    return from_json(migrated(data, version))


def seed_sha256(seed: int) -> str:
    return hashlib.sha256(str(seed).encode()).hexdigest()


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""One record as one compact line (one encoder for every write: ``json.dumps`` with options
builds a new one each call)."""


def encode(record: Record) -> bytes:
    """A record's journal line, newline included."""
    if type(record) is Act:
        line = _act_line(record)
        if line is not None:
            return line
    return _encode(to_json(record)).encode() + b"\n"


_string = json.encoder.encode_basestring  # a str as json writes it (ensure_ascii=False), in C
_NUMBERS = (float, int)
_ACT_KEYS = ["at", "seat", "action", "d", "think", "bank", "comment"]
assert [shape[1] for shape in _SHAPES[Act]] == _ACT_KEYS, "Act changed: change _act_line too"


def _act_line(act: Act) -> bytes | None:
    """An act's line as json writes it (an int and a finite float as their ``repr``), without its dict
    or the encoder's Python: a decision's record, at a third of the cost. None for a value it may
    not write as json does (then json writes it)."""
    at, think, bank = act.at, act.think, act.bank
    numbers = type(at) in _NUMBERS and type(think) in _NUMBERS and type(bank) in _NUMBERS
    if not (numbers and at - at == think - think == bank - bank == 0):  # not NaN nor infinite
        return None
    seat, action, decision, comment = act.seat, act.action, act.decision_id, act.comment
    ints = type(seat) is int and type(decision) is int
    if not (ints and type(action) is str and type(comment) is str):
        return None
    note = f',"comment":{_string(comment)}' if comment else ""  # rare: a bot that explains itself
    return (
        f'{{"t":"act","at":{at!r},"seat":{seat!r},"action":{_string(action)},"d":{decision!r},'
        f'"think":{think!r},"bank":{bank!r}{note}}}\n'
    ).encode()


class JournalWriter:
    """Appends records; each is whole in the OS's cache when ``write`` returns, or not in the file at
    all and ``write`` raises ``OSError`` (a full disk): nobody may then be told of it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = Appender(path)

    def write(self, record: Record) -> None:
        self._file.append(encode(record))

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
    """The lines of ``records`` (as this VERSION writes them): the valid prefix to keep if the rest
    is damaged."""
    damage: str
    """What is wrong after ``records`` ("" if nothing)."""
    version: int = VERSION
    """The version the journal was written in (its records are migrated to VERSION)."""

    def prefix(self, count: int) -> bytes:
        return b"".join(self.lines[:count])

    @property
    def migrated(self) -> bool:
        """Whether the records were migrated from an older version than the one this code writes."""
        return self.version != VERSION


def scan(path: Path) -> Scan:
    """The records of a journal up to the first line that is torn or not a record; the first must be
    the match header, of a version this code reads (if not, no records)."""
    records: list[Record] = []
    lines: list[bytes] = []
    damage = ""
    version = VERSION
    with path.open("rb") as file:
        for number, line in enumerate(file, 1):
            if not line.endswith(b"\n"):
                damage = f"line {number} is cut short"
                break
            try:
                data = json.loads(line)
            except ValueError:
                damage = f"line {number} is not JSON"
                break
            try:
                if number == 1:
                    version = version_of(data)
                record = read_line(data, version)
                if (number == 1) != isinstance(record, Header):
                    raise RecordError(
                        f"is a {record.KIND} record" + ("" if number == 1 else " after the header")
                    )
            except VersionError as exc:
                return Scan([], [], f"line {number} {exc}", version)
            except RecordError as exc:
                damage = f"line {number} {exc}"
                break
            records.append(record)
            lines.append(line if version == VERSION else encode(record))
    if damage and not records:
        damage += ": no match header"
    return Scan(records, lines, damage, version)


def header_and_last(path: Path) -> tuple[Header, Record] | None:
    """The first and the last record, without reading the whole file; None unless both are sound and
    the file ends with a whole line (then read it whole: ``scan``)."""
    try:
        with path.open("rb") as file:
            first = json.loads(file.readline())
            size = file.seek(0, os.SEEK_END)
            chunk = min(size, 1 << 16)
            while True:
                file.seek(size - chunk)
                lines = file.read(chunk).split(b"\n")
                complete = lines[:-1]  # the part after the last newline: empty, or a torn line
                if len(complete) >= 2 or chunk == size:
                    break
                chunk = min(size, chunk * 4)
        version = version_of(first)
        header, last = read_line(first, version), read_line(json.loads(complete[-1]), version)
    except (ValueError, IndexError):  # RecordError is a ValueError
        return None
    if lines[-1] or not isinstance(header, Header):
        return None
    return header, last


def twin_unfinished(path: Path) -> bool:
    """Whether another journal beside ``path`` deals from the same seed and is not over (no end or
    cancel record): the referee's sealing rule (``Referee.sealed``) read from the files, for whoever
    serves journals from disk while no referee answers. Such a match's hands, seed and record stay
    sealed, since a live or resumable twin is being dealt the same cards. A fork seals nothing
    (its deal was public when it was made: ``server/forks.py``)."""
    ends = header_and_last(path)
    if ends is None:
        return False
    digest = ends[0].seed_sha256
    for other in path.parent.glob("*.jsonl"):
        if other == path:
            continue
        twin = header_and_last(other)
        if twin is None:  # torn or damaged: the referee resumes it up to the damage, so it may be live
            with contextlib.suppress(OSError, ValueError, AttributeError), other.open("rb") as file:
                first = json.loads(file.readline())
                if first.get("seed_sha256") == digest and not first.get("forked_from"):
                    return True
            continue
        if twin[0].seed_sha256 == digest and not twin[0].forked_from and not isinstance(twin[1], CLOSING):
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
    match record:
        case Act() | Timeout() | Auto():
            return state.apply(record.seat, spec.parse_action(record.action), record.at)
        case Refuse():
            return state.penalize(record.seat, record.reason, record.at)
        case Clock():
            return state.advance(record.at)
        case Recount():
            return state.recount(record.at)
        case Start():
            return list(state.opening)  # made by new_game: told at the start, like any other change
        case Header() | Forfeit() | Resume() | Fork() | End() | Cancel():
            return []  # the engine has no part in them
        case _:
            assert_never(record)


def replayed(spec: GameSpec[Any], options: Any, seed: int, records: list[Record]) -> GameState[Any, Any]:
    """The engine after a journal's records (the header is record 0)."""
    from croupier.engine.rng import Rng

    state = spec.new_game(options, Rng(seed))
    for record in records[1:]:
        apply_record(spec, state, record)
    return state
