"""The registry of games by name: what the referee, tools and tests look up."""

from __future__ import annotations

from typing import Any

from croupier.engine.core import GameSpec, InvalidOptions
from croupier.engine.games import chinese_ten, pair_battle, platinum_fish, spoil_five

__all__ = [
    "GAMES",
    "get_game",
]

GAMES: dict[str, GameSpec[Any]] = {
    spec.name: spec for spec in (chinese_ten.SPEC, pair_battle.SPEC, platinum_fish.SPEC, spoil_five.SPEC)
}


def get_game(name: str) -> GameSpec[Any]:
    try:
        return GAMES[name]
    except KeyError:
        raise InvalidOptions(f"unknown game {name!r}; known: {', '.join(sorted(GAMES))}") from None
