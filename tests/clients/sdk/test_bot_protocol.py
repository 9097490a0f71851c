"""The SDK's protocol without a stream (clients/sdk/protocol.py): scripted referee messages in,
the moves it would send out, no gRPC and no event loop, as python-chess tests its engine protocol
over a mock transport."""

from __future__ import annotations

import asyncio
from typing import Any

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Bot, Match, default_options
from croupier.clients.sdk.protocol import StreamProtocol, Thinking
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2, match_pb2
from croupier.wire import convert
from croupier.wire.framing import action_result, decision_request, parsed

Updates = bots_pb2.StreamOptions.Updates
ALL = bots_pb2.StreamOptions(quiet_acceptance=True, updates=Updates.UPDATES_WITH_NEXT, batches=True)
MATCH = "m1"


class Script:
    """A referee's side of one stream, message by message, over a real engine state."""

    def __init__(self, game: str, match_id: str = MATCH, **options: Any) -> None:
        self.spec = get_game(game)
        self.codec = convert.codec(game)
        self.options = self.spec.options({"players": 2, **options})
        self.state = self.spec.new_game(self.options, Rng(3))
        self.state.advance(0.0)  # a countdown of 0 is over at once
        self.match_id = match_id
        self.seat = min(self.state.to_act())
        """The bot's seat: the first to act."""
        self.next_id = 1 << 32

    def welcome(self, granted: bots_pb2.StreamOptions | None = None) -> bots_pb2.ServerMessage:
        return bots_pb2.ServerMessage(welcome=bots_pb2.Welcome(protocol_version=1, options=granted))

    def started(self) -> bots_pb2.ServerMessage:
        return bots_pb2.ServerMessage(
            match_started=bots_pb2.MatchStarted(
                match_id=self.match_id,
                game=self.spec.name,
                options=self.codec.options(self.options),
                seat=self.seat,
                players=[match_pb2.Player(seat=i, name=f"p{i}") for i in range(2)],
            )
        )

    def decision(self, accepted: int = 0) -> bots_pb2.ServerMessage:
        self.next_id += 1
        request = decision_request(
            self.match_id,
            self.seat,
            self.next_id,
            self.codec.view_bytes(self.state.view(self.seat)),
            self.codec.actions_bytes(self.state.legal_actions(self.seat)),
            deadline_ms=5000,
            time_bank_ms=0,
            last_think_ms=0,
            events=[],
            accepted=accepted,
        )
        return parsed(request)

    def result(self, asked: bots_pb2.ServerMessage, status: int, reason: str = "") -> bots_pb2.ServerMessage:
        d = asked.decision
        return parsed(action_result(d.match_id, d.seat, d.decision_id, status, None, reason=reason))  # type: ignore[arg-type]


class Asked(Bot):
    """Answers with index 0, keeping every view it was asked about."""

    views: list[Any]

    def choose(self, view: Any, legal: list[Any]) -> int:
        Asked.views.append(view)
        return 0


def feed(protocol: StreamProtocol, *messages: bots_pb2.ServerMessage) -> list[Any]:
    """Every step the protocol takes for ``messages``, as a stream would hand them over."""
    steps = []
    for message in messages:
        for each in protocol.arrived(message):
            steps += protocol.receive(each)
    return steps


def test_a_bot_that_asks_for_nothing_says_hello_as_protocol_1_did() -> None:
    hello = StreamProtocol(Asked, name="x", max_matches=2).hello()
    assert hello == bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1, name="x", max_matches=2))
    assert StreamProtocol(Asked, options=ALL).hello().hello.options == ALL


def test_each_request_is_answered_with_the_bots_choice_for_its_decision() -> None:
    script = Script("chinese_ten", target=100)
    protocol = StreamProtocol(Asked)
    Asked.views = []
    protocol.hello()
    asked = script.decision()
    [move] = feed(protocol, script.welcome(), script.started(), asked)
    expected = bots_pb2.Move(
        match_id=MATCH, decision_id=asked.decision.decision_id, seat=script.seat, index=0
    )
    assert move == expected
    assert Asked.views[0] == script.state.view(script.seat)


def test_a_batch_is_read_message_by_message_and_answered_in_one_message_when_granted() -> None:
    script = Script("chinese_ten", target=100)
    protocol = StreamProtocol(Asked, options=ALL)
    Asked.views = []  # run alone (or first on its pytest-xdist worker), no earlier test made it
    protocol.hello()
    second = Script("spoil_five", "m2")
    feed(protocol, script.welcome(ALL), script.started(), second.started())
    batch = bots_pb2.ServerMessage(batch=bots_pb2.Batch(messages=[script.decision(), second.decision()]))
    moves = feed(protocol, batch)
    assert [m.match_id for m in moves] == [MATCH, "m2"]
    [together] = protocol.outgoing(moves)
    assert list(together.moves.moves) == moves
    protocol.granted = bots_pb2.StreamOptions()  # a referee that does not take batches
    assert [m.move for m in protocol.outgoing(moves)] == moves


