"""A bot for one game, typed ``Bot[View, Action]`` as docs/bots.md shows it: mypy --strict accepts it
and knows its views and actions (a slip in either is an error), and it plays; untyped bots still do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Bot, play_offline
from croupier.engine.games import get_game
from tests.clients.sdk.test_docs_bot import REPO, python_block


def documented_typed_bot() -> str:
    return python_block("### A typed bot for one game")


def test_mypy_strict_accepts_the_typed_bot_and_catches_slips_in_its_views_and_actions(tmp_path: Path) -> None:
    source = documented_typed_bot()
    slips = {
        "wrong_action.py": source.replace(
            "1 if isinstance(action, Pick) else len(action.taken)", "len(action.taken)"
        ),  # a Pick has no `taken`
        "wrong_view.py": source.replace("return max(legal", "print(view.trump)\n        return max(legal"),
        "wrong_answer.py": source.replace("return max(legal, key=cards_taken)", "return view"),
    }
    assert all(slip != source for slip in slips.values())
    (tmp_path / "typed_bot.py").write_text(source, encoding="utf-8")
    for name, slip in slips.items():
        (tmp_path / name).write_text(slip, encoding="utf-8")
    files = sorted(path.name for path in tmp_path.glob("*.py"))
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PATH": "", "MYPYPATH": str(REPO / "gen"), "HOME": str(tmp_path)},
    )  # fmt: skip
    errors = checked.stdout.splitlines()
    assert not [e for e in errors if e.startswith("typed_bot.py")], checked.stdout + checked.stderr
    assert 'Item "Pick" of "Play | Pick" has no attribute "taken"' in checked.stdout, checked.stdout
    assert '"ChineseTenView" has no attribute "trump"' in checked.stdout, checked.stdout
    assert any(e.startswith("wrong_answer.py") and "return-value" in e for e in errors), checked.stdout
    assert {e.split(":")[0] for e in errors} == set(slips), checked.stdout


def test_the_typed_bot_plays_and_so_do_untyped_ones() -> None:
    namespace: dict[str, Any] = {"__name__": "typed_bot"}
    exec(documented_typed_bot(), namespace)
    greedy: type[Bot[Any, Any]] = namespace["GreedyBot"]

    class Untyped(Bot):  # no type parameters: Bot[Any, Any]
        def choose(self, view, legal):  # type: ignore[no-untyped-def]
            return 0

    spec = get_game("chinese_ten")
    outcome = play_offline(spec, spec.options({"players": 3}), [greedy, RandomBot, Untyped], seed=1)
    assert sorted(outcome.places) and len(outcome.scores) == 3
