"""The bot author's loop: ``croupier match`` (a few games, or an SPRT of a new version against
an old one) on an embedded referee, and in-process play for speed."""
