"""The modules a bot author imports declare their public surface in ``__all__``: every name in it
exists, and every public class and function they define is in it; what they import is not, unless
the bot-facing module that defines it declares it too (the SDK passes on sdk.protocol's Match).
make test-pure runs it too: compiled by mypyc, the engine's functions are not Python functions."""

from __future__ import annotations

import importlib
import inspect

import pytest

BOT_FACING = [
    "croupier.clients.sdk",
    "croupier.clients.sdk.bot",
    "croupier.clients.sdk.protocol",
    "croupier.clients.bots",
    "croupier.engine.cards",
    "croupier.engine.core",
    "croupier.engine.rng",
    "croupier.engine.games",
    "croupier.engine.games.chinese_ten",
    "croupier.engine.games.pair_battle",
    "croupier.engine.games.platinum_fish",
    "croupier.engine.games.spoil_five",
]


@pytest.mark.parametrize("name", BOT_FACING)
def test_the_module_declares_every_public_definition_and_nothing_it_imports(name: str) -> None:
    module = importlib.import_module(name)
    declared = module.__all__
    assert len(set(declared)) == len(declared), "a name is listed twice"
    assert [n for n in declared if not hasattr(module, n)] == []
    defined = {
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == name
    }
    assert sorted(defined - set(declared)) == [], "public but not in __all__"
    imported = [
        n
        for n in declared
        if (inspect.isclass(obj := getattr(module, n)) or inspect.isfunction(obj))
        and obj.__module__ not in (name, "builtins")  # builtins: an alias, Seat = int
        and not (obj.__module__ in BOT_FACING and n in importlib.import_module(obj.__module__).__all__)
    ]
    assert imported == [], "listed here but defined elsewhere (and not declared where it is defined)"
    star: dict[str, object] = {}
    exec(f"from {name} import *", star)
    assert set(star) - {"__builtins__"} == set(declared)


def test_the_sdk_surface_is_what_docs_bots_md_uses() -> None:
    from croupier.clients import sdk

    assert {"Bot", "BotFactory", "Choice", "Client", "Match", "Result", "main", "play_offline"} <= set(
        sdk.__all__
    )
    assert "grpc" not in sdk.__all__ and "convert" not in sdk.__all__
