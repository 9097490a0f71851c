"""Could I have won? A boss replays each of a seat's decisions in a finished match and marks
where its own choice scores better on average than the move made.

The engine re-runs the journal; at each decision of the seat the boss is given what the seat was
given then, its view and its legal actions, and nothing else (``judge`` takes no state):
``boss.values`` builds its worlds from that view, as the boss does at a table. The move made and
the boss's choice meet the same worlds, so the gain is the boss's lead over the move world by
world, in the game's value (``boss.value``); a decision is marked where that lead stands above
its noise (the mean less one standard error above zero), the rule by which the boss overrules
its own heuristic. The step named is the replay's position before the decision: ``croupier
replay ID --fork STEP`` plays it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from croupier.clients.bots.boss import Level, improvement, policy, values
from croupier.clients.bots.worlds import searchable
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.journal import Act, End, Header, Record, apply_record
from croupier.server.messages import shown

__all__ = ["Decision", "judge", "review"]


@dataclass(frozen=True)
class Decision:
    """One decision of the seat, as the boss judges it."""

    step: int
    """The replay's step the decision was made at (the position before the move)."""
    seat: int
    played: Any
    choice: Any
    """What the boss would have played there."""
    gain: float
    """The boss's choice's mean lead over the move made, world by world (0 where they agree)."""
    error: float
    """One standard error of ``gain``."""
    worlds: int

    @property
    def better(self) -> bool:
        """Whether the boss's choice scores better than the move, beyond the worlds' noise."""
        return self.gain - self.error > 0


def judge(
    game: str, view: Any, legal: list[Any], options: Any, played: int, level: Level, seed: int = 0
) -> tuple[int, float, float, int]:
    """The boss's choice at a decision known by its ``view`` and ``legal`` actions, where the
    seat played ``legal[played]``: (its index, its mean lead over the move, that lead's standard
    error, worlds searched)."""
    found = values(game, view, legal, options, level, seed)
    choice = improvement(found, policy(game)(view, legal, options))  # the boss's own rule
    leads = [a - b for a, b in zip(found[choice], found[played], strict=True)]
    mean = sum(leads) / len(leads)
    spread = (sum((x - mean) ** 2 for x in leads) / (len(leads) - 1)) ** 0.5
    return choice, mean, spread / len(leads) ** 0.5, len(leads)


def review(records: list[Record], seats: set[int], level: Level, seed: int = 0) -> Iterator[Decision]:
    """Every searched decision (more than one legal action, not a real-time race) of ``seats`` in
    a finished match's journal ``records``, judged by the boss at ``level`` (its ``seed``)."""
    header, end = records[0], records[-1]
    if not isinstance(header, Header) or not isinstance(end, End):
        raise ValueError("only a finished match is reviewed: its journal must end with its result")
    spec = get_game(header.game)
    options = spec.options(header.options)
    state = spec.new_game(options, Rng(end.seed))
    step = 0
    for record in records[1:]:
        if isinstance(record, Act) and record.seat in seats:
            view, legal = state.view(record.seat), state.legal_actions(record.seat)
            move = spec.parse_action(record.action)
            if len(legal) > 1 and searchable(spec.name, view) and move in legal:
                played = legal.index(move)
                choice, gain, error, worlds = judge(spec.name, view, legal, options, played, level, seed)
                yield Decision(step, record.seat, move, legal[choice], gain, error, worlds)
        apply_record(spec, state, record)
        step += shown(record)
