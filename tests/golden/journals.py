"""Make the golden journals: real matches played by today's referee, some finished, some left unfinished.

``python -m tests.golden.journals`` plays them over loopback gRPC and replaces ``journals/`` (see
README.md for when that is right). Each ``NAME.jsonl`` is a journal as the referee wrote it; an
unfinished one has its seed file ``NAME.secret`` beside it (but the DAMAGED one) and ``NAME.json``
holds what the tests check it against: the result and frames the referee gave, or the seat tokens
that resume it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

from croupier.v1 import admin_pb2, bots_pb2, match_pb2, spectator_pb2, spectator_pb2_grpc
from tests.server.botclient import ADMIN, Admin, Bot, first_legal, random_legal
from tests.server.test_damaged_files import referee_on

FOLDER = Path(__file__).with_name("journals")
SEED = 20261201


def frames_sha256(frames: Any) -> str:
    """One digest of a match's frames as a spectator receives them."""
    digest = hashlib.sha256()
    for frame in frames:
        digest.update(frame.SerializeToString(deterministic=True))
    return digest.hexdigest()


async def bots_for(channel: grpc.aio.Channel, created: admin_pb2.CreateMatchResponse) -> list[Bot]:
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    return bots


async def moves(bots: list[Bot], count: int) -> None:
    """Answer the first ``count`` decisions, whichever seat they are for, with the first legal action;
    return once the last is accepted."""
    played = 0
    done = asyncio.Event()

    async def answer(bot: Bot) -> None:
        nonlocal played
        while played < count:
            decision = (await bot.expect("decision")).decision
            if played < count:
                played += 1
                await bot.write(bots_pb2.BotMessage(move=first_legal(decision)))
                await bot.expect("action_result")
                if played == count:
                    done.set()

    tasks = [asyncio.create_task(answer(bot)) for bot in bots]
    await done.wait()
    for task in tasks:
        task.cancel()


async def finished(admin: Admin, channel: grpc.aio.Channel, game: str, players: int, **options: Any) -> str:
    created = await admin.create(game, players, options, seed=SEED)
    bots = await bots_for(channel, created)
    await asyncio.gather(*(bot.play(random_legal(seat)) for seat, bot in enumerate(bots)))
    return str(created.match.match_id)


async def refused_timed_out_forfeited(admin: Admin, channel: grpc.aio.Channel) -> str:
    """Spoil Five for three: seat 0 sends a move the rules refuse, seat 2 never answers (a timeout, then
    forfeited: the referee plays for it)."""
    created = await admin.create(
        "spoil_five", 3, {"deals": 1}, seed=SEED, decision_ms=300, bank_ms=0, max_timeouts=1
    )
    bots = await bots_for(channel, created)

    async def refuse_once_then_play(bot: Bot) -> None:
        decision = (await bot.expect("decision")).decision
        await bot.move(match_id=decision.match_id, decision_id=decision.decision_id, text="zz")
        await bot.expect("action_result")
        await bot.write(bots_pb2.BotMessage(move=first_legal(decision)))
        await bot.play()

    await asyncio.gather(refuse_once_then_play(bots[0]), bots[1].play())  # seat 2 stays silent
    return str(created.match.match_id)


async def cancelled(admin: Admin, channel: grpc.aio.Channel) -> str:
    created = await admin.create("chinese_ten", 2, {"target": 100}, seed=SEED)
    bots = await bots_for(channel, created)
    await moves(bots, 1)
    request = admin_pb2.CancelMatchRequest(match_id=created.match.match_id, reason="the tournament moved on")
    await admin.stub.CancelMatch(request, metadata=ADMIN)
    return str(created.match.match_id)


def commenting(seat: int) -> Any:
    """Random legal moves, each with a comment for the bot's author (Move.comment)."""
    choose = random_legal(seat)

    def commented(decision: bots_pb2.DecisionRequest) -> bots_pb2.Move:
        move = choose(decision)
        move.comment = f"seat {seat}: {len(decision.legal_actions)} choices"
        return move

    return commented


