"""Forks: a new match that plays on from one step of a finished match's replay ("what if, from
here, ...?"), with the same deal and every record up to that step, then new players.

A fork is made as a restarted referee takes up an unfinished match: its journal is written (its
own header, naming ``forked_from: ID@STEP``, the original's records up to the step, and a
``fork`` record where its own play begins), and the match is rebuilt from that journal and goes
on. Its seats' bots join by seat token, as a resumed match's do; a seat nobody takes is forfeited
after the clocks' grace, and the referee plays it to the end. It replays from its own journal
like any match, resumes after a restart like any match, and is never rated.

Only a match whose deal may be shown can be forked: finished (not cancelled, whose deal stays
secret), and not sealed by a twin that is still live (the secrets table's rule for other hands).
Since that deal is public by then, a fork seals no other match and no other match's twin is
dealt from it (``Referee.sealed`` leaves forks out).

Anyone may fork, so no caller but the admin may hold the referee's forks for long: one address
has at most ``MAX_FORKS_PER_CLIENT`` live, a fork's clocks are capped (``FORK_CLOCKS``: whatever it
asks and whatever the original had), so a seat nobody plays or whose stream stays silent is
forfeited within minutes and the referee plays it to the end; and a finished fork's journal is
deleted ``FORK_JOURNAL_SECONDS`` after it was made (checked at start and at each new fork), and
the oldest first beyond ``FORK_JOURNALS_KEPT``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.clocks import Clocks
from croupier.server.journal import (
    CLOSING,
    End,
    Fork,
    Header,
    JournalWriter,
    Record,
    Resume,
    Seated,
    apply_record,
    read_records,
    token_sha256,
    twin_unfinished,
    write_private,
)
from croupier.server.match import Match
from croupier.server.messages import shown
from croupier.server.referee import Referee, check_name
from croupier.v1 import match_pb2
from croupier.wire.errors import FailedPrecondition, InvalidArgument, ResourceExhausted

MAX_FORKS = 16
"""Live forks all callers but the admin may have made together: each is a match on this referee."""
MAX_FORKS_PER_CLIENT = 4
"""Live forks one address may have made: a quarter of ``MAX_FORKS``, so three others get theirs."""
FORK_CLOCKS = Clocks(decision=60.0, bank=300.0, max_timeouts=3, grace=60.0)
"""The longest clocks of a fork not the admin's (a person's, as ``croupier web`` asks them): a
seat nobody joins is forfeited after a minute, a silent one after its bank and three timeouts."""
FORK_JOURNAL_SECONDS = 7 * 86_400.0
"""How long a finished fork's journal is kept (a flood of forks would fill the disk otherwise)."""
FORK_JOURNALS_KEPT = 1000
"""Finished forks' journals kept at most, the newest (about 20 KB each)."""

log = structlog.get_logger("croupier.forks")


def history(records: list[Record], step: int, source: str) -> list[Record]:
    """What a fork at ``step`` keeps of a finished match's ``records`` after its header: every
    record up to the step's own (the referee's resumes left out: they changed nothing). The step
    is counted as replays count them (1: the start); InvalidArgument for one past the game's end."""
    steps = [i for i, record in enumerate(records) if shown(record)]
    if not 1 <= step <= len(steps):
        raise InvalidArgument(f"match {source} has steps 1 to {len(steps)}, not {step}")
    kept: list[Record] = [r for r in records[1 : steps[step - 1] + 1] if not isinstance(r, Resume)]
    header = records[0]
    assert isinstance(header, Header)
    spec = get_game(header.game)
    end = records[-1]
    assert isinstance(end, End)
    state = spec.new_game(spec.options(header.options), Rng(end.seed))
    for record in kept:
        apply_record(spec, state, record)
    if any(isinstance(r, CLOSING) for r in kept) or state.is_over():
        raise InvalidArgument(f"at step {step} match {source}'s game is over: fork an earlier step")
    return kept


def finished_records(path: Path, source: str) -> list[Record]:
    """A finished match's journal, if its deal may be shown: ended (not cancelled) and not sealed
    by a twin on disk that is not over (FailedPrecondition otherwise)."""
    records = read_records(path)
    if not records or not isinstance(records[-1], End):
        raise FailedPrecondition(
            f"match {source} is not finished: only a finished match (not cancelled) can be forked"
        )
    if twin_unfinished(path):
        raise FailedPrecondition(f"match {source} is sealed: another match dealt the same cards is not over")
    return records


