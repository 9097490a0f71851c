"""docs/bots.md lists every type a bot sees, generated from the engine's code, and every public
field of them says what it holds."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from croupier.clients.docgen.bot_types import SHARED, attribute_docs, game_types, markdown, section
from croupier.engine.cards import Card
from croupier.engine.games import GAMES, chinese_ten, pair_battle, platinum_fish, spoil_five

DOCS = Path(__file__).resolve().parents[3] / "docs" / "bots.md"


def test_the_types_in_docs_bots_md_are_what_the_code_says() -> None:
    assert section(DOCS.read_text(encoding="utf-8")) == markdown(), (
        "docs/bots.md is out of date: run .venv/bin/python -m croupier.clients.docgen.bot_types --write"
    )


def test_every_public_field_a_bot_sees_says_what_it_holds() -> None:
    modules = [sys.modules[spec.options_type.__module__] for spec in GAMES.values()]
    classes = [*SHARED, *(cls for module in modules for cls in game_types(module))]
    undocumented = [
        f"{cls.__module__}.{cls.__name__}.{field.name}"
        for cls in classes
        if dataclasses.is_dataclass(cls)
        for field in dataclasses.fields(cls)
        if not field.name.startswith("_") and not attribute_docs(cls).get(field.name)
    ]
    assert not undocumented, f"give these a docstring under the field: {undocumented}"


def test_the_list_holds_cards_and_each_games_view_and_actions() -> None:
    text = markdown()
    for name in ("Card", "ChineseTenView", "SpoilFiveView", "PlatinumFishView", "PairBattleView"):
        assert f"#### `{name}`" in text
    assert (
        "| `color` | `Color (property)` | Red for diamonds and hearts, black for clubs and spades. |" in text
    )
    actions = {
        chinese_ten: {"Play", "Pick"},
        pair_battle: {"Play", "Pass"},
        platinum_fish: {"TakeDiscard", "Draw", "Roll", "Ask", "Pass"},
        spoil_five: {"Play", "Rob", "Decline", "Announce", "TakePool", "Jinx"},
    }
    for module, names in actions.items():
        assert names <= {cls.__name__ for cls in game_types(module)}, module.__name__
    assert Card in SHARED
