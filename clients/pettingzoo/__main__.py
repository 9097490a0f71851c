"""`python -m croupier.clients.pettingzoo`: every game's observation layout and action space (Markdown)."""

from croupier.clients.pettingzoo.spaces import markdown

print(markdown())
