"""An episode and a referee match with the same seed and actions are the same game, as the journal shows."""

from __future__ import annotations

import asyncio
import random
from collections import deque

import grpc
import numpy as np
import pytest

from croupier.clients.pettingzoo import env
from croupier.engine.core import options_to_dict
from croupier.server.app import Croupier
from croupier.server.journal import End, Played, read_records
from croupier.server.replay import replay_journal
from croupier.v1 import bots_pb2
from tests.server.botclient import Admin, Bot, Policy

GAMES = {
    "chinese_ten": {"players": 3, "target": 1},
    "pair_battle": {"players": 3},
    "platinum_fish": {"players": 3},
    "spoil_five": {"players": 3, "deals": 2},
}


def scripted(actions: deque[str]) -> Policy:
    """Answer each decision with the next action of the episode, by its text form."""

    def choose(decision: bots_pb2.DecisionRequest) -> bots_pb2.Move:
        return bots_pb2.Move(
            match_id=decision.match_id, decision_id=decision.decision_id, text=actions.popleft()
        )

    return choose


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_an_episode_and_a_referee_match_with_its_seed_and_actions_are_the_same_game(
    game: str, referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    aec = env(game, **GAMES[game])
    aec.reset(seed=2024)
    chooser = random.Random(0)
    for _ in aec.agent_iter():
        obs, _, terminated, truncated, _ = aec.last()
        aec.step(None if terminated or truncated else int(chooser.choice(np.flatnonzero(obs["action_mask"]))))
    episode = [(seat, str(action)) for seat, action in aec.table.actions]
    players = aec.table.players

    options = options_to_dict(aec.table.options)
    created = await admin.create(game, players, options, seed=2024)
    scripts = [deque(text for seat, text in episode if seat == s) for s in range(players)]
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.gather(*(bot.play(scripted(scripts[s])) for s, bot in enumerate(bots)))
    await admin.wait(created.match.match_id)

    path = referee.referee.matches_dir / f"{created.match.match_id}.jsonl"
    journal = [(r.seat, r.action) for r in read_records(path) if isinstance(r, Played)]
    if game == "pair_battle":  # a lockstep tick's answers reach the referee in any order
        assert sorted(journal) == sorted(episode)
        for seat in range(players):
            assert [a for s, a in journal if s == seat] == [a for s, a in episode if s == seat]
    else:
        assert journal == episode
    replayed, records = replay_journal(path)
    assert replayed.full_view() == aec.table.state.full_view()
    assert replayed.outcome() == aec.table.state.outcome()
    end = records[-1]
    assert isinstance(end, End) and end.seed == aec.table.seed == 2024
