"""The organiser's standing arena, ``croupier ladder``: every registered bot that connects plays
rated sets, matched by what a set would tell."""