async def fork_match(
    referee: Referee,
    source: str,
    step: int,
    names: Sequence[str],
    admin: bool,
    clocks: match_pb2.Clocks | None = None,
    client: str = "",
) -> tuple[Match, list[str]]:
    """Fork ``source`` (a match this referee knows) at ``step``, for a caller who may read its
    record (the spectator service has admitted it), from the address ``client``: the new match
    and its seat tokens. Not the admin's: within the quotas, its clocks capped."""
    referee.info(source)  # NotFound
    if source in referee.matches:
        raise FailedPrecondition(f"match {source} is not over: only a finished match can be forked")
    referee.check_unsealed(source, admin=False)  # even for the admin: a live twin holds that deal
    if not admin:
        forks = [m for m in referee.matches.values() if m.forked_from]
        if len(forks) >= MAX_FORKS:
            raise ResourceExhausted(f"{MAX_FORKS} forks are being played already: try again when one is over")
        if sum(1 for m in forks if m.forked_by == client) >= MAX_FORKS_PER_CLIENT:
            raise ResourceExhausted(
                f"your address has {MAX_FORKS_PER_CLIENT} forks being played already: finish one first"
            )
    expire_journals(referee)  # a few files at a time: the forks made since the last call, at most
    records = await asyncio.to_thread(finished_records, referee.journal_path(source), source)
    match, tokens = await fork_records(referee, records, step, names, clocks, capped=not admin)
    match.forked_by = "" if admin else client
    return match, tokens


async def fork_records(
    referee: Referee,
    records: list[Record],
    step: int,
    names: Sequence[str],
    clocks: match_pb2.Clocks | None = None,
    capped: bool = False,
) -> tuple[Match, list[str]]:
    """A fork of a finished match's ``records`` (``finished_records``: from this referee's data or
    a journal file the caller read) at ``step``, made on ``referee``: the new match and its seat tokens.
    ``clocks``: its decision and bank times where set (a person plays), else the match's; ``capped``:
    none longer than ``FORK_CLOCKS``."""
    header = records[0]
    assert isinstance(header, Header)
    source = header.match_id
    kept = history(records, step, source)
    players = list(names) or [p.name for p in header.players]
    if len(players) != len(header.players):
        raise InvalidArgument(
            f"match {source} has {len(header.players)} seats, not {len(players)}: one player for each"
        )
    players = [check_name(name, f"seat {i} name") for i, name in enumerate(players)]
    tokens = ["seat_" + secrets.token_urlsafe(24) for _ in players]
    match_id = time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(3)
    asked = header.clocks if clocks is None else header.clocks.merged(_times(clocks))
    forked = Header(
        match_id=match_id,
        game=header.game,
        options=header.options,
        players=tuple(Seated(name, "") for name in players),
        clocks=_capped(asked) if capped else asked,
        seed_sha256=header.seed_sha256,
        created_ms=int(time.time() * 1000),
        forked_from=f"{source}@{step}",
    )
    end = records[-1]
    assert isinstance(end, End)
    path = referee.matches_dir / f"{match_id}.jsonl"
    written = [forked, *kept, Fork(kept[-1].at)]
    secret = {"seed": end.seed, "seat_tokens": [token_sha256(t) for t in tokens]}
    await asyncio.to_thread(_write, path, written, secret)
    try:
        match = referee.open_fork(path, written, secret)
    except BaseException:
        for made in (path, path.with_suffix(".secret")):
            made.unlink(missing_ok=True)
        raise
    log.info("match forked", match_id=match_id, forked_from=forked.forked_from, players=players)
    return match, tokens


def _write(path: Path, records: list[Record], secret: dict[str, Any]) -> None:
    """The fork's files, whole on disk (its seed file first, as a new match's)."""
    write_private(path.with_suffix(".secret"), secret)
    journal = JournalWriter(path)
    try:
        for record in records:
            journal.write(record)
        journal.sync()
    finally:
        journal.close()


def _times(clocks: match_pb2.Clocks) -> match_pb2.Clocks:
    """Only the time per decision and the bank of a fork's asked clocks: a fork's grace, timeouts
    and refusals stay the match's, so no one asking for a fork keeps a seat nobody plays."""
    times = match_pb2.Clocks()
    for name in ("decision_ms", "bank_ms"):
        if clocks.HasField(name):
            setattr(times, name, getattr(clocks, name))
    return times


def _capped(clocks: Clocks) -> Clocks:
    """``clocks`` with none longer than ``FORK_CLOCKS``."""
    cap = FORK_CLOCKS
    return dataclasses.replace(
        clocks,
        decision=min(clocks.decision, cap.decision),
        bank=min(clocks.bank, cap.bank),
        max_timeouts=min(clocks.max_timeouts, cap.max_timeouts),
        grace=min(clocks.grace, cap.grace),
    )


def expire_journals(referee: Referee, now: float | None = None) -> list[str]:
    """Delete the files of the finished forks made more than ``FORK_JOURNAL_SECONDS`` ago and of
    the oldest beyond ``FORK_JOURNALS_KEPT``, and forget them: their ids."""
    now = time.time() if now is None else now
    finished = sorted(
        ((info.created_unix_ms, match_id) for match_id, info in referee.past.items() if info.forked_from),
        reverse=True,
    )
    too_old = (now - FORK_JOURNAL_SECONDS) * 1000
    expired = [m for i, (made, m) in enumerate(finished) if i >= FORK_JOURNALS_KEPT or made < too_old]
    for match_id in expired:
        path = referee.journal_path(match_id)
        for made_file in (path, path.with_suffix(".secret")):
            made_file.unlink(missing_ok=True)
        del referee.past[match_id]
    if expired:
        log.info("fork journals expired", forks=len(expired))
    return expired
