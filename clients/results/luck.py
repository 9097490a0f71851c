"""Luck out of the score: AIVAT's chance correction (Burch et al., AAAI-18) of a match's pairwise
points, with a value function fixed before the first deal.

The referee sees the full state. ``Evaluator.value(state, a, b)`` estimates, from it, the points
seat ``a`` will score against seat ``b`` (1 ahead, ½ level, 0 behind: sets.py's pair points):
the score so far (in Chinese Ten with what a linear model fitted offline expects each seat still to
take of the deal, from the hands and the table: luck_games.CHINESE_TEN_WEIGHTS) and a normal spread
for what remains to be scored. At every chance event the
corrected points subtract ``V(after) − E[V(after)]``, the expectation over chance's outcomes with
their true probabilities given what came before. Each term has mean zero whatever ``V`` is (the
tower rule), and the number of terms is decided before each of their draws, so the corrected
points have the plain points' mean for any ``V``; a ``V`` that foresees the result well removes
most of what chance gave, which is the variance that remains after duplicate.

What counts as chance, and over what the expectation runs:

- A draw of the engine's ``Rng`` after the deal (Platinum Fish's dice, Pair Battle's lockstep
  order, the shuffle of the next deal of a multi-deal match): the same step is replayed on copies
  whose ``Rng`` answers each uniform pick (``_Picks``, as the OpenSpiel bridge's ScriptedRng does:
  a die one pick, a shuffle of n items n − 1 picks), every outcome with its probability when there
  are at most ``outcomes`` of them, else ``outcomes`` independent draws of chance (whose mean is
  an unbiased estimate of the expectation: the term keeps mean zero). The engine's generator is
  taken as true chance: its next draw independent of everything a seat or the referee has seen.
- A card turned from a pre-shuffled stock (Chinese Ten's turn-up): the engine orders the stock at
  the deal, but no seat sees that order and no action depends on it, so given everything revealed
  to anyone so far the unrevealed stock is in a uniformly random order, and its top card is uniform
  among the cards still in it. That, not the order the referee holds, is chance's outcome: the
  step is replayed with each stock card swapped to the top. Had the expectation been taken with
  the order known, the turn-up would be no chance at all and its luck would stay in the score.
  Platinum Fish's stock is not read this way: a roll takes the first card of the rolled value,
  which tells that the others of that value lie deeper, so after one search the top card is no
  longer uniform among the unseen. There the stock's order is part of the deal (cancelled by
  duplicate) and its dice are the chance, with the order as the referee holds it: exact.
- The deal itself, for fresh deals only (duplicate cancels it): ``V`` of the dealt state less its
  mean over ``outcomes`` other deals of the same options, drawn from ``seed``.

Which steps may draw is a cheap per-game test (``luck_games.MAY_DRAW``); a draw or a turn-up it did not
foresee raises (the meter counts the live generator's draws), so no chance goes uncorrected.

The evaluator's identity (``Evaluator.identity``: its name, version, parameters, this module's
source digest and a hash of them) is what a run commits to before its first deal.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from croupier.clients.results.luck_games import MAY_DRAW, PROGRESS, TURN_UP, TWIN, WORKED_OUT, Worked
from croupier.clients.results.sets import pair_points
from croupier.engine.core import GameSpec
from croupier.engine.rng import Rng

__all__ = ["EVALUATOR_VERSION", "Evaluator", "LuckMeter", "default_evaluator", "seat_luck"]

EVALUATOR_VERSION = 2
T = TypeVar("T")
SOURCES = (Path(__file__), Path(__file__).with_name("luck_games.py"))
"""The code V and its chance model are: its identity holds their digest."""


# --- the value function ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evaluator:
    """``V``: the pair points seat ``a`` will score against ``b``, from a full state: the leader by
    the score so far and what each seat is expected to take yet (``PROGRESS``), with a normal spread
    of ``scale`` times the root of what remains."""

    game: str
    scale: float
    outcomes: int = 36
    """Chance outcomes averaged at most per event; beyond, that many independent draws."""
    seed: int = 0
    """The draws' seed (fixed and committed with the rest)."""
    poor: bool = False
    """A deliberately poor V (the scores read backwards): the correction stays unbiased, only useless."""

    def value(self, state: Any, a: int, b: int) -> float:
        if state.is_over():
            places = state.outcome().places
            return pair_points(places[a], places[b])
        scores, remaining = PROGRESS[self.game](state)
        return self.value_of(scores, remaining, a, b)

    def value_of(self, scores: Sequence[float], remaining: float, a: int, b: int) -> float:
        """V from a game's score so far and what remains to be scored."""
        lead = scores[a] - scores[b]
        if self.poor:
            lead = -lead
        if remaining <= 0:
            return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0
        return 0.5 * (1.0 + math.erf(lead / (self.scale * math.sqrt(remaining) * math.sqrt(2.0))))

    def identity(self) -> dict[str, Any]:
        """What a run commits to before its first deal: enough to recompute every corrected score."""
        source = hashlib.sha256(b"".join(path.read_bytes() for path in SOURCES)).hexdigest()
        body = {"name": "score-and-spread", "version": EVALUATOR_VERSION, **asdict(self), "code": source}
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        return {**body, "hash": digest}


