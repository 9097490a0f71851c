"""The match in rooms (match.py, moves.py, timekeeping.py, match_journal.py on match_state.py):
every method one room calls in another is defined in a room, not left to the stub that names it."""

from __future__ import annotations

import inspect

from croupier.server.match import Match
from croupier.server.match_state import MatchState


def test_every_method_a_room_leaves_to_another_is_defined_in_one() -> None:
    stubs = {
        name
        for name, member in vars(MatchState).items()
        if inspect.isfunction(member) and "raise NotImplementedError" in inspect.getsource(member)
    }
    assert stubs, "MatchState names the methods its rooms share"
    undefined = sorted(name for name in stubs if getattr(Match, name) is vars(MatchState)[name])
    assert not undefined, f"no room of Match defines {undefined}"
