"""The checks of ``croupier check-bot``, one coroutine each: it takes the bot (a ``Trial``) through one
corner of the protocol, tampering with the traffic where a real referee would not misbehave on cue,
and returns what it saw, or raises ``Failed`` saying what went wrong."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from croupier.clients.checkbot.tap import Stream, Tamper, accepted_in, moves_in
from croupier.clients.checkbot.trial import (
    CLOCKS,
    OUT_OF_RANGE,
    SHORT,
    STARTUP_SECONDS,
    Failed,
    Result,
    Trial,
)
from croupier.clients.sdk.protocol import describe
from croupier.v1 import bots_pb2


async def hello(trial: Trial) -> str:
    stream = await trial.until(
        "Hello", lambda: next((s for s in trial.streams if s.sent), None), STARTUP_SECONDS
    )
    _, first = stream.sent[0]
    kind = first.WhichOneof("message") if first is not None else None
    if kind != "hello" or first is None:
        said = "unreadable bytes" if first is None else f"a {kind or 'BotMessage with nothing set'}"
        raise Failed(f"the bot's first message was {said}, not a Hello{await _ending(trial, stream)}")
    if first.hello.protocol_version != 1:
        raise Failed(
            f"Hello.protocol_version was {first.hello.protocol_version}, the referee speaks 1"
            f"{await _ending(trial, stream)}"
        )
    await trial.until("Welcome", lambda: stream.of_kind("welcome") or stream.ended)
    if not stream.of_kind("welcome"):
        raise Failed(f"the referee sent no Welcome: the stream ended ({stream.ended})")
    await trial.finished(await trial.match("chinese_ten"))
    options = describe(stream.granted)
    if trial.tap.protocol_1 and stream.asked != bots_pb2.StreamOptions():
        options += f" (asked for {describe(stream.asked)}: --protocol-1 took them out)"
    batches = (
        f", {stream.batches} Batch{'es' if stream.batches > 1 else ''} among them" if stream.batches else ""
    )
    return (
        f"Hello (protocol 1, options: {options}, name {first.hello.name!r}, "
        f"max_matches {first.hello.max_matches}), Welcome, then a match played{batches}"
    )


async def _ending(trial: Trial, stream: Stream) -> str:
    with contextlib.suppress(Failed):
        await trial.until("end of the stream", lambda: stream.ended, 5)
    return f" (the referee ended the stream: {stream.ended})" if stream.ended else ""


async def several_matches(trial: Trial) -> str:
    matches = [await trial.match("chinese_ten", seed=seed) for seed in (1, 2, 3)]
    for match_id in matches:
        await trial.finished(match_id)
    played_on = [s.number for s in trial.streams if any(s.moves(m) for m in matches)]
    if len(played_on) != 1:
        ends = "; ".join(f"stream {s.number}: {s.ended or 'open'}" for s in trial.streams)
        raise Failed(f"the bot needed {len(trial.streams)} streams for 3 matches ({ends}): keep one open")
    at_once = most = 0
    for _, message in trial.streams[0].received:
        kind = message.WhichOneof("message")
        at_once += {"match_started": 1, "match_ended": -1}.get(kind or "", 0)
        most = max(most, at_once)
    return f"3 matches on one stream, {most} at once at most"


class RefuseFirstMove(Tamper):
    """Turns the bot's first move (alone or the first of a ``moves``) into an index out of range,
    which the referee refuses."""

    def __init__(self) -> None:
        self.decision_id: int | None = None

    def to_referee(self, stream: Stream, message: bots_pb2.BotMessage) -> bots_pb2.BotMessage:
        if self.decision_id is not None or not moves_in(message):
            return message
        changed = bots_pb2.BotMessage()
        changed.CopyFrom(message)
        move = moves_in(changed)[0]
        self.decision_id = move.decision_id
        move.index = OUT_OF_RANGE
        return changed


async def refused_move(trial: Trial) -> str:
    tamper = trial.tap.tamper = RefuseFirstMove()
    match_id = await trial.match("chinese_ten")
    refusal = await trial.until(
        "refusal of the bot's first move",
        lambda: trial.first("action_result", match_id, lambda r: r.status == Result.REFUSED),
    )
    decision = tamper.decision_id
    assert decision is not None  # the refusal was of the move it changed
    status = await trial.until(
        f"answer to decision {decision} after its refusal", lambda: trial.settled(match_id, decision)
    )
    if status == Result.TIMED_OUT:
        refused = f'decision {decision} was refused ("{refusal.reason}")'
        if (slow := await trial.slow()) is not None:
            raise Failed(f"{refused}, and its clock ran out before the bot's next move: {slow}")
        raise Failed(
            f"{refused} and the bot sent no other move for it: the decision stays open after a refusal, "
            "but its clock ran out"
        )
    await trial.finished(match_id, refusals=1)
    return f'decision {decision} refused ("{refusal.reason[:40]}..."), answered again and accepted'


class HoldFirstDecision(Tamper):
    """Holds the bot's first decision back until a newer one replaces it, then sends both."""

    def __init__(self) -> None:
        self.held: bots_pb2.ServerMessage | None = None
        self.replaced: tuple[int, int] | None = None

    def to_bot(self, stream: Stream, message: bots_pb2.ServerMessage) -> list[bots_pb2.ServerMessage]:
        if self.replaced is not None or message.WhichOneof("message") != "decision":
            return [message]
        if self.held is None:
            self.held = message
            return []
        if message.decision.decision_id == self.held.decision.decision_id:
            return []
        self.replaced = (self.held.decision.decision_id, message.decision.decision_id)
        return [self.held, message]