SCALES = {"chinese_ten": 3.0, "platinum_fish": 0.65, "spoil_five": 2.0, "pair_battle": 1.0}
"""Each game's spread per root unit of what remains (fitted offline: docs/testing-bots.md)."""


def default_evaluator(game: str, **overrides: Any) -> Evaluator:
    if game not in PROGRESS:
        raise ValueError(f"no luck evaluator for {game}; known: {', '.join(sorted(PROGRESS))}")
    return Evaluator(game, **{"scale": SCALES[game], **overrides})


def seat_luck(pairs: Sequence[tuple[int, int, float]], seats: int) -> list[float | None]:
    """Each seat's luck from the luck of pairs (``a`` against ``b``): its mean over the pairs it is
    in, ``b``'s the negative of ``a``'s (V of b against a is 1 − V of a against b); None for a seat
    in none."""
    found: list[list[float]] = [[] for _ in range(seats)]
    for a, b, luck in pairs:
        found[a].append(luck)
        found[b].append(-luck)
    return [sum(values) / len(values) if values else None for values in found]


# --- chance's draws, one uniform pick at a time ------------------------------------------------------


class _Picks(Rng):
    """An ``Rng`` answering each uniform pick from ``prefix``, then 0 (to learn the sizes of the picks
    still to come) or from ``source`` (chance drawn afresh); ``sizes`` records every pick's size."""

    __slots__ = ("_prefix", "_source", "made", "sizes")

    def __init__(self, prefix: Sequence[int] = (), source: random.Random | None = None) -> None:
        super().__init__(0)
        self._prefix, self._source = prefix, source
        self.sizes: list[int] = []
        self.made: list[int] = []

    def _pick(self, size: int) -> int:
        if size <= 1:
            return 0
        index = len(self.sizes)
        if index < len(self._prefix):
            pick = self._prefix[index]
        else:
            pick = self._source.randrange(size) if self._source is not None else 0
        self.sizes.append(size)
        self.made.append(pick)
        return pick

    def shuffle(self, items: MutableSequence[T]) -> None:
        count = len(items)
        for place in range(count - 1):
            chosen = place + self._pick(count - place)
            items[place], items[chosen] = items[chosen], items[place]

    def die(self, sides: int = 6) -> int:
        return 1 + self._pick(sides)

    def randint(self, low: int, high: int) -> int:
        return low + self._pick(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self._pick(len(items))]

    def random(self) -> float:
        raise NotImplementedError("a continuous draw has no finite chance node")

    def fork(self) -> Rng:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> _Picks:
        return self


class _Counted(Rng):
    """The live match's generator, drawing as before and counting its draws (a missed chance raises)."""

    __slots__ = ("draws", "inner")

    def __init__(self, inner: Rng) -> None:
        super().__init__(0)
        self.inner, self.draws = inner, 0

    def shuffle(self, items: MutableSequence[T]) -> None:
        self.draws += 1
        self.inner.shuffle(items)

    def die(self, sides: int = 6) -> int:
        self.draws += 1
        return self.inner.die(sides)

    def randint(self, low: int, high: int) -> int:
        self.draws += 1
        return self.inner.randint(low, high)

    def choice(self, items: Sequence[T]) -> T:
        self.draws += 1
        return self.inner.choice(items)

    def random(self) -> float:
        self.draws += 1
        return self.inner.random()

    def fork(self) -> Rng:
        self.draws += 1
        return self.inner.fork()

    def __deepcopy__(self, memo: dict[int, object]) -> Rng:
        import copy

        return copy.deepcopy(self.inner, memo)


