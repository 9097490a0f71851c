"""PettingZoo environments over Croupier's engine: train in-process, then play the same rules on a referee.

    from croupier.clients.pettingzoo import env, parallel_env
    aec = env("chinese_ten", players=3, target=200)   # any game, any option of docs/games/
    par = parallel_env(players=3)                      # lockstep Pair Battle, every seat at once

Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``;
the layouts and action spaces are in docs/training.md (and ``CODINGS``). Needs the
``croupier[rl]`` extra (pettingzoo, gymnasium, numpy).
"""

from __future__ import annotations

from typing import Any

from croupier.clients.pettingzoo.aec import CroupierEnv
from croupier.clients.pettingzoo.parallel import PairBattleParallelEnv
from croupier.clients.pettingzoo.spaces import CODINGS, Coding

__all__ = ["CODINGS", "Coding", "CroupierEnv", "PairBattleParallelEnv", "env", "parallel_env"]


def env(game: str, **options: Any) -> CroupierEnv:
    """The AEC environment of ``game``: ``render_mode``, ``reward``, ``max_steps``, the game's options."""
    return CroupierEnv(game, **options)


def parallel_env(**options: Any) -> PairBattleParallelEnv:
    """Lockstep Pair Battle as a parallel environment (the same keywords as ``env``)."""
    return PairBattleParallelEnv(**options)
