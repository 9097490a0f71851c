"""The bundled bots: ``random`` for every game, ``heuristic``, one module of pure functions per game,
and the bosses ``boss-1`` and ``boss-2``, a search over those heuristics (``boss.py``).

Each game module exposes ``choose(view, legal, options) -> int`` (an index into
``legal``), testable without a server; ``HeuristicBot`` plays them through the SDK.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.sdk import Bot, BotFactory, Match

if TYPE_CHECKING:  # the search's imports only when a boss is asked for
    from croupier.clients.bots.boss import Level

__all__ = [
    "BUNDLED",
    "HEURISTICS",
    "STRATEGIES",
    "HeuristicBot",
    "RandomBot",
    "boss_level",
    "strategy",
]

BUNDLED = ("random", "heuristic", "boss-1", "boss-2")
"""The bundled strategies by name: ``croupier bot --strategy``, ``croupier match --bot`` and the rest."""

HEURISTICS = ("chinese_ten", "pair_battle", "platinum_fish", "spoil_five")
"""Games with a heuristic module here (every registered game)."""


BOSS_BUDGET = "CROUPIER_BOSS_BUDGET"
"""A factor on the bosses' playouts (``0.05``: a twentieth), for checks that need them quick, not strong."""


def boss_level(name: str) -> Level:
    """A boss's level by name, its budget scaled by ``CROUPIER_BOSS_BUDGET`` where that is set."""
    from croupier.clients.bots.boss import LEVELS

    factor = os.environ.get(BOSS_BUDGET)
    return LEVELS[name].scaled(_budget_factor(factor)) if factor else LEVELS[name]


def _budget_factor(text: str) -> float:
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not 0 < factor <= 100:
        raise ValueError(f"{BOSS_BUDGET} is a factor on the bosses' playouts, 0 to 100, not {text!r}")
    return factor


class RandomBot(Bot):
    """A uniformly random legal action, in every game."""

    def __init__(self, match: Match, rng: random.Random | None = None) -> None:
        super().__init__(match)
        self.rng = rng or random.Random()

    def choose(self, view: Any, legal: list[Any]) -> int:
        return self.rng.randrange(len(legal))


class HeuristicBot(Bot):
    """The game's heuristic (``clients/bots/<game>.py``)."""

    def __init__(self, match: Match) -> None:
        super().__init__(match)
        module = importlib.import_module(f"croupier.clients.bots.{match.game}")
        self.policy: Callable[[Any, list[Any], Any], int] = module.choose
        self.follow_ups: Callable[[Any], list[Any]] | None = getattr(module, "follow_ups", None)

    def choose(self, view: Any, legal: list[Any]) -> int:
        choice = self.policy(view, legal, self.match.options)
        if self.follow_ups is not None:
            for action in self.follow_ups(view):  # real-time plays that need no request
                self.play(action)
        return choice


def strategy(name: str, seed: int | None = None) -> BotFactory:
    """A bundled strategy by name, ``package.module:Class`` for any Bot subclass on the path, or
    ``FILE.py`` (``FILE.py:Class``) for the one a file of yours defines."""
    if name == "random":
        if seed is None:
            return RandomBot
        return lambda match: RandomBot(match, random.Random(f"{seed}/{match.id}/{match.seat}"))
    if name == "heuristic":
        return HeuristicBot
    if name in ("boss-1", "boss-2"):
        from croupier.clients.bots.boss import Boss1, Boss2  # the search's imports only when asked

        boss = Boss1 if name == "boss-1" else Boss2
        if seed is None and not os.environ.get(BOSS_BUDGET):
            return boss
        level = boss_level(name)
        return lambda match: boss(match, seed or 0, level)
    module_name, colon, attribute = name.partition(":")
    if module_name.endswith(".py"):
        return _from_file(Path(module_name), attribute)
    if not colon:
        raise ValueError(
            f"unknown strategy {name!r}: use random, heuristic, boss-1, boss-2, "
            "package.module:BotClass or FILE.py"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a bot module beside you, as `python -m` would find it
    factory: BotFactory = getattr(importlib.import_module(module_name), attribute)
    return factory


def _from_file(path: Path, attribute: str) -> BotFactory:
    """The Bot subclass a file defines (``FILE.py:Class`` when it defines several), loaded as the
    module ``python FILE.py`` would run, without running its ``__main__`` part."""
    if not path.is_file():
        raise ValueError(f"no bot file {path}")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"croupier_bot_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}_{digest}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"{path} is not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look classes up by module
        if str(path.resolve().parent) not in sys.path:
            sys.path.insert(0, str(path.resolve().parent))  # its own imports, as `python FILE.py` finds them
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]  # half run: asked again (the next set of a worker), it fails alike
            raise
    if attribute:
        factory: BotFactory = getattr(module, attribute)
        return factory
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Bot) and value.__module__ == name
    ]
    if len(found) != 1:
        classes = ", ".join(sorted(cls.__name__ for cls in found)) or "none"
        raise ValueError(f"{path} defines {len(found)} Bot subclasses ({classes}): name one, {path}:CLASS")
    return found[0]


STRATEGIES = {
    "random": "a random legal action",
    "heuristic": "the game's heuristic (clients/bots/<game>.py)",
    "boss-1": "a search over the heuristic's playouts from the seat's view, at most 100 ms a decision",
    "boss-2": "the same search, ten times the playouts: at most 1 s a decision",
}
