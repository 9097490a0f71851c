"""``croupier replay MATCH --html FILE``: a finished match as one self-contained HTML file.

The file is the web viewer's replay page with its style sheet, its scripts and the match's
steps written inside it: it opens from disk, offline, in any browser, and steps as the page
served by ``croupier web`` does (``?step=N`` included).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from croupier.clients.web import STATIC
from croupier.clients.web.frames import dumps

SCRIPTS = ("cards.js", "table.js", "match.js")


def replay_page(document: dict[str, Any]) -> str:
    """The page for ``document`` (``frames.replay_json``), with everything it needs inside."""
    page = (STATIC / "match.html").read_text(encoding="utf-8")
    # In a script element only "</" can end it early: written as \u003c, JSON reads the same
    data = dumps(document).replace("<", "\\u003c")
    swaps = {
        '<link rel="stylesheet" href="/static/style.css">': (
            f"<style>\n{(STATIC / 'style.css').read_text(encoding='utf-8')}</style>"
        ),
        '<a href="/">Croupier</a>': "<b>Croupier</b>",
        '<main id="match">': (
            f'<script id="replay-data" type="application/json">{data}</script>\n<main id="match">'
        ),
        '<script src="/static/fork.js"></script>\n': "",  # no viewer to fork on, offline
        **{
            f'<script src="/static/{name}"></script>': (
                f"<script>\n{(STATIC / name).read_text(encoding='utf-8')}</script>"
            )
            for name in SCRIPTS
        },
    }
    for old, new in swaps.items():
        if old not in page:
            raise RuntimeError(f"match.html no longer has {old!r}: the export must follow it")
        page = page.replace(old, new)
    return page


def write_page(path: Path, page: str) -> None:
    """Write the file whole or not at all (a full disk leaves no half page behind)."""
    path = path.resolve()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(page)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