def replacing_deal() -> tuple[int, str]:
    """A two-player real-time Pair Battle seed, and a first play of seat 1's that changes seat 0's
    legal plays (a triplet on a rank seat 0 holds the fourth of): the referee replaces seat 0's decision."""
    from croupier.engine.games import get_game
    from croupier.engine.rng import Rng

    spec = get_game("pair_battle")
    options = spec.options(SHORT["pair_battle"])
    for seed in range(10_000):
        legal = spec.new_game(options, Rng(seed)).legal_actions(0)
        for play in spec.new_game(options, Rng(seed)).legal_actions(1):
            state = spec.new_game(options, Rng(seed))
            state.apply(1, play, 0.0)
            if legal and state.legal_actions(0) != legal:
                return seed, str(play)
    raise AssertionError("no Pair Battle deal replaces a decision")


async def replaced_decision(trial: Trial) -> str:
    from croupier.clients.sdk import Bot

    seed, opening = replacing_deal()

    class Opener(Bot):
        """Lays ``opening`` first, then nothing: the bot's decisions change only when it plays."""

        def choose(self, view: Any, legal: list[Any]) -> str | None:
            first, self.opened = not getattr(self, "opened", False), True
            return opening if first else None

    tamper = trial.tap.tamper = HoldFirstDecision()
    match_id = await trial.match("pair_battle", opponent=Opener, seed=seed, max_timeouts=100)
    old, new = await trial.until("replacement of the bot's first decision", lambda: tamper.replaced, 30)

    def answered() -> int | None:
        """How the first decision after the replaced one that the referee settled was settled."""
        later = [d.decision_id for d in trial.received("decision", match_id) if d.decision_id != old]
        return next((status for d in later if (status := trial.settled(match_id, d))), None)

    status = await trial.until(f"answer to decision {new}, which replaced decision {old}", answered)
    if status == Result.TIMED_OUT:
        stale = [m for s in trial.streams for _, m in s.moves(match_id) if m.decision_id == old]
        how = " (it answered the replaced one, and waited)" if stale else ""
        if (slow := await trial.slow()) is not None:
            raise Failed(
                f"decision {old} was replaced by {new}, whose clock ran out before the bot's move: {slow}"
            )
        raise Failed(
            f"decision {old} was replaced by {new}; the bot never answered {new}{how}: its clock ran out"
        )
    answered_old = any(m.decision_id == old for s in trial.streams for _, m in s.moves(match_id))
    return (
        f"decision {old} replaced by {new}: "
        + ("answered the stale one (an Error: not open), then " if answered_old else "")
        + "played on, accepted"
    )


class DropMidMatch(Tamper):
    """Drops the stream right after the referee said it accepted the bot's second move in the match
    (an ActionResult, or with quiet acceptance the next message's ``accepted`` count)."""

    def __init__(self) -> None:
        self.match_id = ""
        self.dropped_at: float | None = None

    def to_bot(self, stream: Stream, message: bots_pb2.ServerMessage) -> list[bots_pb2.ServerMessage]:
        if self.dropped_at is None and self.match_id:
            told = [*(m for _, m in stream.received), message]
            if accepted_in(told, self.match_id) >= 2:
                self.dropped_at = time.monotonic()
                stream.drop.set()
        return [message]


async def _drop_and_return(trial: Trial) -> tuple[str, Stream, float]:
    """A match whose stream the tap drops; the match, the bot's new stream, and the seconds it took."""
    tamper = trial.tap.tamper = DropMidMatch()
    match_id = tamper.match_id = await trial.match("chinese_ten", seed=4)
    await trial.until("second accepted move (the stream is dropped after it)", lambda: tamper.dropped_at)
    grace = CLOCKS["grace_ms"] / 1000

    def second_stream() -> Stream | None:
        return trial.streams[1] if len(trial.streams) > 1 and trial.streams[1].sent else None

    back = await trial.until(
        "new stream after the referee dropped the first (reconnect, with backoff)", second_stream, grace
    )
    assert tamper.dropped_at is not None
    return match_id, back, back.sent[0][0] - tamper.dropped_at


