"""In-process play (clients/author/inprocess.py): a bot is handed what the SDK would decode from the
referee's messages, over random playouts of every game, and the referee's rules of play hold
(timeouts, refusals, forfeits, async ``choose``, plays without a request)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.author.inprocess import STEP, play
from croupier.clients.bots import HeuristicBot, RandomBot, strategy
from croupier.clients.sdk import Bot, Match
from croupier.clients.sdk.protocol import StreamProtocol
from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2, match_pb2
from croupier.wire import convert, seat_view
from croupier.wire.framing import decision_request, parsed

VARIANTS = [(name, options) for name, spec in GAMES.items() for options in spec.test_variants]


class Recorder(Bot):
    """Notes every view and legal list it is handed, and plays a random legal action."""

    def __init__(self, match: Match, seen: list[tuple[int, Any, list[Any], int]], rng: random.Random) -> None:
        super().__init__(match)
        self.seen, self.rng = seen, rng

    def choose(self, view: Any, legal: list[Any]) -> int:
        choice = self.rng.randrange(len(legal))
        self.seen.append((self.match.seat, view, legal, choice))
        return choice


def decoded_by_the_sdk(
    game: str, options: Any, seat: int, view: Any, legal: list[Any]
) -> tuple[Any, list[Any]]:
    """What an SDK bot's ``choose`` is given for this view and legal list: the referee's
    DecisionRequest written as the referee writes it (framing, convert), read by the SDK's own
    stream protocol."""
    codec = convert.codec(game)
    got: list[tuple[Any, list[Any]]] = []

    class Catch(Bot):
        def choose(self, view: Any, legal: list[Any]) -> int:
            got.append((view, legal))
            return 0

    protocol = StreamProtocol(Catch)
    players = [match_pb2.Player(seat=i, name=f"p{i}") for i in range(options.players)]
    started = bots_pb2.MatchStarted(
        match_id="m", game=game, options=codec.options(options), seat=seat, players=players
    )
    protocol.receive(bots_pb2.ServerMessage(match_started=started))
    request = decision_request(
        "m", seat, 1, codec.view_bytes(view), codec.actions_bytes(legal),
        deadline_ms=5000, time_bank_ms=0, last_think_ms=0, events=[],
    )  # fmt: skip
    for message in protocol.arrived(parsed(request)):
        protocol.receive(message)
    assert len(got) == 1
    return got[0]


@pytest.mark.parametrize(("game", "options"), VARIANTS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(VARIANTS)])
def test_a_bot_in_process_is_handed_what_the_sdk_decodes_from_the_referee(game: str, options: Any) -> None:
    spec = get_game(game)
    for seed in range(3):
        seen: list[tuple[int, Any, list[Any], int]] = []
        rng = random.Random(seed)
        play(spec, options, seed, [lambda m, seen=seen, rng=rng: Recorder(m, seen, rng)] * options.players)
        assert seen
        for seat, view, legal, _ in seen:
            assert decoded_by_the_sdk(game, options, seat, view, legal) == (view, legal)


TURN_BASED = [
    (g, o) for g, o in VARIANTS if getattr(o, "timing", None) is None or o.timing.value == "lockstep"
]


@pytest.mark.parametrize(
    ("game", "options"), TURN_BASED, ids=[f"{g}-{i}" for i, (g, _) in enumerate(TURN_BASED)]
)
def test_a_bot_in_process_is_handed_its_own_seat_s_view_and_legal_actions(game: str, options: Any) -> None:
    """The same match replayed on the engine: each decision's view and list are what the referee
    would send that seat at that moment (its view, not another seat's or a spectator's)."""
    spec = get_game(game)
    seen: list[tuple[int, Any, list[Any], int]] = []
    rng = random.Random(7)
    play(spec, options, 7, [lambda m, seen=seen, rng=rng: Recorder(m, seen, rng)] * options.players)
    state = spec.new_game(options, Rng(7))
    now = 0.0
    for seat, view, legal, choice in seen:
        while not state.to_act():
            now, _ = state.wait_for_clock(now)
        assert seat in state.to_act()
        assert (view, legal) == (seat_view.shown(state, seat), seat_view.asked(state, seat, state.to_act()))
        assert view == state.view(seat) and view != state.full_view()
        state.apply(seat, legal[choice], now)
        now += STEP
    assert state.is_over()


class Broken(Bot):
    def choose(self, view: Any, legal: list[Any]) -> Any:
        raise RuntimeError("a bug")


class Refused(Bot):
    """Answers with a text no game parses: refused every time, then the clock plays."""

    def choose(self, view: Any, legal: list[Any]) -> Any:
        return "no such action"


class Thinker(Bot):
    async def choose(self, view: Any, legal: list[Any]) -> int:
        await asyncio.sleep(0)
        return len(legal) - 1


def test_a_bot_that_keeps_failing_times_out_and_is_forfeited_last() -> None:
    spec = get_game("chinese_ten")
    options = spec.options({"players": 3})
    played = play(spec, options, 5, [Broken, HeuristicBot, HeuristicBot])
    assert played.timeouts[0] == 3  # Clocks.max_timeouts, then the referee plays the seat
    assert played.forfeited == ("timeouts", "", "")
    assert played.places[0] == 3
    assert sorted(played.places[1:]) in ([1, 2], [1, 1])


def test_refused_answers_are_asked_again_then_time_out() -> None:
    spec = get_game("platinum_fish")
    options = spec.options({"players": 2})
    played = play(spec, options, 2, [Refused, RandomBot])
    assert played.refusals[0] == 3 * (1 + 3)  # each of three decisions: the answer and three retries
    assert played.timeouts[0] == 3
    assert played.forfeited[0] == "timeouts"


def test_an_async_choose_is_awaited_in_process() -> None:
    spec = get_game("spoil_five")
    options = spec.options({"players": 3})
    played = play(spec, options, 1, [Thinker, RandomBot, RandomBot])
    assert played.timeouts == (0, 0, 0)
    assert not any(played.forfeited)


class PlaysOnly(Bot):
    """Answers no request: acts only with plays of its own (Pair Battle's real time allows it)."""

    def choose(self, view: Any, legal: list[Any]) -> None:
        self.play(legal[-1])


@pytest.mark.parametrize("timing", ["realtime", "lockstep"])
def test_pair_battle_s_plays_without_a_request_go_in_after_the_answer(timing: str) -> None:
    spec = get_game("pair_battle")
    options = spec.options({"players": 2, "timing": timing})
    for seed in range(10):
        played = play(spec, options, seed, [PlaysOnly, HeuristicBot])  # the heuristic plays too
        assert played.timeouts == (0, 0) and played.refusals == (0, 0), seed
        assert not any(played.forfeited)


def test_the_heuristic_beats_random_in_process_as_offline() -> None:
    spec = get_game("pair_battle")
    options = spec.options({"players": 2, "timing": "lockstep"})
    wins = sum(play(spec, options, seed, [HeuristicBot, RandomBot]).places[0] == 1 for seed in range(60))
    assert wins >= 38  # about three in four


def test_a_bot_file_is_a_strategy_of_its_own_or_says_which_class_to_take(tmp_path: Path) -> None:
    one = tmp_path / "one.py"
    one.write_text(
        "from croupier.clients.sdk import Bot\n\n"
        "class Mine(Bot):\n    def choose(self, view, legal):\n        return 0\n"
    )
    two = tmp_path / "two.py"
    two.write_text(one.read_text() + "\nclass Other(Mine):\n    pass\n")
    assert strategy(str(one)).__name__ == "Mine"  # type: ignore[attr-defined]
    assert strategy(f"{two}:Other").__name__ == "Other"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"defines 2 Bot subclasses \(Mine, Other\): name one"):
        strategy(str(two))
    with pytest.raises(ValueError, match="no bot file"):
        strategy(str(tmp_path / "none.py"))


