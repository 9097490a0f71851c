"""The bosses: determinized search (PIMC) from the seat's own view, ``boss-1`` and ``boss-2``.

For each of a number of worlds the view cannot tell apart (``worlds.world``: hidden cards re-dealt
by the engine's own ``resample_hidden``), every legal action is applied to a copy of the world and
played out by the game's heuristic in every seat to the end of the deal (or a horizon); the
heuristic's own choice is played unless another action leads it world by world by more than its
noise (``improvement``). Every action meets the same worlds and the same later chance, so their
values differ by the action, not by luck.

Pure and deterministic: the search's generator is seeded from the bot's seed and the view itself,
so a view, its legal actions and a seed always give the same choice, and a re-deal of cards the
seat cannot see (which leaves the view as it is) changes nothing. Budgets are playouts, not time.
Pair Battle in real time is a race, not a turn: there the bosses play the heuristic at once
(thinking costs the race; ``docs/bots.md``).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from croupier.clients.bots.worlds import searchable, world
from croupier.clients.sdk import Bot, Match
from croupier.engine.core import GameState
from croupier.engine.rng import Rng

__all__ = [
    "LEVELS",
    "Boss1",
    "Boss2",
    "BossBot",
    "Level",
    "decide",
    "improvement",
    "random_policy",
    "value",
    "values",
]

Policy = Callable[[Any, list[Any], Any], int]
"""A heuristic module's ``choose(view, legal, options) -> index``."""


@dataclass(frozen=True)
class Level:
    """A boss's budget: playouts per decision, by game (spread over the legal actions)."""

    name: str
    playouts: dict[str, int]
    infer: bool = False
    """Whether worlds keep to what the others' plays revealed (``worlds.world``): off, as it has
    not been shown to win (two seats: it changed 4 choices of 205, and split every set; docs/bots.md)."""
    random_rollouts: bool = False
    """Playouts at random rather than by the heuristic (cheaper, so more of them in a budget of
    time: measured against the heuristic's in docs/bots.md, and lost)."""

    def scaled(self, factor: float) -> Level:
        """The same level on a budget ``factor`` times as large (tests play it small)."""
        playouts = {game: max(1, round(n * factor)) for game, n in self.playouts.items()}
        return replace(self, playouts=playouts)


LEVELS = {
    "boss-1": Level(
        "boss-1", {"chinese_ten": 300, "platinum_fish": 72, "spoil_five": 600, "pair_battle": 200}
    ),
    "boss-2": Level(
        "boss-2", {"chinese_ten": 3000, "platinum_fish": 720, "spoil_five": 6000, "pair_battle": 2000}
    ),
}
"""Each level's budget: boss-1 within 100 ms a decision at p95 on one core, boss-2 within 1 s
(compiled engine; bench/boss_speed.py measures both)."""
MAX_STEPS = 2_000
"""A playout's cap in actions where it plays to the deal's end (a guard: every deal ends before)."""


def horizon(game: str, players: int) -> int:
    """Actions a playout plays before it is valued where it stands. A Platinum Fish game is one long
    deal (a whole one cost 9 ms, 40 actions a quarter of it); in Chinese Ten what a play leaves on
    the table is taken or not within a few rounds, and the rest of the deal is mostly the stock's
    luck (to the deal's end, boss-1 was no better than the heuristic); elsewhere the deal's end."""
    if game == "platinum_fish":
        return 40
    if game == "chinese_ten":
        return 3 * players
    return MAX_STEPS


def policy(game: str) -> Policy:
    """The game's heuristic, which plays every seat in a playout."""
    choose: Policy = importlib.import_module(f"croupier.clients.bots.{game}").choose
    return choose


def decide(game: str, view: Any, legal: list[Any], options: Any, level: Level, seed: int = 0) -> int:
    """The boss's choice: an index into ``legal``, from the view alone."""
    if len(legal) == 1:
        return 0
    if not searchable(game, view):
        return policy(game)(view, legal, options)
    return improvement(values(game, view, legal, options, level, seed), policy(game)(view, legal, options))


