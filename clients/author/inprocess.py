"""Matches of Python SDK bots played inside worker processes, with no referee and no gRPC:
``croupier match --sprt ... --in-process``, and the calibration bench.

Each bot's ``choose`` gets what a referee would send it: the seat's view and the legal actions,
from the one definition the referee sends them by (wire/seat_view.py), as the engine objects the
SDK would decode from the referee's messages (tests/clients/author/test_inprocess.py holds them equal
over random playouts of every game). The referee's rules of play are kept too: a ``choose`` that
raises, returns nothing or returns something that is not an action of the list (after
``MAX_RETRIES`` refused answers) times out, the first legal action being played for it; after
``max_timeouts`` timeouts (or ``max_refusals`` refused actions) the seat is forfeited, played on
with the first legal action and ranked last. ``Bot.play`` (Pair Battle's plays without a request)
goes in right after the answer; a refused play costs what the game makes it cost. An ``async def
choose`` is awaited on the worker's own event loop.

Time is the referee's time, advancing ``STEP`` per action, every bot equally quick: in real time
(Pair Battle) the seat that acts among several able to is drawn from the match's seed, as
``sdk.play_offline`` does. A bot that overrides ``Bot.update`` is told of every change of its
view as with ``UPDATES_EVERY``; ``Bot.ended`` gets the seat's own final view (the twins of its
duplicate set may still be to play).

Sets go to a pool of worker processes, one per core, each playing a whole duplicate set
(``play_set``); inprocess_run.py hands them out and writes their results to the results database.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import inspect
import multiprocessing
import os
import random
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from croupier.clients.results.luck import Evaluator, LuckMeter, seat_luck
from croupier.clients.results.store import IN_PROCESS, MatchRecord, SeatResult
from croupier.clients.sdk import Bot, BotFactory
from croupier.clients.sdk.protocol import MAX_RETRIES, Commented, Match, Result, Unsolicited
from croupier.engine.core import Action, Event, GameSpec, GameState, IllegalAction, MalformedInput
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.clocks import Clocks
from croupier.server.seats import final_places
from croupier.wire import seat_view

STEP = 0.01
"""Referee seconds each action takes."""
CLOCKS = Clocks()
"""The referee's default clocks: how many timeouts and refusals forfeit a seat."""
REFEREE = IN_PROCESS
"""What the results database records as the referee of an in-process match."""


@dataclass(frozen=True, slots=True)
class Played:
    """A finished match, per seat: what the results database records. Plain numbers only: it
    crosses processes, and the compiled engine's frozen classes do not unpickle."""

    scores: tuple[int, ...]
    places: tuple[int, ...]
    """The engine's places with forfeited seats last (the referee's final_places)."""
    timeouts: tuple[int, ...]
    refusals: tuple[int, ...]
    forfeited: tuple[str, ...]
    actions: int
    luck: tuple[tuple[int, int, float], ...] = ()
    """Per pair of seats measured (``luck=``): the luck chance gave the first against the second."""


class _Seat:
    """One seat's bot and the referee's record of it."""

    def __init__(self, bot: Bot[Any, Any] | None) -> None:
        self.bot = bot
        self.sent: list[Unsolicited] = []
        self.timeouts = 0
        self.refusals = 0
        self.forfeited = ""
        self.told = bot is not None and type(bot).update is not Bot.update
        """The bot reads updates: it is told of every change of its view."""
        self.unsent: list[Event] = []