async def dropped_stream(trial: Trial) -> str:
    _, back, seconds = await _drop_and_return(trial)
    first = back.sent[0][1]
    if first is None or first.WhichOneof("message") != "hello":
        raise Failed("the bot reconnected but its new stream did not start with a Hello")
    await trial.until("Welcome on the new stream", lambda: back.of_kind("welcome") or back.ended)
    if not back.of_kind("welcome"):
        raise Failed(f"the bot reconnected, but the referee ended its new stream: {back.ended}")
    return f"stream dropped mid-match; back {seconds:.1f} s later with a Hello"


async def resumed_match(trial: Trial) -> str:
    match_id, back, _ = await _drop_and_return(trial)
    started = await trial.until(
        "MatchStarted(resumed) on the new stream",
        lambda: [m for _, m in back.of_kind("match_started", match_id) if m.resumed],
    )
    pending = [m for _, m in back.of_kind("decision", match_id)]
    try:
        seat = await trial.finished(match_id)
    except Failed as failed:
        raise Failed(f"after MatchStarted(resumed): {failed}") from None
    return (
        f"MatchStarted(resumed) in seat {started[0].seat}"
        + (f" with decision {pending[0].decision_id} pending" if pending else "")
        + f"; played on to the end (place {seat.place})"
    )


async def forfeit_and_end(trial: Trial) -> str:
    doomed = await trial.match("chinese_ten", doomed=True, decision_ms=0, bank_ms=0, max_timeouts=1)
    forfeited = await trial.until("SeatForfeited", lambda: trial.received("seat_forfeited", doomed))
    later = await trial.match("chinese_ten", seed=5)
    try:
        await trial.finished(later)
        await trial.until("MatchEnded", lambda: trial.received("match_ended", later))
        await trial.finished(await trial.match("chinese_ten", seed=6))
    except Failed as failed:
        raise Failed(f"after SeatForfeited ({forfeited[0].reason}): {failed}") from None
    return f"SeatForfeited ({forfeited[0].reason}), then a match to its MatchEnded, then another"


async def clock(trial: Trial) -> str:
    decision_ms, bank_ms = 1000, 2000
    match_id = await trial.match("chinese_ten", {"target": 100}, decision_ms=decision_ms, bank_ms=bank_ms)
    try:
        await trial.finished(match_id)
    except Failed as failed:
        requests = {d.decision_id: d for d in trial.received("decision", match_id)}
        late = trial.received("action_result", match_id, lambda r: r.status == Result.TIMED_OUT)
        if not late or late[0].decision_id not in requests or trial.last_error() is not None:
            raise  # not slowness, or the bot said what went wrong
        asked = requests[late[0].decision_id]
        raise Failed(
            f"decision {asked.decision_id} timed out: its deadline_ms was {asked.deadline_ms} "
            f"({decision_ms} per decision + {asked.time_bank_ms} of bank left), and the bot took longer"
        ) from failed
    asked = trial.received("decision", match_id)
    thinking = trial.thinking(match_id)
    slowest = max(thinking.values(), default=0.0)
    bank = asked[-1].time_bank_ms if asked else bank_ms
    return (
        f"{len(thinking)} decisions of {decision_ms} ms + {bank_ms} ms bank, slowest {slowest * 1000:.0f} ms "
        f"(as the tap timed them); {bank} ms of bank left"
    )


async def every_game(trial: Trial) -> str:
    games: list[tuple[str, dict[str, Any]]] = [(game, {}) for game in SHORT]
    games.append(("pair_battle", {"timing": "lockstep"}))
    matches = [(game, options, await trial.match(game, options)) for game, options in games]
    places = []
    for game, options, match_id in matches:
        seat = await trial.finished(match_id)
        places.append(f"{game}{' lockstep' if options else ''} {seat.place}")
    return "places: " + ", ".join(places)


Check = Callable[[Trial], Awaitable[str]]
CHECKS: dict[str, tuple[str, Check]] = {
    "hello": ("Hello first (protocol 1, any stream options); Welcome; then plays", hello),
    "several-matches": ("several matches on one stream", several_matches),
    "refused-move": ("a refused move is answered with another", refused_move),
    "replaced-decision": ("a decision replaced by a newer one (Pair Battle)", replaced_decision),
    "dropped-stream": ("a stream the referee drops: reconnect", dropped_stream),
    "resumed-match": ("MatchStarted(resumed): play on", resumed_match),
    "forfeit-and-end": ("SeatForfeited, then MatchEnded: go on", forfeit_and_end),
    "clock": ("answer within deadline_ms (clock and bank)", clock),
    "every-game": ("a full match of every game", every_game),
}
