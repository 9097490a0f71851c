"""The research bridge to OpenSpiel (``croupier[openspiel]``): importing this package registers
``croupier_platinum_fish``, ``croupier_spoil_five``, ``croupier_chinese_ten`` and
``croupier_pair_battle`` (lockstep) with ``pyspiel``, over Croupier's engine, so OpenSpiel's
algorithms and kaggle-environments run on Croupier's rules (docs/training.md)."""

from croupier.clients.openspiel.games import register

register()
