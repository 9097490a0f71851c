"""The referee: every match, registered bot, token and connected stream, on one event loop.

It creates matches, resumes unfinished ones after a restart, and seats bots:
a stream joining with seat tokens holds those seats at once; a stream joining
with a bot token is given the seats of matches created for its bot, a whole
match at a time and at most ``max_matches`` matches at once, oldest match
first. All of this runs on the event loop's one thread, so plain dicts are
shared state enough; each match's own state belongs to its actor.

Files under the data directory (folders 0700, files 0600, written as ``datafiles`` says):
``matches/<id>.jsonl`` (journals), ``matches/<id>.secret`` (seed and seat-token hashes of
unfinished matches), ``bots.jsonl`` (registered bots: id, name, token hash, whether it claimed
its name; a bot revoked is written again, revoked) and ``admin-token``. A file found damaged
at start is set aside with its valid prefix kept, and said in ``Referee.damaged``; a match
whose files cannot be taken up is listed DAMAGED.

Over 600 lines for one job: the registry every service shares (matches, bots, tokens,
streams and the seating that ties them), in sections by what it keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import heapq
import hmac
import json
import re
import secrets
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from croupier.engine.games import get_game
from croupier.server import openfiles
from croupier.server.clocks import Clocks
from croupier.server.datafiles import OUT_OF_ROOM, Appender, private_folder, replace_file, set_aside
from croupier.server.group import Siblings
from croupier.server.journal import (
    CLOSING,
    Cancel,
    End,
    Header,
    Record,
    Scan,
    header_and_last,
    read_private,
    scan,
    token_sha256,
)
from croupier.server.match import Match
from croupier.server.messages import match_result, withheld
from croupier.server.metrics import Metrics
from croupier.server.seats import Player
from croupier.server.session import Session
from croupier.v1 import admin_pb2, match_pb2
from croupier.wire import convert
from croupier.wire.errors import (
    AlreadyExists,
    Context,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
)
from croupier.wire.names import name_problem

log = structlog.get_logger("croupier.referee")

MAX_SEATS = 16
ListKey = tuple[int, str]
"""Where a match comes in ListMatches: (created ms, match id)."""
MAX_NAME = 100
BOT_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
MIN_TOKEN, MAX_TOKEN = 24, 200
"""A caller's own bot token: long enough to be a secret, short enough for metadata."""
MIN_ADMIN_TOKEN = 16
"""The admin token, chosen by the operator (the one a referee makes itself is 38 characters)."""


ORGANISER_PREFIX = "organiser_"


def organiser_token(admin_token: str) -> str:
    """The organiser's spectator token of the referee whose admin token is ``admin_token``: it
    watches sealed matches live (their public frames) and may do nothing else the admin may.
    Derived from the admin token (an HMAC), so every worker and replica sharing that token knows it
    without a file of its own, and holding it tells nothing of the admin token."""
    mac = hmac.new(admin_token.encode(), b"croupier organiser spectator v1", hashlib.sha256)
    return ORGANISER_PREFIX + mac.hexdigest()


def token_problem(token: str, shortest: int = MIN_TOKEN) -> str:
    """Why ``token`` cannot be a secret ("" if it can): ``shortest`` to MAX_TOKEN printable ASCII
    characters without spaces (metadata carries nothing else)."""
    if not token:
        return "is empty"
    if not shortest <= len(token) <= MAX_TOKEN:
        return f"is {len(token)} characters long, not {shortest} to {MAX_TOKEN}"
    if not all("!" <= c <= "~" for c in token):
        return "holds characters other than printable ASCII without spaces"
    return ""


@dataclass(frozen=True)
class Bot:
    bot_id: str
    name: str
    token_sha256: str
    claimed: bool = False
    """Registered claiming its name: a new version of the name needs a live claimed version's token."""
    revoked: bool = False
    """Revoked by its owner (or the admin): its token opens nothing."""

    @property
    def base_name(self) -> str:
        """The name its versions share: an instance's (NAME#R) is NAME's."""
        return self.name.partition("#")[0]


FLAGS = ("claimed", "revoked")


def bot_from_line(line: bytes) -> Bot:
    """A registered bot from its line of ``bots.jsonl``; ValueError or TypeError if it is not one."""
    if not line.endswith(b"\n"):
        raise ValueError("it is cut short")
    fields = json.loads(line)
    bot = Bot(**fields)
    if not all(isinstance(value, bool if key in FLAGS else str) for key, value in fields.items()):
        raise TypeError("a field is not of its type")
    return bot