def play(
    spec: GameSpec[Any],
    options: Any,
    seed: int,
    factories: Sequence[BotFactory],
    *,
    match_id: str = "in-process",
    names: Sequence[str] | None = None,
    clocks: Clocks = CLOCKS,
    loop: asyncio.AbstractEventLoop | None = None,
    luck: LuckMeter | None = None,
) -> Played:
    """Play one match of ``spec`` dealt from ``seed``, seat i played by ``factories[i]``'s bot;
    ``luck`` measures what chance gave its pairs of seats (results/luck.py)."""
    state = spec.new_game(options, Rng(seed))
    if luck is not None:
        state = luck.follow(state, spec, options)
    order = random.Random(seed)
    players = tuple(names or (f"seat {i}" for i in range(len(factories))))
    seats: list[_Seat] = []
    for index, factory in enumerate(factories):
        match = Match(
            match_id, spec.name, options, index, players, int(clocks.decision * 1000), int(clocks.bank * 1000)
        )
        try:
            bot: Bot[Any, Any] | None = factory(match)
        except Exception:
            bot = None  # no bot for the seat: the clock plays it, as a referee's would
        seat = _Seat(bot)
        if bot is not None:
            bot._send = seat.sent.append
        seat.unsent.extend(state.opening)
        seats.append(seat)
    now, actions = 0.0, 0
    readers = [seat for seat in seats if seat.told]
    while not state.is_over():
        mover, legal = _next(state, seats, order)
        if mover is None:
            now, events = state.wait_for_clock(now)
        else:
            seat = seats[mover]
            if seat.forfeited:
                events = state.apply(mover, legal[0], now)
            else:
                events = _decide(spec, state, mover, seat, legal, now, clocks, loop)
            actions += 1
            now += STEP
        if readers:
            _tell(state, seats, mover, events)
    outcome = state.outcome()
    places = tuple(final_places(outcome.places, [bool(s.forfeited) for s in seats]))
    for index, seat in enumerate(seats):
        if seat.bot is None:
            continue
        result = Result(
            place=places[index],
            scores=outcome.scores,
            places=places,
            winners=tuple(i for i, place in enumerate(places) if place == 1),
            view=seat_view.shown(state, index),
            forfeited=seat.forfeited,
        )
        with contextlib.suppress(Exception):  # a bot's failure at the end changes no result
            seat.bot.ended(result)
    return Played(
        tuple(outcome.scores),
        places,
        tuple(s.timeouts for s in seats),
        tuple(s.refusals for s in seats),
        tuple(s.forfeited for s in seats),
        actions,
        tuple((a, b, value) for (a, b), value in luck.luck.items()) if luck is not None else (),
    )


def _next(
    state: GameState[Any, Any], seats: list[_Seat], order: random.Random
) -> tuple[int | None, list[Action]]:
    """The seat that acts next and what it is asked to choose among, or None while the game waits
    on its clock: among several that may act (real time), a playing one drawn by ``order``; a
    forfeited seat only when no other can act (the referee never lets it race live bots)."""
    to_act = state.to_act()
    if len(to_act) == 1:  # turn-based: the one seat the game waits on
        (index,) = to_act
        if not seats[index].forfeited:
            legal = seat_view.asked(state, index, to_act)
            if legal:
                return index, legal
    candidates = sorted(to_act)
    while candidates:
        live = [i for i in candidates if not seats[i].forfeited] or candidates
        index = order.choice(live) if len(live) > 1 else live[0]
        legal = seat_view.asked(state, index, to_act)
        if legal:
            return index, legal
        candidates.remove(index)
    return None, []


def _decide(
    spec: GameSpec[Any],
    state: GameState[Any, Any],
    index: int,
    seat: _Seat,
    legal: list[Action],
    now: float,
    clocks: Clocks,
    loop: asyncio.AbstractEventLoop | None,
) -> list[Event]:
    """Ask the seat's bot, and again after a refused answer (up to MAX_RETRIES times); apply its
    answer and its plays, or on a timeout the first legal action; the events they caused."""
    choice = _ask(seat, legal, state, index, loop)
    if type(choice) is int and not seat.sent and 0 <= choice < len(legal):
        try:  # not contextlib.suppress: this is every decision's path, and a try costs nothing
            return state.apply(index, legal[choice], now)  # the common answer, at the engine's speed
        except IllegalAction:
            pass  # refused below, as the referee refuses it
    events: list[Event] = []
    for attempt in range(1 + MAX_RETRIES):
        if attempt:
            choice = _ask(seat, legal, state, index, loop)
        plays: list[object] = []  # what Bot.play was given: parsed below
        if seat.sent:  # a comment has no journal to go to here: the play alone counts
            plays = [p.choice if isinstance(p, Commented) else p for p in seat.sent]
            seat.sent.clear()
        answered = refused = acted = False
        if choice is not None:
            answer = _action(spec, choice, legal)
            if answer is _FAILED:
                choice = None  # the SDK sends nothing for it: the clock runs
            else:
                action = answer if isinstance(answer, Action) else None
                answered = _apply(state, index, seat, action, now, events)
                refused = not answered
        for play in plays:
            if state.is_over() or seat.forfeited:
                break
            acted |= _apply(state, index, seat, _parsed(spec, play), now, events)
        if clocks.max_refusals and seat.refusals >= clocks.max_refusals:
            seat.forfeited = "refusals"
        if answered or acted or seat.forfeited or state.is_over():
            return events  # answered, or it played without answering: asked anew if still to act
        if not refused:
            break  # silence: the clock runs out
    seat.timeouts += 1
    events += state.apply(index, legal[0], now)
    if seat.timeouts >= clocks.max_timeouts:
        seat.forfeited = "timeouts"
    return events