Step = Callable[[Any], Any]


def _copy(state: Any) -> Any:
    return state.copy()


@dataclass
class LuckMeter:
    """Follows one match and sums, per pair of seats, the luck chance gave ``a`` against ``b``:
    ``corrected = pair_points(places[a], places[b]) − luck[(a, b)]``."""

    evaluator: Evaluator
    pairs: Sequence[tuple[int, int]]
    fresh: bool = False
    """The deal is chance too (fresh deals; duplicate cancels it)."""
    luck: dict[tuple[int, int], float] = field(default_factory=dict)
    events: int = 0
    declared: dict[int, Sequence[float]] = field(default_factory=dict)
    """A seat's policy at its next decision, declared by a bot whose policy is known exactly: each
    legal action's probability, in ``legal_actions``' order. That decision's term is added (AIVAT's:
    ``E[V | the action taken] − Σ π(a) E[V | a]``, mean zero under that policy)."""
    _draws: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.luck = {pair: 0.0 for pair in self.pairs}
        self._draws = random.Random(self.evaluator.seed)

    def follow(self, state: Any, spec: GameSpec[Any], options: Any) -> Any:
        """``state``, just dealt, as the match plays it: every step measured (``Followed``), and the
        deal's own term first on fresh deals (V of this deal less its mean over other deals)."""
        if self.fresh:
            others = [
                spec.new_game(options, Rng(self._draws.getrandbits(64)))
                for _ in range(self.evaluator.outcomes)
            ]
            self._add(state, [(1.0 / len(others), other) for other in others])
        state.rng = _Counted(state.rng)
        return Followed(state, self)

    def step(self, state: Any, seat: int, action: Any, run: Step) -> Any:
        """Run one step (``run(state)``: an action, a wait for the clock) and add its chance term."""
        game = self.evaluator.game
        policy = self.declared.pop(seat, None) if action is not None else None
        if policy is not None:
            self._add_decision(state, seat, action, policy)
        outcomes = None
        worked_out = WORKED_OUT.get(game)
        seen = worked_out[0](state, seat, action) if worked_out is not None else None
        if seen is None and MAY_DRAW[game](state, seat, action):
            outcomes = self._outcomes(state, run)
        stock, draws = len(getattr(state, "stock", ())), state.rng.draws
        result = run(state)
        if outcomes is not None:
            self._add(state, outcomes)
        elif seen is not None:
            assert worked_out is not None
            self._add_seen(seen, worked_out[1](state, result))
            stock -= game in TURN_UP  # the turn-up worked out
            draws = state.rng.draws if game not in TURN_UP else draws  # the dice worked out
        if outcomes is None and (state.rng.draws != draws or (game in TURN_UP and len(state.stock) < stock)):
            raise RuntimeError(f"{game}: a chance event the luck model did not foresee ({action})")
        return result

    def _add(self, after: Any, outcomes: list[tuple[float, Any]]) -> None:
        self.events += 1
        value = self.evaluator.value
        for a, b in self.pairs:
            expected = sum(p * value(state, a, b) for p, state in outcomes)
            self.luck[(a, b)] += value(after, a, b) - expected

    def _add_decision(self, state: Any, seat: int, chosen: Any, policy: Sequence[float]) -> None:
        legal = state.legal_actions(seat)
        if len(legal) != len(policy):
            raise ValueError(f"a policy of {len(policy)} actions declared for {len(legal)} legal ones")
        self.events += 1
        for action, p in zip(legal, policy, strict=True):
            if p or action == chosen:
                expected = self._expected(state, seat, action)
                for pair, value in expected.items():
                    self.luck[pair] += ((action == chosen) - p) * value

    def _expected(self, state: Any, seat: int, action: Any) -> dict[tuple[int, int], float]:
        """Each pair's expected V once ``seat`` plays ``action``, over chance's outcomes after it."""
        game = self.evaluator.game
        worked_out = WORKED_OUT.get(game)
        seen = worked_out[0](state, seat, action) if worked_out is not None else None
        if seen is not None:
            outcomes, alike = seen
            value_of = self.evaluator.value_of
            return {
                (a, b): sum(count * value_of(*after, a, b) for after, count in alike.items()) / len(outcomes)
                for a, b in self.pairs
            }

        def run(twin: Any) -> Any:
            return twin.apply(seat, action)

        if MAY_DRAW[game](state, seat, action):
            found = self._outcomes(state, run)
        else:
            twin = TWIN.get(game, _copy)(state)
            twin.rng = _Picks()
            run(twin)
            found = [(1.0, twin)]
        value = self.evaluator.value
        return {(a, b): sum(p * value(after, a, b) for p, after in found) for a, b in self.pairs}

    def _add_seen(self, worked: Worked, chosen: object) -> None:
        self.events += 1
        value = self.evaluator.value_of
        outcomes, alike = worked  # outcomes V cannot tell apart are valued once
        scores, rest = outcomes[chosen]
        for a, b in self.pairs:
            expected = sum(count * value(seen, left, a, b) for (seen, left), count in alike.items())
            self.luck[(a, b)] += value(scores, rest, a, b) - expected / len(outcomes)

    def _outcomes(self, state: Any, run: Step) -> list[tuple[float, Any]]:
        """Every state the step may lead to, with its probability: the stock's top card uniform among
        the stock (where it is chance), then the Rng's picks (or ``outcomes`` draws of each)."""
        limit = self.evaluator.outcomes
        tops: list[int | None] = [None]
        if self.evaluator.game in TURN_UP and state.stock:
            tops = list(range(len(state.stock)))
            if len(tops) > limit:
                tops = self._draws.sample(tops, limit)  # a uniform subset: its mean is unbiased
        found: list[tuple[float, Any]] = []
        for top in tops:
            weight = 1.0 / len(tops)
            for p, after in self._picked(state, run, top):
                found.append((weight * p, after))
        return found

    def _picked(self, state: Any, run: Step, top: int | None) -> list[tuple[float, Any]]:
        """The states the step leads to from ``state`` (the stock's ``top`` swapped up), over the Rng's
        picks: every path with its probability, or ``outcomes`` independent draws if there are more."""

        copy = TWIN.get(self.evaluator.game, _copy)

        def replay(picks: _Picks) -> Any:
            twin = copy(state)
            twin.rng = picks
            if top is not None:
                twin.stock[0], twin.stock[top] = twin.stock[top], twin.stock[0]
            run(twin)
            return twin

        first = _Picks()
        leaves = [(first, replay(first))]
        limit = self.evaluator.outcomes
        if math.prod(first.sizes) <= limit:
            # Every path once: branch each pick beyond the prefix its path was replayed with.
            found: list[tuple[float, Any]] = []
            stack = [(first, leaves[0][1], 0)]
            while stack and len(found) + len(stack) <= limit:
                picks, after, fixed = stack.pop()
                found.append((1.0 / math.prod(picks.sizes), after))
                for place in range(fixed, len(picks.sizes)):
                    for value in range(1, picks.sizes[place]):
                        branch = _Picks([*picks.made[:place], value])
                        stack.append((branch, replay(branch), place + 1))
            if not stack:
                return found
        draws = [_Picks((), random.Random(self._draws.getrandbits(64))) for _ in range(limit)]
        return [(1.0 / limit, replay(picks)) for picks in draws]


class Followed:
    """A game state whose steps a ``LuckMeter`` measures; everything else is the state's own."""

    def __init__(self, state: Any, meter: LuckMeter) -> None:
        self._state, self._meter = state, meter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)

    def apply(self, seat: int, action: Any, now: float = 0.0) -> Any:
        return self._meter.step(self._state, seat, action, lambda s: s.apply(seat, action, now))

    def wait_for_clock(self, now: float) -> Any:
        return self._meter.step(self._state, -1, None, lambda s: s.wait_for_clock(now))

    def penalize(self, seat: int, reason: str, now: float = 0.0) -> Any:
        return self._meter.step(self._state, seat, None, lambda s: s.penalize(seat, reason, now))

    # a journal's replay (luck_journal.py) lets time act as the referee did
    def advance(self, now: float) -> Any:
        return self._meter.step(self._state, -1, None, lambda s: s.advance(now))

    def recount(self, now: float) -> Any:
        return self._meter.step(self._state, -1, None, lambda s: s.recount(now))
