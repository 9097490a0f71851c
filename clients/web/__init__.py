"""``croupier web``: live tables, replays and tournament standings in a browser."""
