"""Tournaments: the duplicate round-robin schedule, the runner, the results store and Elo ratings."""
