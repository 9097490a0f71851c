"""The views' written-out ``__init__`` (a view is built at every decision, and mypyc compiles only
a constructor written in the source) is exactly the one the dataclass would have generated: the
same parameters in the field order with the same defaults, each stored in its own field."""

from __future__ import annotations

import ast
import dataclasses
import random
from typing import Any

import pytest

from croupier.engine.games import GAMES
from croupier.engine.rng import Rng
from croupier.wire import native


def written_out_inits() -> list[tuple[str, ast.ClassDef]]:
    """Every engine dataclass whose ``__init__`` is in its source, by module."""
    found = []
    for module in native.COMPILED:
        tree = ast.parse(native.source(module).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body
            ):
                found.append((module, node))
    return found


INITS = written_out_inits()


def test_every_game_s_view_has_its_init_written_out() -> None:
    """What the speed of in-process play rests on (docs/benchmarks.md): a view built by the
    dataclass's generated ``__init__`` costs 0.15 µs a field, compiled or not."""
    views = {type(spec.new_game(spec.options(), Rng(0)).view(0)).__name__ for spec in GAMES.values()}
    assert views <= {node.name for _, node in INITS}


@pytest.mark.parametrize(("module", "node"), INITS, ids=[node.name for _, node in INITS])
def test_a_written_out_init_takes_and_stores_every_field_in_order(module: str, node: ast.ClassDef) -> None:
    fields = [item for item in node.body if isinstance(item, ast.AnnAssign)]
    (init,) = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]
    assert "init=False" in ast.unparse(node.decorator_list[0]), f"{node.name}: say init=False"
    names = [ast.unparse(field.target) for field in fields]
    params = init.args.args[1:]
    assert [p.arg for p in params] == names
    assert [ast.unparse(p.annotation or ast.Constant(None)) for p in params] == [
        ast.unparse(f.annotation) for f in fields
    ]
    assert [ast.unparse(d) for d in init.args.defaults] == [ast.unparse(f.value) for f in fields if f.value]
    docstring = [s for s in init.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)]
    stored = [ast.unparse(statement) for statement in init.body if statement not in docstring]
    assert stored == [f"object.__setattr__(self, {name!r}, {name})" for name in names]


def views_of(name: str) -> list[Any]:
    """Views of one random playout, the seat to act's, every one of them different."""
    spec = GAMES[name]
    state, chooser, now, views = spec.new_game(spec.options(), Rng(7)), random.Random(7), 0.0, []
    while not state.is_over() and len(views) < 200:
        seats = sorted(state.to_act())
        if not seats:
            now, _ = state.wait_for_clock(now)
            continue
        views.append(state.view(seats[0]))
        state.apply(seats[0], chooser.choice(state.legal_actions(seats[0])), now)
        now += 0.01
    views.append(state.full_view())
    return views


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_view_rebuilt_with_one_field_changed_changes_that_field_alone(name: str) -> None:
    """On the live build (compiled or pure), by keyword and by position as the codecs and
    ``dataclasses.replace`` call it."""
    views = views_of(name)
    fields = [f.name for f in dataclasses.fields(views[0])]
    changed = 0
    base, kind = views[0], type(views[0])
    for field in fields:
        other = next((v for v in views if getattr(v, field) != getattr(base, field)), None)
        if other is None:
            continue
        values = {f: getattr(base, f) for f in fields} | {field: getattr(other, field)}
        for rebuilt in (
            kind(**values),
            kind(*values.values()),
            dataclasses.replace(base, **{field: values[field]}),
        ):
            assert {f: getattr(rebuilt, f) for f in fields} == values
        changed += 1
    assert changed >= len(fields) // 2, "too few fields changed in the playout: the check would prove little"
    with pytest.raises(dataclasses.FrozenInstanceError):
        views[0].seat = 1