async def forked(admin: Admin, channel: grpc.aio.Channel, source: str) -> str:
    """A fork of ``source`` (ForkMatch, as anyone may) at step 4, played out by bots that comment
    their moves: a header's forked_from, a fork record, acts with comments (journal version 2)."""
    stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
    fork = await stub.ForkMatch(spectator_pb2.ForkMatchRequest(match_id=source, step=4))
    bots = [Bot(channel, token) for token in fork.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.gather(*(bot.play(commenting(seat)) for seat, bot in enumerate(bots)))
    await admin.wait(fork.match.match_id)
    return str(fork.match.match_id)


async def add_version_2(folder: Path) -> None:
    """Only the journals of version 2's additions (a fork, comments), beside those already here."""
    data = Path(tempfile.mkdtemp(prefix="golden-"))
    async with referee_on(data) as (_croupier, admin, channel):
        source = await finished(admin, channel, "chinese_ten", 2, target=100)
        match_id = await forked(admin, channel, source)
    async with referee_on(data) as (_croupier, admin, _channel):
        record = await record_of(admin, match_id)
        keep(data / "matches", match_id, folder, "chinese_ten-forked-commented-finished", record, secret=True)
    shutil.rmtree(data)


async def record_of(admin: Admin, match_id: str) -> dict[str, Any]:
    """What the referee shows of a match over: its status, result and frames (as the admin sees them)."""
    info = await admin.get(match_id)
    record = await admin.spectator.GetRecord(
        spectator_pb2.GetRecordRequest(match_id=match_id), metadata=ADMIN
    )
    return {
        "status": match_pb2.MatchStatus.Name(info.status),
        "result": json_format.MessageToDict(info.result),
        "frames": len(record.frames),
        "frames_sha256": frames_sha256(record.frames),
    }


async def make(folder: Path) -> None:
    data = Path(tempfile.mkdtemp(prefix="golden-"))
    matches = data / "matches"
    names: dict[str, str] = {}
    unfinished: dict[str, tuple[str, list[str]]] = {}

    async with referee_on(data) as (_croupier, admin, channel):
        for name, game, players, options in (
            ("chinese_ten-finished", "chinese_ten", 2, {"target": 100}),
            ("platinum_fish-finished", "platinum_fish", 2, {}),
            ("spoil_five-finished", "spoil_five", 2, {"deals": 1}),
            ("pair_battle-lockstep-finished", "pair_battle", 2, {"timing": "lockstep"}),
        ):
            names[name] = await finished(admin, channel, game, players, **options)
        names["spoil_five-refused-timeout-forfeit-finished"] = await refused_timed_out_forfeited(
            admin, channel
        )
        names["chinese_ten-cancelled"] = await cancelled(admin, channel)
        names["chinese_ten-forked-commented-finished"] = await forked(
            admin, channel, names["chinese_ten-finished"]
        )
        # unfinished: a few moves in, then the referee stops (as if killed: the journal stays resumable)
        for name, game, players, options, played in (
            ("chinese_ten-unfinished", "chinese_ten", 2, {"target": 100}, 2),
            ("platinum_fish-unfinished", "platinum_fish", 3, {}, 2),
            ("spoil_five-unfinished", "spoil_five", 3, {"deals": 1}, 2),
            ("pair_battle-lockstep-unfinished", "pair_battle", 2, {"timing": "lockstep"}, 1),
            ("chinese_ten-damaged", "chinese_ten", 2, {"target": 100}, 1),
        ):
            created = await admin.create(game, players, options, seed=SEED)
            bots = await bots_for(channel, created)
            await moves(bots, played)
            unfinished[name] = (created.match.match_id, list(created.seat_tokens))
        # real-time Pair Battle past "go", stopped: taken up again below, and left again
        created = await admin.create("pair_battle", 2, {"countdown_tick": 0.01}, seed=SEED)
        bots = await bots_for(channel, created)
        for bot in bots:
            await bot.expect("decision")
        unfinished["pair_battle-real_time-unfinished"] = (created.match.match_id, list(created.seat_tokens))
        recounted = await admin.create("pair_battle", 2, {"countdown_tick": 0.01}, seed=SEED + 1)
        bots = await bots_for(channel, recounted)
        for bot in bots:
            await bot.expect("decision")

    # resumed after the restart: every seat back, the countdown again (a recount record), played out
    async with referee_on(data) as (_croupier, admin, channel):
        bots = await bots_for(channel, recounted)
        await asyncio.gather(*(bot.play(random_legal(seat)) for seat, bot in enumerate(bots)))
        await admin.wait(recounted.match.match_id)
        names["pair_battle-real_time-resumed-finished"] = recounted.match.match_id

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    for name, (match_id, tokens) in unfinished.items():
        keep(matches, match_id, folder, name, {"seat_tokens": tokens}, secret=not name.endswith("-damaged"))
    # what a referee taking the journals up shows of the finished ones (it resumes the others again)
    async with referee_on(data) as (_croupier, admin, _channel):
        for name, match_id in names.items():
            keep(matches, match_id, folder, name, await record_of(admin, match_id), secret=True)
    shutil.rmtree(data)


def keep(
    matches: Path, match_id: str, folder: Path, name: str, expected: dict[str, Any], secret: bool
) -> None:
    """Copy a match's journal (and seed file, if it has one and ``secret``) as ``name``, with what the
    tests expect of it."""
    shutil.copyfile(matches / f"{match_id}.jsonl", folder / f"{name}.jsonl")
    if secret and (matches / f"{match_id}.secret").exists():  # a finished match's is gone
        shutil.copyfile(matches / f"{match_id}.secret", folder / f"{name}.secret")
    (folder / f"{name}.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    import sys

    # --version-2: add only the journals of version 2's additions (keeping the older ones as they are)
    asyncio.run(add_version_2(FOLDER) if "--version-2" in sys.argv else make(FOLDER))
    for path in sorted(FOLDER.iterdir()):
        print(f"{path.stat().st_size:7,} {path.relative_to(FOLDER.parent.parent.parent)}")