def _apply(
    state: Any, index: int, seat: _Seat, action: Action | None, now: float, events: list[Event]
) -> bool:
    """Apply a bot's action as the referee does: refused (what the game makes a refusal cost)
    if it is no action or the rules refuse it."""
    try:
        if action is None:
            raise MalformedInput("not an action of this game")
        events += state.apply(index, action, now)
    except (IllegalAction, MalformedInput) as exc:
        seat.refusals += 1
        events += state.penalize(index, str(exc), now)
        return False
    return True


def _ask(
    seat: _Seat, legal: list[Action], state: Any, index: int, loop: asyncio.AbstractEventLoop | None
) -> Any:
    """The bot's answer, awaited if ``choose`` is async; None if it has no bot or ``choose`` raised."""
    if seat.bot is None:
        return None
    seat.unsent.clear()  # a decision request carries them; choose does not see them
    try:
        choice = seat.bot.choose(seat_view.shown(state, index), legal)
        if type(choice) is int:
            return choice
        if inspect.isawaitable(choice):
            choice = (loop or _loop()).run_until_complete(_awaited(choice))
    except Exception:
        return None
    return choice.choice if isinstance(choice, Commented) else choice  # no journal here for its comment


async def _awaited(choice: Any) -> Any:
    return await choice


_FAILED = object()
"""An answer the SDK cannot send (an index out of range, a value of another type): it logs the
error and the referee's clock plays."""


def _action(spec: GameSpec[Any], choice: Any, legal: list[Action]) -> Action | object | None:
    """What an answer names: an index into ``legal``, an action, or an action's text form (None
    if it does not parse: the referee refuses it)."""
    if isinstance(choice, bool) or not isinstance(choice, int | str | Action):
        return _FAILED
    if isinstance(choice, int):
        return legal[choice] if 0 <= choice < len(legal) else _FAILED
    return _parsed(spec, choice)


def _parsed(spec: GameSpec[Any], play: Any) -> Action | None:
    if isinstance(play, Action):
        return play
    if isinstance(play, str):
        try:
            return spec.parse_action(play)
        except MalformedInput:
            return None
    return None


def _tell(state: GameState[Any, Any], seats: list[_Seat], mover: int | None, events: list[Event]) -> None:
    """Each bot that reads updates is told what changed, except the mover (its events wait for
    its next update) and a seat about to be asked (a request carries them)."""
    to_act = None
    for index, seat in enumerate(seats):
        if not seat.told or seat.forfeited:
            continue
        seat.unsent.extend(events)
        if index == mover or not seat.unsent:
            continue
        to_act = state.to_act() if to_act is None else to_act
        if seat_view.asked(state, index, to_act):
            continue
        told, seat.unsent = seat.unsent, []
        with contextlib.suppress(Exception):
            assert seat.bot is not None
            seat.bot.update(seat_view.shown(state, index), told)


_LOOP: asyncio.AbstractEventLoop | None = None


def _loop() -> asyncio.AbstractEventLoop:
    """This process's event loop for async ``choose``: one, reused by every match."""
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP


