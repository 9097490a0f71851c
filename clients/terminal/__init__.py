"""The terminal spectator's room: `croupier watch` (live matches) and `croupier replay` (finished ones,
step by step, and forks from them)."""
