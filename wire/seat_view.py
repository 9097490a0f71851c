"""What a seat is shown: its view, and the legal actions it is asked to choose among. The referee
sends these (server/match.py, match_state.py: encoded by convert.py, decoded by the SDK into the
same engine objects) and in-process play hands them to the bot as they are (clients/author/inprocess.py):
one definition for both, so a bot sees the same whichever way it plays.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from croupier.engine.core import Action, GameState

__all__ = ["asked", "shown"]


def shown(state: GameState[Any, Any], seat: int) -> Any:
    """The seat's view: everything it may know, and nothing more."""
    return state.view(seat)


def asked(state: GameState[Any, Any], seat: int, to_act: Collection[int]) -> list[Action]:
    """The actions ``seat`` is asked to choose among while the game waits on ``to_act``: none
    when it is not among them."""
    return state.legal_actions(seat) if seat in to_act else []
