"""The Python bot SDK against a real referee: whole matches, several at once, reconnection,
real-time plays without requests, clean shutdown and clear refusals."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest

from croupier.clients.bots import HeuristicBot, RandomBot
from croupier.clients.sdk import Bot, Client, Match, Result
from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
from croupier.server.journal import Act, read_records
from croupier.v1 import admin_pb2, bots_pb2, match_pb2
from tests.server.botclient import ADMIN, ADMIN_TOKEN, WAIT, Admin

REPO = Path(__file__).resolve().parents[3]

SHORT: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 3, "target": 100},
    "spoil_five": {"players": 3, "deals": 2},
    "platinum_fish": {"players": 3},
    "pair_battle": {"players": 2, "countdown_tick": 0.0},
}


class Recorder(RandomBot):
    """A random bot that keeps what the SDK hands it."""

    seen: ClassVar[list[tuple[Match, Any, list[Any]]]] = []
    results: ClassVar[list[tuple[Match, Result]]] = []

    def choose(self, view: Any, legal: list[Any]) -> int:
        Recorder.seen.append((self.match, view, legal))
        return super().choose(view, legal)

    def ended(self, result: Result) -> None:
        Recorder.results.append((self.match, result))


async def play(clients: list[Client]) -> list[int]:
    return await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), WAIT)


PROTOCOL_1 = bots_pb2.StreamOptions()
STREAMS: dict[str, Callable[[int], bots_pb2.StreamOptions | None]] = {
    "the SDK's default options": lambda seat: None,
    "protocol 1": lambda seat: PROTOCOL_1,
    "both, seat by seat": lambda seat: None if seat % 2 else PROTOCOL_1,
}
"""What each seat's Client asks of the referee (None: the SDK's default)."""


@pytest.mark.parametrize("streams", list(STREAMS))
async def test_every_game_is_played_to_the_end_with_engine_objects_for_the_bot(
    referee: Croupier, admin: Admin, streams: str
) -> None:
    address = f"127.0.0.1:{referee.port}"
    options_of = STREAMS[streams]
    for game, options in SHORT.items():
        Recorder.seen, Recorder.results = [], []
        created = await admin.create(game, options["players"], options, seed=5)
        clients = [
            Client(
                Recorder if seat == 0 else HeuristicBot,
                address,
                [token],
                name=f"p{seat}",
                stop_after=1,
                options=options_of(seat),
            )
            for seat, token in enumerate(created.seat_tokens)
        ]
        assert await play(clients) == [0] * len(clients)
        info = await admin.wait(created.match.match_id)
        assert info.status == match_pb2.MATCH_STATUS_FINISHED
        match, view, legal = Recorder.seen[0]
        assert (match.game, match.seat, match.id) == (game, 0, created.match.match_id)
        assert type(match.options).__module__ == f"croupier.engine.games.{game}"
        assert type(view).__module__ == f"croupier.engine.games.{game}" and view.seat == 0
        assert legal and all(type(a).__module__ == f"croupier.engine.games.{game}" for a in legal)
        [(ended, result)] = Recorder.results
        assert ended.id == created.match.match_id
        assert result.scores == tuple(s.score for s in info.result.seats)
        assert result.place == info.result.seats[0].place
        assert all(s.refusals == 0 and s.timeouts == 0 for s in info.result.seats)


async def test_one_stream_plays_several_matches_at_once(referee: Croupier, admin: Admin) -> None:
    registered = []
    for name in ("alice", "bob"):
        response = await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name=name), metadata=ADMIN)
        registered.append(response)
    seats = [admin_pb2.SeatSpec(bot_id=r.bot_id) for r in registered]
    ids = [
        (await admin.create("chinese_ten", seats, {"target": 100}, seed=seed)).match.match_id
        for seed in (1, 2, 3)
    ]
    playing: set[str] = set()
    most = 0

    class Counting(RandomBot):
        def choose(self, view: Any, legal: list[Any]) -> int:
            nonlocal most
            playing.add(self.match.id)
            most = max(most, len(playing))
            return super().choose(view, legal)

        def ended(self, result: Result) -> None:
            playing.discard(self.match.id)

    address = f"127.0.0.1:{referee.port}"
    clients = [
        Client(Counting, address, [registered[0].token], max_matches=3, stop_after=3),
        Client(HeuristicBot, address, [registered[1].token], max_matches=3, stop_after=3),
    ]
    await play(clients)
    infos = [await admin.wait(match_id) for match_id in ids]
    assert all(info.status == match_pb2.MATCH_STATUS_FINISHED for info in infos)
    assert [c.finished for c in clients] == [3, 3]
    assert most == 3, "the three matches were played side by side on one stream"


async def test_a_bot_reconnects_after_the_referee_restarts_and_finishes_its_match(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks(grace=60.0))
    port = first.port
    address = f"127.0.0.1:{port}"
    async with grpc.aio.insecure_channel(address) as channel:
        created = await Admin(channel).create("spoil_five", 3, {"deals": 2}, seed=3)
    moves = asyncio.Event()
    loop = asyncio.get_running_loop()

    class Slow(RandomBot):
        def choose(self, view: Any, legal: list[Any]) -> int:
            loop.call_soon_threadsafe(moves.set)  # a plain choose runs on the bot's own thread
            return super().choose(view, legal)

    clients = [Client(Slow, address, [token], stop_after=1) for token in created.seat_tokens]
    running = asyncio.gather(*(c.run() for c in clients))
    await asyncio.wait_for(moves.wait(), WAIT)
    await first.stop(grace=None)  # every stream breaks; the match is left unfinished in its journal
    second = await create_server(address, data, admin_token=ADMIN_TOKEN, clocks=Clocks(grace=60.0))
    try:
        assert await asyncio.wait_for(running, WAIT) == [0, 0, 0]
        async with grpc.aio.insecure_channel(address) as channel:
            info = await Admin(channel).wait(created.match.match_id)
        assert info.status == match_pb2.MATCH_STATUS_FINISHED
        assert not any(seat.forfeited for seat in info.result.seats)
        assert [seat.timeouts for seat in info.result.seats] == [0, 0, 0], "every resent request is answered"
        kinds = [r.KIND for r in read_records(Path(created.journal))]
        assert "resume" in kinds and kinds[-1] == "end"
    finally:
        await second.stop(grace=None)


@pytest.mark.parametrize("streams", list(STREAMS))
async def test_real_time_plays_go_out_without_requests_and_are_never_refused(
    referee: Croupier, admin: Admin, streams: str
) -> None:
    plays: list[Any] = []

    class Counting(HeuristicBot):
        def play(self, action: Any) -> None:
            plays.append(action)
            super().play(action)

    created = await admin.create("pair_battle", 3, {"countdown_tick": 0.0}, seed=8)
    address = f"127.0.0.1:{referee.port}"
    clients = [
        Client(
            Counting if seat == 0 else RandomBot,
            address,
            [token],
            stop_after=1,
            options=STREAMS[streams](seat),
        )
        for seat, token in enumerate(created.seat_tokens)
    ]
    await play(clients)
    info = await admin.wait(created.match.match_id)
    assert plays, "the heuristic lays its further sets without waiting for a request"
    assert [s.refusals for s in info.result.seats] == [0, 0, 0]
    records = read_records(Path(created.journal))
    laid = {r.action for r in records if isinstance(r, Act) and r.seat == 0}
    assert {str(p) for p in plays} <= laid


async def test_a_choice_outside_the_legal_list_is_refused_with_the_referees_reason(
    referee: Croupier, admin: Admin, caplog: Any
) -> None:
    class Stubborn(Bot):
        def choose(self, view: Any, legal: list[Any]) -> str:
            self.tries = getattr(self, "tries", 0) + 1
            return "pick 2c" if self.tries == 1 else legal[0]

    created = await admin.create("chinese_ten", 2, {"target": 50}, seed=2, decision_ms=200, bank_ms=0)
    address = f"127.0.0.1:{referee.port}"
    clients = [
        Client(Stubborn if seat == 0 else RandomBot, address, [token], stop_after=1)
        for seat, token in enumerate(created.seat_tokens)
    ]
    with caplog.at_level("WARNING", logger="croupier.bot"):
        await play(clients)
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refused and "nothing to pick" in refused[0]
    info = await admin.wait(created.match.match_id)
    assert info.result.seats[0].refusals == 1
    assert info.result.seats[0].timeouts == 0  # asked again at once: a refusal leaves the decision open


def run_bot(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "croupier.clients.cli", "bot", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def test_croupier_bot_stops_cleanly_on_sigterm(referee: Croupier, admin: Admin) -> None:
    response = await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="idle"), metadata=ADMIN)
    bot = run_bot(
        "--strategy",
        "random",
        env={"CROUPIER_SERVER": f"127.0.0.1:{referee.port}", "CROUPIER_TOKEN": response.token},
    )
    try:
        for _ in range(int(WAIT * 10)):  # until the referee lists its stream
            bots = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
            if any(b.streams for b in bots.bots):
                break
            await asyncio.sleep(0.1)
        bot.send_signal(signal.SIGTERM)
        output, _ = await asyncio.to_thread(bot.communicate, timeout=WAIT)
    finally:
        bot.kill()
    assert bot.returncode == 0, output
    assert "connected to" in output and "stopped after 0 match(es)" in output


async def test_croupier_bot_says_why_the_referee_refused_it(referee: Croupier) -> None:
    bot = run_bot("--server", f"127.0.0.1:{referee.port}", "--token", "bot_nonsense")
    output, _ = await asyncio.to_thread(bot.communicate, timeout=WAIT)
    assert bot.returncode == 2
    assert "UNAUTHENTICATED" in output and "unknown token" in output


def test_croupier_bot_without_a_token_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CROUPIER_TOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "bot", "--server", "127.0.0.1:1"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode == 2
    assert "give a token" in result.stderr


def test_an_unknown_strategy_is_named_in_the_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "bot", "--strategy", "clever", "--token", "t"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode == 2
    assert "unknown strategy 'clever'" in result.stdout + result.stderr


async def test_a_bot_whose_seat_is_forfeited_is_done_with_that_match(referee: Croupier, admin: Admin) -> None:
    class Late(Bot):
        async def choose(self, view: Any, legal: list[Any]) -> int:
            await asyncio.sleep(0.5)  # past the 100 ms decision time, with no bank
            return 0

    created = await admin.create(
        "chinese_ten", 2, {"target": 50}, seed=4, decision_ms=100, bank_ms=0, max_timeouts=1
    )
    address = f"127.0.0.1:{referee.port}"
    late = Client(Late, address, [created.seat_tokens[1]], stop_after=1)
    other = Client(RandomBot, address, [created.seat_tokens[0]], stop_after=1)
    assert await play([late, other]) == [0, 0]
    info = await admin.wait(created.match.match_id)
    assert info.result.seats[1].forfeited == "timeouts" and late.finished == 1 and not late.seats
