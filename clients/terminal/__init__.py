"""The spectator: `croupier watch` (live matches) and `croupier replay` (finished ones, step by step)."""
