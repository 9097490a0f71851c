"""``croupier check-bot``, for the author of a bot in any language: the protocol's corner cases,
taken one check at a time, with a pass/fail table."""