@dataclass(frozen=True)
class Identity:
    """Who a stream's tokens say it is."""

    bot: Bot | None
    seats: tuple[tuple[str, int], ...]
    """(match id, seat) per seat token."""


class Referee:
    def __init__(
        self,
        data_dir: Path,
        admin_token: str,
        clocks: Clocks,
        metrics: Metrics,
        siblings: Siblings | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.siblings = siblings
        """The other workers of a ``croupier serve --workers`` group, whose bots this one knows too."""
        self.matches_dir = data_dir / "matches"
        self.admin_token_sha256 = token_sha256(admin_token)
        self.organiser_token_sha256 = token_sha256(organiser_token(admin_token))
        self.port = 0
        """The TCP port it listens on (set once bound)."""
        self.bound_host = ""
        """The host it was told to listen on (``--address``): its ProveReferee answers only for the
        addresses that host binds (wire/proof.py)."""
        self.clocks = clocks
        self.metrics = metrics
        self.matches: dict[str, Match] = {}
        """Unfinished matches, each with its actor."""
        self.past: dict[str, match_pb2.MatchInfo] = {}
        """Finished matches, as listed (their records are in their journals)."""
        self.bots: dict[str, Bot] = {}
        """Every registered bot by id, the revoked too (their results stay theirs)."""
        self.bot_tokens: dict[str, Bot] = {}
        """Bots not revoked, by their token's hash."""
        self.revoked_tokens: dict[str, Bot] = {}
        """Bots revoked, by their token's hash: a stream presenting one is told so."""
        self.seat_tokens: dict[str, tuple[str, int]] = {}
        self.sessions: dict[str, list[Session]] = {}
        """Streams joined with each bot's token."""
        self.holders: dict[tuple[str, int], Session] = {}
        """Which stream holds each seat of the unfinished matches (mirrored in ``Session.seats``)."""
        self.live_deals: Counter[str] = Counter()
        """How many unfinished matches are dealt from each seed (by seed_sha256): the sealing rule."""
        self.unseated: dict[str, Match] = {}
        """Unfinished matches that may have an invited seat without a stream: the only ones
        ``_seat_bots`` looks at (a referee may hold thousands of matches)."""
        self._order: dict[str, int] = {}
        """Each unfinished match's rank by creation (or resumption): oldest are seated first."""
        self.address = ""
        """Where callers reach this referee, as it advertises itself (set once it listens)."""
        self.instance = secrets.token_hex(8)
        """Tells this run of the referee from any other, whatever address each advertises."""
        self.damaged: list[str] = []
        """What was found damaged at start, one line each (logged, and printed by ``croupier serve``)."""

    # --- start and stop ---------------------------------------------------------------------

    def load(self) -> None:
        """Read the bots and the matches on disk; resume every unfinished match. Nothing is dropped
        without a word: a damaged file is set aside and its valid prefix kept, a match that cannot
        be taken up is listed DAMAGED, and each is said in ``damaged``. ``OSError`` if the data
        directory cannot be written (a full disk: no match could go on)."""
        for folder in (self.data_dir, self.matches_dir):
            for warning in private_folder(folder):
                log.warning("data folder open to others", problem=warning)
        self._load_bots()
        self._learn_siblings_bots()
        for path in sorted(self.matches_dir.glob("*.jsonl")):
            self._load_match(path)

    def _load_bots(self) -> None:
        path = self.data_dir / "bots.jsonl"
        if not path.exists():
            return
        kept: list[bytes] = []
        for number, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
            try:
                bot = bot_from_line(line)
            except (ValueError, TypeError) as exc:
                self._set_aside(path, kept, f"line {number} is not a registered bot ({exc})")
                break
            kept.append(line)
            self._take_in(bot)

    def _learn_siblings_bots(self) -> None:
        """Take in the bots registered through the other workers of the group since last asked (a
        damaged line is skipped here: its own worker sets it aside)."""
        if self.siblings is None:
            return
        for line in self.siblings.new_bot_lines():
            try:
                bot = bot_from_line(line)
            except (ValueError, TypeError):
                continue
            known = self.bots.get(bot.bot_id)
            if bot.revoked and known is not None and known.token_sha256 == bot.token_sha256:
                self._take_in(bot)  # revoked through another worker
            elif known is None and bot.token_sha256 not in self.bot_tokens:
                self._take_in(bot)

    def _take_in(self, bot: Bot) -> None:
        """Know ``bot`` as registered; a revoked one's token opens nothing, and its streams end."""
        self.bots[bot.bot_id] = bot
        if not bot.revoked:
            self.bot_tokens[bot.token_sha256] = bot
            return
        self.bot_tokens.pop(bot.token_sha256, None)
        self.revoked_tokens[bot.token_sha256] = bot
        for session in self.sessions.get(bot.bot_id, []):
            session.revoked = True
            session.close()

    def _set_aside(self, path: Path, kept: list[bytes], damage: str) -> None:
        """Move a damaged file aside, keep its whole lines ``kept`` under its name, and say so."""
        aside = set_aside(path, b"".join(kept))
        before = f"its first {len(kept)} lines" if len(kept) != 1 else "its first line"
        self._report(f"{path}: {damage}; moved aside to {aside.name}, {before} kept")

    def _report(self, damage: str) -> None:
        self.damaged.append(damage)
        log.warning("damaged data file", damage=damage)

    def _load_match(self, path: Path) -> None:
        """List or resume the match of one journal; whatever goes wrong, it is listed (DAMAGED at
        worst), never dropped. ``OSError`` for a full disk, which no match would get past."""
        try:
            self._take_up(path)
        except OSError as exc:
            if exc.errno in OUT_OF_ROOM:
                raise
            self._list_damaged(path, None, f"it cannot be used ({exc.strerror})")
        except Exception as exc:
            log.exception("cannot load a match journal", journal=str(path))
            self._list_damaged(path, None, "it cannot be loaded", repr(exc))

    def _take_up(self, path: Path) -> None:
        """A damaged journal is cut to its valid prefix (the file set aside) and the match resumed up
        to the damage; one that cannot be is DAMAGED."""
        ends = header_and_last(path)
        if ends is not None and isinstance(ends[1], CLOSING):
            with contextlib.suppress(Exception):  # unsound: read it whole below
                info = info_from_journal(ends[0], ends[1])
                self.past[info.match_id] = info
                return
        journal = scan(path)
        records, damage = journal.records, journal.damage
        if not records:
            self._list_damaged(path, None, damage or "it is empty: no match header")
            return
        header = records[0]
        assert isinstance(header, Header)  # scan's first record
        closing = next((i for i, r in enumerate(records) if isinstance(r, CLOSING)), None)
        if closing is not None:
            if closing + 1 < len(records) or damage:
                damage = f"line {closing + 2} comes after the match's end"
            try:
                end = records[closing]
                assert isinstance(end, CLOSING)
                info = info_from_journal(header, end)
            except Exception as exc:
                self._list_damaged(path, header, "its last record cannot be read", repr(exc))
                return
            if damage:
                self._set_aside(path, journal.lines[: closing + 1], damage)
            self.past[info.match_id] = info
            return
        secret_path = path.with_suffix(".secret")
        try:
            secret = read_private(secret_path)
        except FileNotFoundError:
            self._list_damaged(path, header, f"its seed file {secret_path.name} is missing")
            return
        except ValueError:
            self._list_damaged(path, header, f"its seed file {secret_path.name} cannot be read")
            return
        try:
            match, unapplied = Match.rebuild(
                path, records, secret, self.metrics, self._released, self._finished
            )
        except Exception as exc:
            self._list_damaged(path, header, "it cannot be rebuilt from its journal", repr(exc))
            return
        damage = unapplied or damage
        if damage:
            self._set_aside(path, journal.lines[: len(match.records)], damage)
        elif journal.migrated:
            self._migrate(path, journal)
        match.reopen()
        self._add(match)
        log.info("match resumed", match_id=match.id, status=match_pb2.MatchStatus.Name(match.status))

    @staticmethod
    def _migrate(path: Path, journal: Scan) -> None:
        """Rewrite an unfinished journal of an older version in this one before appending to it; the
        file as it was stays beside it as ``NAME.vN``."""
        kept = path.with_name(f"{path.name}.v{journal.version}")
        shutil.copy2(path, kept)
        replace_file(path, journal.prefix(len(journal.records)))
        log.info("journal migrated", journal=str(path), version=journal.version, kept=kept.name)

    def _list_damaged(self, path: Path, header: Header | None, damage: str, detail: str = "") -> None:
        """List a match as DAMAGED: ``damage`` is public (MatchInfo.damage), ``detail`` (an error, which
        might quote a secret) only for the log and the operator."""
        info = damaged_info(path.stem, header, damage)
        self.past[info.match_id] = info
        why = f"{damage} ({detail})" if detail else damage
        self._report(f"{path}: {why}: match {info.match_id} is listed as DAMAGED (files left as they are)")

    async def close(self) -> None:
        """Stop every actor, leaving unfinished matches to be resumed by the next run."""
        for sessions in self.sessions.values():
            for session in sessions:
                session.close()
        for match in self.matches.values():
            await match.stop_actor()

    # --- authentication -----------------------------------------------------------------------

    def is_admin(self, tokens: list[str]) -> bool:
        return any(secrets.compare_digest(token_sha256(t), self.admin_token_sha256) for t in tokens)

    def is_organiser(self, tokens: list[str]) -> bool:
        """Whether a spectator holds the organiser's token (``organiser_token``)."""
        digest = self.organiser_token_sha256
        return any(secrets.compare_digest(token_sha256(t), digest) for t in tokens)

    def check_admin(self, tokens: list[str]) -> None:
        if not tokens:
            raise Unauthenticated("admin calls need the admin token as croupier-token metadata")
        if not self.is_admin(tokens):
            raise PermissionDenied("that croupier-token is not the admin token")

    def identify(self, tokens: list[str]) -> Identity:
        """The bot and seats a stream's tokens grant; UNAUTHENTICATED when none of them grants anything.

        A token we do not know grants nothing, but does not cost the stream the seats its other
        tokens hold: a seat token expires when its match ends, so a client reconnecting with the
        tokens it was given (after a restart, say) holds some of ended matches. Refusing the whole
        stream for those left its live seats unheld until the grace forfeited them."""
        if not tokens:
            raise Unauthenticated("send a bot token or seat tokens as croupier-token metadata")
        if self.siblings is not None:
            self._learn_siblings_bots()  # registered, or revoked, through another worker since we looked
        bot: Bot | None = None
        seats: list[tuple[str, int]] = []
        for token in tokens:
            digest = token_sha256(token)
            seat = self.seat_tokens.get(digest)
            if seat is not None:
                seats.append(seat)
                continue
            found = self.bot_tokens.get(digest)
            if found is None:
                if (revoked := self.revoked_tokens.get(digest)) is not None and len(tokens) == 1:
                    raise Unauthenticated(f"that token's bot, {revoked.name} ({revoked.bot_id}), was revoked")
                continue
            if bot is not None and bot is not found:
                raise InvalidArgument("a stream plays for one bot: send one bot token")
            bot = found
        if bot is None and not seats:
            where = "" if self.siblings is None else ", and plays only on the worker holding its match"
            what = "unknown token" if len(tokens) == 1 else "none of these tokens is known"
            raise Unauthenticated(f"{what} (a seat token expires when its match ends{where})")
        return Identity(bot, tuple(seats))

    # --- bots ---------------------------------------------------------------------------------------

    def register_bot(
        self, name: str, bot_id: str = "", token: str = "", *, claim: bool = False, owner_token: str = ""
    ) -> tuple[Bot, str]:
        """A new bot with an id and token of its own; or, given both, the bot under that id and
        token, so one bot can be registered on several referees: registering it again as it is
        changes nothing. A new version of a claimed name needs ``owner_token`` (``_check_owner``).
        In a group of workers, one registration at a time over all of them."""
        if self.siblings is None:
            return self._register_bot(name, bot_id, token, claim, owner_token)
        with self.siblings.registering():
            self._learn_siblings_bots()
            return self._register_bot(name, bot_id, token, claim, owner_token)

    def _register_bot(
        self, name: str, bot_id: str, token: str, claim: bool, owner_token: str
    ) -> tuple[Bot, str]:
        problem = name_problem(name, instance=True)
        if problem is not None:
            raise InvalidArgument(f"bot name {problem}")
        if not bot_id and not token:
            bot_id, token = "b-" + secrets.token_hex(6), "bot_" + secrets.token_urlsafe(24)
        else:
            digest = self._check_shared_bot(bot_id, token)
            known = self.bots.get(bot_id)
            if known is not None:
                if known.token_sha256 != digest:
                    raise AlreadyExists(f"bot {bot_id!r} is already registered, with another token")
                if known.name != name:
                    raise AlreadyExists(f"bot {bot_id!r} is already registered, as {known.name!r}")
                return known, token
            if digest in self.bot_tokens or digest in self.revoked_tokens:
                raise AlreadyExists("that token is another bot's: give each bot a token of its own")
        claimed = self._check_owner(name.partition("#")[0], owner_token)
        bot = Bot(bot_id=bot_id, name=name, token_sha256=token_sha256(token), claimed=claim or claimed)
        self._write_bot(bot, "register")
        self._take_in(bot)
        log.info("bot registered", bot_id=bot.bot_id, name=name, claimed=bot.claimed)
        return bot, token

    def _check_owner(self, name: str, owner_token: str) -> bool:
        """Whether ``name`` is claimed, once its owner is the caller: a claimed name's new version
        needs the token of a live claimed version of it (whoever calls: the admin's is not
        enough); ALREADY_EXISTS, saying so, otherwise."""
        owned = [bot for bot in self.bots.values() if bot.claimed and bot.base_name == name]
        if not owned:
            return False
        if not owner_token:
            raise AlreadyExists(
                f"the name {name} is claimed by its first registration: a new version needs the token "
                f"of one of its live versions (croupier register {name} --owner-token TOKEN)"
            )
        digest = token_sha256(owner_token)
        if not any(not bot.revoked and secrets.compare_digest(bot.token_sha256, digest) for bot in owned):
            raise AlreadyExists(
                f"the name {name} is claimed, and that owner token is none of its live versions'"
            )
        return True

    def revoke_bot(self, bot_id: str, tokens: list[str]) -> Bot:
        """Revoke a version (tokens: its own, its claimed name's owner's, or the admin's); its
        streams end and its token opens nothing more, its matches and results stay."""
        if self.siblings is None:
            return self._revoke_bot(bot_id, tokens)
        with self.siblings.registering():
            self._learn_siblings_bots()
            return self._revoke_bot(bot_id, tokens)

    def _revoke_bot(self, bot_id: str, tokens: list[str]) -> Bot:
        if not tokens:
            raise Unauthenticated("send the bot's token, its owner's or the admin token as croupier-token")
        bot = self.bots.get(bot_id)
        if bot is None:
            raise NotFound(f"no registered bot {bot_id!r}")
        digests = {token_sha256(t) for t in tokens}
        owners = {b.token_sha256 for b in self.bots.values() if b.claimed and b.base_name == bot.base_name}
        if not (
            bot.token_sha256 in digests
            or (bot.claimed and digests & (owners - set(self.revoked_tokens)))
            or self.is_admin(tokens)
        ):
            raise PermissionDenied(
                f"only bot {bot_id}'s own token, its name's owner's (a live claimed version of "
                f"{bot.base_name}) or the admin token revokes it"
            )
        if bot.revoked:
            return bot
        revoked = dataclasses.replace(bot, revoked=True)
        self._write_bot(revoked, "revoke")
        self._take_in(revoked)
        log.info("bot revoked", bot_id=bot_id, name=bot.name)
        return revoked

    def _write_bot(self, bot: Bot, what: str) -> None:
        """Append ``bot`` to ``bots.jsonl``, synced (rare, and worth keeping)."""
        try:
            bots = Appender(self.data_dir / "bots.jsonl", sync_each=True)
            try:
                bots.append((json.dumps(dataclasses.asdict(bot)) + "\n").encode())
            finally:
                bots.close()
        except OSError as exc:
            if exc.errno not in OUT_OF_ROOM:
                raise
            raise ResourceExhausted(
                f"cannot {what} the bot: the referee has no room for its files ({exc.strerror}); "
                "nothing was changed: free disk space and try again"
            ) from None

    def _check_shared_bot(self, bot_id: str, token: str) -> str:
        """The hash of a caller's own token, once the id and token are fit to register."""
        if not bot_id or not token:
            raise InvalidArgument("give both bot_id and token (or neither: the referee picks them)")
        if not BOT_ID.fullmatch(bot_id):
            raise InvalidArgument("bot_id must be 1 to 64 letters, digits, '.', '_' or '-'")
        if token_problem(token):
            raise InvalidArgument(
                f"token must be {MIN_TOKEN} to {MAX_TOKEN} printable ASCII characters without spaces"
            )
        digest = token_sha256(token)
        if secrets.compare_digest(digest, self.admin_token_sha256):
            raise InvalidArgument("a bot token must not be the admin token")
        return digest

    def bot_summaries(self) -> list[admin_pb2.Bot]:
        self._learn_siblings_bots()
        return [
            admin_pb2.Bot(
                bot_id=bot.bot_id,
                name=bot.name,
                streams=len(self.sessions.get(bot.bot_id, [])),
                max_matches=sum(s.capacity for s in self.sessions.get(bot.bot_id, [])),
                matches=len(
                    {
                        m.id
                        for m in self.matches.values()
                        if m.status == match_pb2.MATCH_STATUS_RUNNING
                        and any(p.bot_id == bot.bot_id for p in m.players)
                    }
                ),
            )
            for bot in self.bots.values()
            if not bot.revoked
        ]

    # --- matches ------------------------------------------------------------------------------------

    async def create_match(self, request: admin_pb2.CreateMatchRequest) -> tuple[Match, list[str]]:
        game = convert.game_of_options(request.options)
        spec = get_game(game)
        seats = list(request.seats)
        if not seats:
            raise InvalidArgument("a match needs seats: one SeatSpec per player")
        if len(seats) > MAX_SEATS:
            raise InvalidArgument(f"at most {MAX_SEATS} seats")
        options = convert.codec(game).options_from_proto(request.options, players=len(seats))
        if options.players != len(seats):
            raise InvalidArgument(f"options say {options.players} players but {len(seats)} seats are given")
        clocks = self.clocks.merged(request.clocks)
        full = openfiles.room_for_a_match()
        if full is not None:
            raise ResourceExhausted(
                f"no room for another match with {len(self.matches)} matches live ({full}): raise the "
                "referee's open-files limit, or use another referee"
            )
        tokens = ["seat_" + secrets.token_urlsafe(24) for _ in seats]
        players = []
        for index, (seat, token) in enumerate(zip(seats, tokens, strict=True)):
            name = seat.name
            if seat.bot_id:
                bot = self.bots.get(seat.bot_id)
                if bot is None and self.siblings is not None:
                    self._learn_siblings_bots()
                    bot = self.bots.get(seat.bot_id)
                if bot is None:
                    raise NotFound(f"seat {index}: no registered bot {seat.bot_id!r}")
                name = name or bot.name
            name = check_name(name or f"seat {index}", f"seat {index} name")
            players.append(Player(name, seat.bot_id, token_sha256(token)))
        seed = request.seed if request.HasField("seed") else secrets.randbits(63)
        match_id = time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(3)
        match = Match(
            match_id=match_id,
            spec=spec,
            options=options,
            seed=seed,
            clocks=clocks,
            players=players,
            created_ms=int(time.time() * 1000),
            journal_path=self.matches_dir / f"{match_id}.jsonl",
            metrics=self.metrics,
            on_released=self._released,
            on_finished=self._finished,
        )
        try:
            await asyncio.to_thread(match.create)  # two fsyncs: not on the event loop every match shares
        except OSError as exc:
            await match.stop_actor()  # closes what was opened
            for path in (match.journal_path, match.secret_path):
                path.unlink(missing_ok=True)
            if exc.errno not in OUT_OF_ROOM:
                raise
            raise ResourceExhausted(
                f"cannot create match files ({exc.strerror}) with {len(self.matches)} matches live: "
                "raise the referee's open-files limit or free disk space, or use another referee"
            ) from None
        self._add(match)
        log.info("match created", match_id=match.id, game=game, players=[p.name for p in players])
        self._seat_bots()
        return match, tokens

    def open_fork(self, path: Path, records: list[Record], secret: dict[str, Any]) -> Match:
        """A fork whose files were just written (server/forks.py): rebuilt from them as a resumed
        match is, and started. ValueError if its records do not all apply."""
        match, damage = Match.rebuild(path, records, secret, self.metrics, self._released, self._finished)
        if damage:
            raise ValueError(f"the fork does not replay: {damage}")
        match.reopen(resumed=False)
        self._add(match)
        self._seat_bots()
        return match

    def _add(self, match: Match) -> None:
        """Take in a new or resumed match: listed, its seat tokens known, its actor started."""
        self.matches[match.id] = match
        if not match.forked_from:  # a fork's deal was public when it was made: it seals nothing
            self.live_deals[match.seed_sha256] += 1
        match.sealed = lambda: self.sealed(match.id)
        self._order[match.id] = len(self._order)
        self.unseated[match.id] = match
        for index, player in enumerate(match.players):
            self.seat_tokens[player.token_sha256] = (match.id, index)
        match.start_actor()

    def info(self, match_id: str) -> match_pb2.MatchInfo:
        match = self.matches.get(match_id)
        if match is not None:
            return match.info()
        past = self.past.get(match_id)
        if past is None:
            raise NotFound(f"no match {match_id!r}")
        return past

    def list_page(
        self, status: int, game: str, after: ListKey | None, size: int
    ) -> tuple[list[match_pb2.MatchInfo], ListKey | None]:
        """Up to ``size`` matches, oldest first, after the key ``after`` (created ms, match id), and
        the key of the last one if more follow. Only the page's MatchInfos are built: a referee
        may know tens of thousands of matches."""
        found: list[tuple[ListKey, match_pb2.MatchInfo | Match]] = [
            ((info.created_unix_ms, info.match_id), info)
            for info in self.past.values()
            if (not status or info.status == status) and (not game or info.game == game)
        ]
        found += [
            ((match.created_ms, match.id), match)
            for match in self.matches.values()
            if (not status or match.status == status) and (not game or match.spec.name == game)
        ]
        if after is not None:
            found = [entry for entry in found if entry[0] > after]
        page = heapq.nsmallest(size + 1, found, key=lambda entry: entry[0])
        infos = [
            entry if isinstance(entry, match_pb2.MatchInfo) else entry.info() for _, entry in page[:size]
        ]
        return infos, page[size - 1][0] if len(page) > size else None

    async def cancel_match(self, match_id: str, reason: str) -> match_pb2.MatchInfo:
        """End a waiting or running match without a result; a finished or cancelled one is left as
        it is. Returns the match as it then is."""
        reason = check_name(reason, "reason")
        match = self.matches.get(match_id)
        if match is not None:
            await match.cancel(reason)  # a match finishing first keeps its result
        return self.info(match_id)

    # --- the sealing rule: one deal, several matches ---------------------------------------------

    def sealed(self, match_id: str) -> bool:
        """Whether a match's seed, result and record are withheld from everyone but the admin:
        while another live or waiting match is dealt from the same seed (the rotations of a
        duplicate set, or twins an admin made by hand), anything this one shows (its turned-up
        cards, its hands, its seed) would tell that match's players what they hold and draw."""
        live = match_id in self.matches
        counted = live and not self.matches[match_id].forked_from  # a live fork counts in no deal
        digest = self.matches[match_id].seed_sha256 if live else self.info(match_id).seed_sha256
        return self.live_deals[digest] > (1 if counted else 0)

    def shown(self, info: match_pb2.MatchInfo, admin: bool) -> match_pb2.MatchInfo:
        """A match as the caller may see it listed, ``sealed`` said: while sealed, without its seed
        and result (but to the admin)."""
        if not self.sealed(info.match_id):
            return info
        marked = match_pb2.MatchInfo()
        marked.CopyFrom(info)
        marked.sealed = True
        return marked if admin else withheld(marked)

    def check_unsealed(self, match_id: str, admin: bool) -> None:
        """FAILED_PRECONDITION for a caller who may not see a sealed match's record."""
        if not admin and self.sealed(match_id):
            raise FailedPrecondition(
                f"match {match_id} is sealed: another match dealt the same cards "
                f"(seed_sha256 {self.info(match_id).seed_sha256[:12]}...) is not over yet"
            )

    def journal_path(self, match_id: str) -> Path:
        if match_id not in self.matches and match_id not in self.past:
            raise NotFound(f"no match {match_id!r}")
        return self.matches_dir / f"{match_id}.jsonl"

    def _released(self, match: Match, index: int) -> None:
        """A match let a seat go (forfeited): its stream no longer holds it."""
        session = self.holders.pop((match.id, index), None)
        if session is not None:
            session.release(match.id, index, bool(match.players[index].bot_id))
        self._seat_bots()

    def _finished(self, match: Match) -> None:
        """A match ended: its seats and tokens go, and only its summary stays in memory."""
        self.past[match.id] = match.info()
        del self.matches[match.id]
        if not match.forked_from:
            self.live_deals[match.seed_sha256] -= 1
            if not self.live_deals[match.seed_sha256]:
                del self.live_deals[match.seed_sha256]
        del self._order[match.id]
        self.unseated.pop(match.id, None)
        for index, player in enumerate(match.players):
            self.seat_tokens.pop(player.token_sha256, None)
            session = self.holders.pop((match.id, index), None)
            if session is not None:
                session.release(match.id, index, bool(player.bot_id))
        self._seat_bots()

    # --- streams -----------------------------------------------------------------------------------

    def connect(self, session: Session, identity: Identity) -> None:
        """Seat a new stream: its seat tokens' seats, its bot's orphaned seats, then new matches."""
        for match_id, index in identity.seats:
            self._hand_over(self.matches[match_id], index, session)
        if session.bot_id is not None:
            self.sessions.setdefault(session.bot_id, []).append(session)
        self._seat_bots()

    def disconnect(self, session: Session) -> None:
        session.close()
        if session.bot_id is not None:
            streams = self.sessions.get(session.bot_id, [])
            if session in streams:
                streams.remove(session)
        for match_id, index in session.seats:
            match = self.matches[match_id]  # a stream holds seats of unfinished matches only
            if self.holders.get((match_id, index)) is session:
                del self.holders[(match.id, index)]
                if match.players[index].bot_id:
                    self.unseated[match.id] = match
            match.detach(session, index)
        session.release_all()
        self._seat_bots()

    def _hand_over(self, match: Match, index: int, session: Session) -> None:
        """Give a seat to a stream, taking it from any stream that held it."""
        old = self.holders.get((match.id, index))
        invited = bool(match.players[index].bot_id)
        if old is not None:
            old.release(match.id, index, invited)
        self.holders[(match.id, index)] = session
        session.hold(match.id, index, invited)
        match.attach(session, index)

    def _seat_bots(self) -> None:
        """Give streams of invited bots their seats: orphaned seats of running matches to any stream
        of their bot, then waiting matches, oldest first, each whole when every bot it invites has
        a stream with room for one more match."""
        for match in sorted(self.unseated.values(), key=lambda m: self._order[m.id]):
            needed = [
                (index, player.bot_id)
                for index, player in enumerate(match.players)
                if player.bot_id
                and not match.seats[index].forfeited
                and (match.id, index) not in self.holders
            ]
            if not needed:
                del self.unseated[match.id]
                continue
            if match.status == match_pb2.MATCH_STATUS_RUNNING:
                for index, bot_id in needed:
                    streams = self.sessions.get(bot_id)
                    if streams:
                        self._hand_over(match, index, min(streams, key=Session.invited_matches))
                continue
            chosen: dict[str, Session] = {}
            for bot_id in {bot_id for _, bot_id in needed}:
                room = [s for s in self.sessions.get(bot_id, []) if s.invited_matches() < s.capacity]
                if not room:
                    break
                chosen[bot_id] = min(room, key=Session.invited_matches)
            else:
                for index, bot_id in needed:
                    self._hand_over(match, index, chosen[bot_id])
                del self.unseated[match.id]


def info_from_journal(header: Header, end: End | Cancel) -> match_pb2.MatchInfo:
    """A finished or cancelled match of an earlier run, as listed: from its journal's first and last
    records (``end`` or ``cancel``)."""
    spec = get_game(header.game)
    codec = convert.codec(spec.name)
    if len(end.forfeited) != len(header.players):
        raise ValueError(
            f"the {end.KIND} record names {len(end.forfeited)} seats, the header {len(header.players)}"
        )
    cancelled = isinstance(end, Cancel)
    return match_pb2.MatchInfo(
        match_id=header.match_id,
        game=spec.name,
        options=codec.options(spec.options(header.options)),
        players=[
            match_pb2.Player(seat=i, name=p.name, bot_id=p.bot_id, forfeited=end.forfeited[i])
            for i, p in enumerate(header.players)
        ],
        clocks=header.clocks.to_proto(),
        status=match_pb2.MATCH_STATUS_CANCELLED if cancelled else match_pb2.MATCH_STATUS_FINISHED,
        seed_sha256=header.seed_sha256,
        seed=None if isinstance(end, Cancel) else end.seed,
        result=None if isinstance(end, Cancel) else match_result(header, end),
        created_unix_ms=header.created_ms,
        cancel_reason=end.reason if isinstance(end, Cancel) else "",
        forked_from=header.forked_from,
    )


def damaged_info(match_id: str, header: Header | None, damage: str) -> match_pb2.MatchInfo:
    """A match whose files cannot be taken up, as listed: what its journal's header still says."""
    info = match_pb2.MatchInfo(match_id=match_id, status=match_pb2.MATCH_STATUS_DAMAGED, damage=damage)
    if header is None:
        return info
    with contextlib.suppress(Exception):  # a game this referee does not know (or options it refuses)
        info.game = get_game(header.game).name
        codec = convert.codec(info.game)
        info.options.CopyFrom(codec.options(codec.spec.options(header.options)))
    info.players.extend(
        match_pb2.Player(seat=i, name=p.name, bot_id=p.bot_id) for i, p in enumerate(header.players)
    )
    info.clocks.CopyFrom(header.clocks.to_proto())
    info.seed_sha256 = header.seed_sha256
    info.created_unix_ms = header.created_ms
    return info


def check_name(name: str, what: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise InvalidArgument(f"{what} must be 1 to {MAX_NAME} printable characters")
    return name


TOKEN_METADATA = "croupier-token"


def tokens_of(context: Context) -> list[str]:
    """The ``croupier-token`` values of a call's metadata (it may repeat)."""
    return [str(value) for key, value in context.invocation_metadata() or () if key == TOKEN_METADATA]