# --- duplicate sets in worker processes --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetJob:
    """One duplicate set to play: every rotation's match, as picklable plain values."""

    game: str
    options: dict[str, Any]
    matches: tuple[tuple[int, int, tuple[str, ...]], ...]
    """Per rotation: its record id, seed and the bot in each seat."""
    specs: dict[str, str]
    """Each bot's strategy (``bots.strategy``): random, heuristic, boss-1, boss-2, module:Class or FILE.py."""
    luck: tuple[str, str, Evaluator] | None = None
    """Measure the luck of the first bot against the second with this V (results/luck.py)."""
    clock: dict[str, int] | None = None
    """A tournament file's clock of the game (config.Clock.as_dict, milliseconds): its max_timeouts and
    max_refusals forfeit a seat as the referee's would, decision_ms and bank_ms are told to the bots;
    no bot runs out of time here (each move takes the referee's STEP), so a slow bot times out only
    over a referee. None: the referee's defaults."""
    every_pair: Evaluator | None = None
    """Measure every pair of seats' luck with this V, as a tournament measures it from a journal
    (luck_journal.records_luck)."""
    fresh: bool = False
    """Fresh deals: the deal is chance too, for the luck measured."""
    seeds: dict[str, int] | None = None
    """The seed of a bot's strategy (``croupier bot --seed``: the random one's), by bot."""


_FACTORIES: dict[tuple[str, int | None], BotFactory] = {}


def play_set(job: SetJob) -> list[Played]:
    """Play a set's matches one after another (in a worker process)."""
    from croupier.clients.bots import strategy

    spec = get_game(job.game)
    options = spec.options(job.options)
    clocks = CLOCKS if job.clock is None else clocks_of(job.clock)
    played = []
    for record_id, seed, seats in job.matches:
        factories = []
        for bot in seats:
            chosen = (job.specs[bot], (job.seeds or {}).get(bot))
            if chosen not in _FACTORIES:
                _FACTORIES[chosen] = strategy(*chosen)
            factories.append(_FACTORIES[chosen])
        meter = None
        if job.luck is not None:
            new, old, evaluator = job.luck
            meter = LuckMeter(evaluator, [(seats.index(new), seats.index(old))])
        elif job.every_pair is not None:
            pairs = [(a, b) for a in range(len(seats)) for b in range(a + 1, len(seats))]
            meter = LuckMeter(job.every_pair, pairs, fresh=job.fresh)
        played.append(
            play(
                spec,
                options,
                seed,
                factories,
                match_id=f"{REFEREE}-{record_id}",
                names=seats,
                clocks=clocks,
                luck=meter,
            )
        )
    return played


def clocks_of(clock: dict[str, int]) -> Clocks:
    """The referee's clocks with a tournament file's (milliseconds) in place of its defaults."""
    seconds = {"decision_ms": "decision", "bank_ms": "bank", "grace_ms": "grace"}
    changes: dict[str, Any] = {}
    for name, value in clock.items():
        changes[seconds.get(name, name)] = value / 1000 if name in seconds else value
    return dataclasses.replace(CLOCKS, **changes)


ORPHAN_SECONDS = 0.5
"""How often a worker looks whether the process that started it is still there."""


def _quiet_worker(parent: int) -> None:
    """A worker leaves Ctrl-C to the parent, which stops handing out sets and ends the pool; and it
    ends when ``parent`` (the process that started it) is gone, killed, rather than wait for work
    forever: also when that happened before this worker got going (whose parent is another then)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


def workers() -> int:
    """One worker per core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pool(processes: int | None = None) -> concurrent.futures.ProcessPoolExecutor:
    """Worker processes started afresh (spawn): the parent may hold gRPC's threads, which a fork
    would copy half-way."""
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=processes or workers(),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_quiet_worker,
        initargs=(os.getpid(),),
    )


def seat_results(record: MatchRecord, played: Played, versions: dict[str, str]) -> list[SeatResult]:
    """A finished match's lines for the results database, with each seat's luck where measured."""
    luck = seat_luck(played.luck, len(record.seats))
    return [
        SeatResult(
            seat=index,
            bot=bot,
            score=played.scores[index],
            place=played.places[index],
            timeouts=played.timeouts[index],
            refusals=played.refusals[index],
            forfeited=bool(played.forfeited[index]),
            note=played.forfeited[index],
            version=versions.get(bot, ""),
            luck=luck[index],
        )
        for index, bot in enumerate(record.seats)
    ]