def test_a_bot_file_that_fails_to_load_fails_alike_when_asked_again(tmp_path: Path) -> None:
    """A worker process asks for a set's bots set after set: a file whose import failed once is not
    left half-loaded, to be found with no Bot in it the second time."""
    needy = tmp_path / "needy.py"
    needy.write_text("import croupier_test_missing\nfrom croupier.clients.bots import HeuristicBot\n")
    for _ in range(2):
        with pytest.raises(ModuleNotFoundError, match="croupier_test_missing"):
            strategy(str(needy))


ORPHAN = """
import os, signal, sys, time
from croupier.clients.author import inprocess

executor = inprocess.pool(1)
executor.submit(time.sleep, 0)  # starts the worker
print(*executor._processes, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # before the worker has even imported what it runs
"""


def gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\\nState:\\tZ" in status  # ended, not yet reaped by whoever adopted it


def test_a_worker_whose_runner_was_killed_before_it_started_ends(tmp_path: Path) -> None:
    """The runner killed (SIGKILL) while a worker starts: the worker ends rather than wait for
    sets forever, holding the runner's output open (a caller reading it to its end would hang:
    so the output goes to a file here)."""
    with (tmp_path / "out").open("w") as out:
        started = subprocess.run([sys.executable, "-c", ORPHAN], stdout=out, stderr=out, timeout=60)
    assert started.returncode == -signal.SIGKILL, (tmp_path / "out").read_text()
    (worker,) = map(int, (tmp_path / "out").read_text().split())
    deadline = time.monotonic() + 20
    while not gone(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = not gone(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, "the orphaned worker was still there 20 s after its runner was killed"
