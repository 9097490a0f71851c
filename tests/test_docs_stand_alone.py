"""The documentation stands alone: a reader of the repository finds everything a page points to
in it, and what the README says of the ladder it starts is what its file plays."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from croupier.engine.games import get_game

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"shared/|rules-notes|DESIGN\.md")
"""The project's own working papers, which are not in the repository."""


def test_no_page_points_outside_the_repository() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    found = [
        f"{page.relative_to(REPO)}:{number}: {line.strip()}"
        for page in pages
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_readme_names_the_games_its_ladder_plays() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ladder = readme[readme.index("Then connect it to a ladder") :].split("```", 1)[0]
    games = tomllib.loads((REPO / "tournaments" / "ladder.toml").read_text(encoding="utf-8"))["games"]
    for game in games:
        assert get_game(game["game"]).title in ladder, ladder
