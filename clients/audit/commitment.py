"""The schedule of a tournament run, committed to before its first match.

At the start the runner writes the whole schedule as one canonical JSON document:
every match's game, round, group, deal and rotation, the bot in each seat, and the
``seed_sha256`` its deal will publish; each game's options and clocks; each bot's
version; the deal mode; the SHA-256 of the run's secret; and the identity of each game's
luck value function (``luck``: results/luck.py's, fixed before the first deal, so each
seat's luck stored with its result is recomputed from the journals by ``croupier verify``). Its SHA-256 is the
commitment, printed and written to ``DATA/reveals/NAME-RUN.schedule.sha256`` (in
``sha256sum`` form). The document itself stays private (``DATA/schedules/``, 0600)
until the run is over, when it is published beside the reveal as
``DATA/reveals/NAME-RUN.schedule.json``: then ``sha256sum -c`` checks it, and
``croupier verify`` checks every result against it.

The commitment gives nothing away: the document holds the SHA-256 of a 256-bit
secret that nobody else knows, so no guess of the seating or the deals can be
confirmed against it. It binds everything after: another schedule, another
secret (seeds and hashes recomputed from a forged one), another seat or option
gives another hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from croupier.clients.results.luck_journal import evaluator_of, identities
from croupier.clients.results.schedule import set_seed
from croupier.server.datafiles import private_folder, replace_file
from croupier.server.journal import seed_sha256

if TYPE_CHECKING:
    from croupier.clients.results.luck import Evaluator
    from croupier.clients.results.schedule import Deals, DuplicateSet, Rotations
    from croupier.clients.results.store import Tournament

FORMAT = 1


class _Clock(Protocol):
    def as_dict(self) -> dict[str, int]: ...


class _Game(Protocol):
    @property
    def game(self) -> str: ...
    @property
    def options(self) -> Mapping[str, Any]: ...
    @property
    def clock(self) -> _Clock: ...


class _Bot(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...


class TournamentConfig(Protocol):
    """What a commitment reads of a tournament's config (tournament/config.py's TournamentConfig),
    named here rather than imported: the runner writes the audit trail, which imports none of it."""

    @property
    def deals(self) -> Deals: ...
    @property
    def rotations(self) -> Rotations: ...
    @property
    def bots(self) -> Sequence[_Bot]: ...
    @property
    def games(self) -> Sequence[_Game]: ...
    def schedule(self, secret: bytes, run: int = 1) -> list[DuplicateSet]: ...


def document(config: TournamentConfig, tournament: Tournament) -> dict[str, Any]:
    """The schedule of a run as its commitment covers it (every match dealt first time: a set
    dealt again after an abandoned match draws its seeds from the same, committed, secret)."""
    from croupier.engine.core import options_to_dict
    from croupier.engine.games import get_game

    if tournament.secret is None:
        raise ValueError(f"tournament {tournament.name} run {tournament.run} was dealt before secret deals")
    secret = tournament.secret
    return {
        "format": FORMAT,
        "tournament": tournament.name,
        "run": tournament.run,
        "deals": config.deals.value,
        "rotations": config.rotations.value,
        "secret_sha256": hashlib.sha256(secret).hexdigest(),
        "bots": {bot.name: bot.version for bot in config.bots},
        "games": {
            game.game: {
                # as the referee's journal headers hold them: every option, defaults filled in
                "options": options_to_dict(get_game(game.game).options(game.options)),
                "clock": game.clock.as_dict(),
            }
            for game in config.games
        },
        "luck": identities(game.game for game in config.games),
        "matches": [
            {
                "game": match.key.game,
                "round": match.key.round,
                "group": match.key.group,
                "deal": match.key.deal,
                "rotation": match.key.rotation,
                "seats": list(match.seats),
                "seed_sha256": seed_sha256(set_seed(secret, match.key, config.deals)),
            }
            for duplicate in config.schedule(secret, tournament.run)
            for match in duplicate.matches
        ],
    }


def encode(schedule: dict[str, Any]) -> bytes:
    """The one byte form of a schedule its commitment is the SHA-256 of (sorted keys, no spaces,
    ASCII), so any JSON library can rebuild it and any ``sha256sum`` check it."""
    return json.dumps(schedule, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stem(tournament: Tournament) -> str:
    return f"{tournament.name}-{tournament.run}"


def private_path(data: Path, tournament: Tournament) -> Path:
    """The schedule while the run is played: the runner's only."""
    return data / "schedules" / f"{_stem(tournament)}.json"


def commitment_path(data: Path, tournament: Tournament) -> Path:
    return data / "reveals" / f"{_stem(tournament)}.schedule.sha256"


def published_path(data: Path, tournament: Tournament) -> Path:
    return data / "reveals" / f"{_stem(tournament)}.schedule.json"


def commit(data: Path, config: TournamentConfig, tournament: Tournament) -> tuple[str, Path]:
    """Commit to the run's schedule before its first match (the first time; a resumed run keeps
    what it committed to): the commitment and the file it is published in."""
    private = private_path(data, tournament)
    if private.exists():
        schedule = private.read_bytes()
    else:
        schedule = encode(document(config, tournament))
        private_folder(private.parent)
        replace_file(private, schedule)
    value = digest(schedule)
    public = commitment_path(data, tournament)
    if not public.exists():
        public.parent.mkdir(parents=True, exist_ok=True)
        public.write_text(f"{value}  {published_path(data, tournament).name}\n", encoding="ascii")
    return value, public


def committed_luck(data: Path, tournament: Tournament, note: Callable[[str], None]) -> dict[str, Evaluator]:
    """The luck value function of each game the run's schedule committed to (none for a run
    committed before luck, or to none); a game whose V this croupier does not have (a run resumed
    by another version) is ``note``d and its results stay plain."""
    private = private_path(data, tournament)
    if not private.exists():
        return {}
    found = {}
    for game, identity in json.loads(private.read_bytes()).get("luck", {}).items():
        try:
            found[game] = evaluator_of(identity)
        except ValueError as exc:
            note(f"luck not measured: {exc}")
    return found


def publish(data: Path, tournament: Tournament) -> Path | None:
    """Once the run is over: its schedule beside its commitment, for anyone (None for a run
    that committed to none: started before commitments)."""
    private = private_path(data, tournament)
    if not private.exists():
        return None
    path = published_path(data, tournament)
    path.write_bytes(private.read_bytes())
    return path


def read_commitment(text: str) -> str:
    """A commitment as given: its 64 hex digits, alone or first on a ``sha256sum`` line."""
    value = text.split()[0].lower() if text.split() else ""
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise ValueError(f"{text.strip()[:80]!r} is not a SHA-256 (64 hex digits)")
    return value
