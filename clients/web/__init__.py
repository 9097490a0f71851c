"""The web viewer's room, ``croupier web``: live tables, replays and tournament standings in a browser."""

from importlib import resources
from pathlib import Path

STATIC = Path(str(resources.files("croupier.clients.web") / "static"))
"""The viewer's pages, style sheet and scripts: served by app.py, written inside a page by html_file.py
(kept here, below both, so html_file.py needs nothing of the server app)."""