def values(
    game: str, view: Any, legal: list[Any], options: Any, level: Level, seed: int = 0
) -> list[list[float]]:
    """Each legal action's value in each of the level's worlds (the same worlds for every action),
    from the view alone: what ``decide`` chooses by, and what a review compares a move with."""
    rng = Rng(_seed(seed, game, view, legal))
    play = random_policy(rng) if level.random_rollouts else policy(game)
    seat = view.seat
    found: list[list[float]] = [[] for _ in legal]
    steps = horizon(game, len(view.hand_sizes))
    for _ in range(max(2, level.playouts[game] // len(legal))):
        drawn = world(game, view, options, legal, rng, level.infer)
        for i, action in enumerate(legal):
            state = drawn.copy()  # each action meets the same world and the same later chance
            state.apply(seat, action)
            found[i].append(playout(game, state, seat, play, options, steps))
    return found


def improvement(values: list[list[float]], default: int) -> int:
    """The action whose lead over ``default`` (the heuristic's own choice), world by world, stands
    furthest above its noise (the mean less one standard error), if any does; else ``default``.
    With a few worlds the plain best mean is mostly the luckiest action, worse than the heuristic:
    the search overrules the heuristic only where the worlds agree."""
    base = values[default]
    best, best_margin = default, 0.0
    for i, mine in enumerate(values):
        leads = [a - b for a, b in zip(mine, base, strict=True)]
        mean = sum(leads) / len(leads)
        spread = (sum((x - mean) ** 2 for x in leads) / (len(leads) - 1)) ** 0.5
        margin = mean - spread / len(leads) ** 0.5
        if margin > best_margin:
            best, best_margin = i, margin
    return best


def playout(
    game: str, state: GameState[Any, Any], seat: int, play: Policy, options: Any, max_steps: int
) -> float:
    """Play ``state`` on by ``play`` in every seat to the end of its deal (at most ``max_steps``
    actions); the seat's value there."""
    deal = _deal(state)
    for _ in range(max_steps):
        if state.is_over() or _deal(state) != deal:
            break
        acting = state.to_act()
        if not acting:
            break  # only a real-time game waits on its clock: never searched
        for mover in sorted(acting):
            view = state.view(mover)
            legal = state.legal_actions(mover)
            state.apply(mover, legal[play(view, legal, options) if len(legal) > 1 else 0])
    return value(game, state, seat)


def random_policy(rng: Rng) -> Policy:
    """A uniformly random legal action, drawn from the search's own generator (so still seeded)."""
    return lambda view, legal, options: rng.randint(0, len(legal) - 1)


def _deal(state: Any) -> int:
    """The deal in play: a playout stops where the next deal (of fresh chance) begins."""
    return getattr(state, "deal", 0)


PLACE_WEIGHT = 100.0
"""A place won over another seat, in points of the margin: more than any margin of one game (Pair
Battle ranks its finishers first whatever their points)."""


def value(game: str, state: Any, seat: int) -> float:
    """What the position is worth to ``seat``: its lead over the others' mean on the game's count
    (a deal's points, chips with the pool shared, matches laid, points), and in games of one
    deal the places it beats the others by besides."""
    if game == "chinese_ten":
        ended = bool(state.deal_results)  # a world starts with none: the deal was scored into totals
        scores = (
            list(state.totals) if ended else [t + p for t, p in zip(state.totals, state.points, strict=True)]
        )
    elif game == "spoil_five":
        share = state.pool / state.players
        scores = [bank + share for bank in state.banks]
    elif game == "platinum_fish":
        scores = [len(pairs) for pairs in state.matches]
    else:
        scores = list(state.scores)
    others = [s for i, s in enumerate(scores) if i != seat]
    margin = float(scores[seat] - sum(others) / len(others))
    if game in ("platinum_fish", "pair_battle") and state.is_over():
        places: tuple[int, ...] = state.outcome().places  # what the match is scored by: first
        return PLACE_WEIGHT * sum((places[seat] < p) - (places[seat] > p) for p in places) + margin
    return margin


def _seed(seed: int, game: str, view: Any, legal: list[Any]) -> int:
    """The search's seed: the bot's, and everything the seat knows at this decision."""
    text = f"{seed}|{game}|{view!r}|{legal!r}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


class BossBot(Bot):
    """A boss through the SDK: ``decide`` at its level; Pair Battle's real-time plays sent at once."""

    level: ClassVar[Level]

    def __init__(self, match: Match, seed: int = 0, level: Level | None = None) -> None:
        super().__init__(match)
        self.seed = seed
        self.budget = level or type(self).level
        module = importlib.import_module(f"croupier.clients.bots.{match.game}")
        self.follow_ups: Callable[[Any], list[Any]] | None = getattr(module, "follow_ups", None)

    def choose(self, view: Any, legal: list[Any]) -> int:
        game = self.match.game
        choice = decide(game, view, legal, self.match.options, self.budget, self.seed)
        if self.follow_ups is not None and not searchable(game, view):
            for action in self.follow_ups(view):  # real-time plays that need no request
                self.play(action)
        return choice


class Boss1(BossBot):
    """``boss-1``: at most 100 ms a decision."""

    level = LEVELS["boss-1"]


class Boss2(BossBot):
    """``boss-2``: at most 1 s a decision."""

    level = LEVELS["boss-2"]
