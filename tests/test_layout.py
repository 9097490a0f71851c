"""The layout a newcomer reads: a file under server/ or clients/ over 600 lines says at its top
why it is kept whole (its docstring has "Over 600 lines"), or is split."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONGEST = 600


def test_a_long_file_says_why_it_is_kept_whole() -> None:
    unexplained = []
    for package in ("wire", "server", "clients"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            text = path.read_text()
            lines = text.count("\n")
            if lines > LONGEST and "Over 600 lines" not in (ast.get_docstring(ast.parse(text)) or ""):
                unexplained.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not unexplained, "split these, or say atop each why not:\n" + "\n".join(unexplained)