def test_a_refused_answer_asks_choose_again_and_a_stale_request_is_skipped() -> None:
    script = Script("chinese_ten", target=100)
    protocol = StreamProtocol(Asked)
    Asked.views = []
    protocol.hello()
    first, newer = script.decision(), script.decision()
    steps = feed(protocol, script.welcome(), script.started())
    for message in (first, newer):  # both read before either is handled: the older is stale
        protocol.arrived(message)
    steps = protocol.receive(first) + protocol.receive(newer)
    assert [m.decision_id for m in steps] == [newer.decision.decision_id]
    again = feed(protocol, script.result(newer, bots_pb2.ActionResult.REFUSED, "no"))
    assert [m.decision_id for m in again] == [newer.decision.decision_id] and len(Asked.views) == 2


def real_time_protocol(granted: bots_pb2.StreamOptions) -> tuple[Script, StreamProtocol, list[Any]]:
    """A Pair Battle bot that answers nothing and lays every set by ``play``; the views it was asked about."""
    script = Script("pair_battle", countdown_tick=0.0)
    views: list[Any] = []

    class Layer(Bot):
        def choose(self, view: Any, legal: list[Any]) -> None:
            views.append(view)
            self.play(legal[0])

    protocol = StreamProtocol(Layer, options=granted)
    protocol.hello()
    feed(protocol, script.welcome(granted), script.started())
    return script, protocol, views


def test_with_quiet_acceptance_a_request_sent_before_a_play_was_judged_waits_for_one_that_counts_it() -> None:
    script, protocol, views = real_time_protocol(ALL)
    [play] = feed(protocol, script.decision())
    assert play.decision_id == 0 and len(views) == 1
    assert feed(protocol, script.decision(accepted=0)) == []  # crossed the play: its view may not show it
    assert len(views) == 1
    [again] = feed(protocol, script.decision(accepted=1))  # built after the play was accepted
    assert again.decision_id == 0 and len(views) == 2


def test_without_quiet_acceptance_the_accepted_result_releases_the_next_request() -> None:
    script, protocol, views = real_time_protocol(bots_pb2.StreamOptions())
    asked = script.decision()
    feed(protocol, asked)
    assert feed(protocol, script.decision()) == []
    accepted = script.result(asked, bots_pb2.ActionResult.ACCEPTED)
    accepted.action_result.decision_id = 0
    assert feed(protocol, accepted) == [] and len(views) == 1  # the request held came before it
    [again] = feed(protocol, script.decision())
    assert again.decision_id == 0 and len(views) == 2


def test_an_async_choose_is_handed_to_the_stream_to_await_and_its_answer_follows() -> None:
    class Thoughtful(Bot):
        async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
            return len(legal) - 1

    script = Script("chinese_ten", target=100)
    protocol = StreamProtocol(Thoughtful)
    protocol.hello()
    asked = script.decision()
    [thinking] = feed(protocol, script.welcome(), script.started(), asked)
    assert isinstance(thinking, Thinking)
    choice = asyncio.run(thinking.choice)  # type: ignore[arg-type]
    [move] = protocol.chose(thinking, choice)
    assert move.index == len(asked.decision.legal_actions) - 1


def test_a_seat_thinks_about_one_request_at_a_time_and_then_about_the_newest() -> None:
    asked: list[Any] = []

    class Thoughtful(Bot):
        async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
            asked.append(view)
            return 0

    script = Script("chinese_ten", target=100)
    protocol = StreamProtocol(Thoughtful)
    protocol.hello()
    [thinking] = feed(protocol, script.welcome(), script.started(), script.decision())
    newer, newest = script.decision(), script.decision()
    assert feed(protocol, newer, newest) == [], "no second choose while the first thinks"
    [then] = protocol.chose(thinking, asyncio.run(thinking.choice))  # type: ignore[arg-type]
    assert isinstance(then, Thinking), "the stale answer is dropped; choose is asked about the newest"
    assert then.decision.decision_id == newest.decision.decision_id
    [move] = protocol.chose(then, asyncio.run(then.choice))  # type: ignore[arg-type]
    assert move.decision_id == newest.decision.decision_id and len(asked) == 2


def test_the_sdk_defers_updates_only_for_a_bot_that_cannot_see_them() -> None:
    class Watcher(Bot):
        def update(self, view: Any, events: list[Any]) -> None:
            pass

    assert default_options(HeuristicBot).updates == Updates.UPDATES_WITH_NEXT
    assert default_options(Watcher).updates == Updates.UPDATES_EVERY
    assert default_options(lambda match: HeuristicBot(match)).updates == Updates.UPDATES_EVERY
    assert all(default_options(f).quiet_acceptance and default_options(f).batches for f in (Bot, Watcher))


def test_a_new_stream_forgets_what_the_last_one_had_in_flight() -> None:
    script, protocol, views = real_time_protocol(ALL)
    feed(protocol, script.decision())
    protocol.hello()  # the stream broke: the play may never have arrived
    feed(protocol, script.welcome(ALL), bots_pb2.ServerMessage(match_started=script.started().match_started))
    [again] = feed(protocol, script.decision())
    assert again.decision_id == 0 and len(views) == 2
    seat = protocol.seats[(MATCH, script.seat)]
    assert isinstance(seat.bot, Bot) and type(seat.match) is Match
