"""The compiled hot path (mypyc) and its pure Python: the one asked for runs, a stale build never
does, and both play every game alike, byte for byte."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from croupier.engine.games import GAMES
from croupier.engine.rng import Rng
from croupier.wire import convert, native
from tests.toolchains import missing

REPO = Path(__file__).resolve().parents[1]
SEEDS = 25
"""Random playouts per test variant of every game, on each path."""
PURE_ASKED = os.environ.get(native.PURE, "") not in ("", "0")


def compiled_here() -> None:
    """Skip (fail under CI, where .ci/toolchains installs a C compiler) unless the hot path runs
    compiled in this process."""
    if PURE_ASKED:
        pytest.skip(f"{native.PURE} is set: this process runs pure Python")
    if not native.compiled_modules():
        missing(f"the hot path is not compiled ({native.build()})")


def python(*args: str, **env: str) -> str:
    """What this Python prints when run on ``args`` in the repository, with ``env`` added."""
    command = [sys.executable, *args]
    done = subprocess.run(
        command, env={**os.environ, **env}, cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout


def pure(*args: str) -> str:
    """What this Python prints on ``args`` with the pure path asked for."""
    return python(*args, **{native.PURE: "1"})


def test_the_path_asked_for_is_the_one_imported() -> None:
    if PURE_ASKED:
        assert native.compiled_modules() == []
        assert native.build() == f"pure Python ({native.PURE}={os.environ[native.PURE]})"
        return
    compiled_here()
    assert native.compiled_modules() == list(native.COMPILED)
    assert native.build() == "compiled (mypyc)"


def test_croupier_version_says_which_path_runs() -> None:
    printed = pure("-m", "croupier.clients.cli", "--version")
    assert printed.startswith("croupier ")
    assert printed.rstrip().endswith(f"; hot path: pure Python ({native.PURE}=1)")
    assert (
        python("-m", "croupier.clients.cli", "--version").rstrip().endswith(f"; hot path: {native.build()}")
    )


def copy_of_the_sources(root: Path) -> Path:
    for module in native.COMPILED:
        target = native.source(module, root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(native.source(module), target)
    return root


def test_a_build_whose_sources_changed_runs_pure_python_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(native.PURE, raising=False)
    root = copy_of_the_sources(tmp_path)
    assert native.compiled_build(root) == (None, "pure Python (not compiled: make compiled)")
    (root / native.MANIFEST).write_text(json.dumps(native.manifest(root)))
    annotations, why = native.compiled_build(root)
    assert why == "compiled (mypyc)"
    assert annotations is not None
    assert annotations["croupier.engine.cards"]["Card"] == {"rank": "Rank", "suit": "Suit"}

    edited = native.source("croupier.engine.games.spoil_five", root)
    edited.write_text(edited.read_text() + "\n# an edit\n")
    with pytest.warns(
        UserWarning, match=r"stale \(engine/games/spoil_five.py changed since\).*make compiled"
    ):
        assert native.compiled_build(root) == (
            None,
            "pure Python (the compiled build is stale: engine/games/spoil_five.py changed)",
        )
    monkeypatch.setenv(native.PURE, "1")
    assert native.compiled_build(root) == (None, f"pure Python ({native.PURE}=1)")


def check_annotations() -> int:
    """Every class of ``COMPILED`` has its annotations as written (and they evaluate); how many."""
    checked = 0
    for module_name in native.COMPILED:
        module = importlib.import_module(module_name)
        for qualname, fields in native.annotations_as_written(native.source(module_name)).items():
            cls = module
            for part in qualname.split("."):
                cls = getattr(cls, part)
            written = {
                name: hint.__forward_arg__ if isinstance(hint, typing.ForwardRef) else hint  # NamedTuple's
                for name, hint in vars(cls)["__annotations__"].items()
            }
            assert written == fields, qualname
            typing.get_type_hints(cls)
            checked += 1
    return checked


@pytest.mark.parametrize("first", ["croupier.wire.convert", "croupier.engine.games", "croupier.clients.sdk"])
def test_every_compiled_class_has_its_annotations_as_written(first: str) -> None:
    """What the codecs and the options are built from (``typing.get_type_hints``) reads alike on
    both paths, whichever module is imported first: mypyc's erased types (``tuple``) are replaced
    by the source's."""
    assert check_annotations() > 50
    checked = python("-c", f"import {first}, tests.test_native as t; print(t.check_annotations())")
    assert int(checked) > 50


def playout_digests() -> dict[str, str]:
    """Per game, variant and seed: a digest of a random playout's events, each view its mover
    was sent (as the referee encodes it) and the outcome. Run on each path and compared."""
    digests = {}
    for name, spec in sorted(GAMES.items()):
        codec = convert.codec(name)
        for number, options in enumerate(spec.test_variants):
            for seed in range(SEEDS):
                state = spec.new_game(options, Rng(seed))
                chooser = random.Random(seed)
                record = hashlib.sha256(repr(state.opening).encode())
                now = 0.0
                while not state.is_over():
                    now += 0.02
                    wake = state.wake_at()
                    if wake is not None and (wake <= now or not state.to_act()):
                        now = max(now, wake)
                        record.update(repr(state.advance(now)).encode())
                        continue
                    seat = chooser.choice(sorted(state.to_act()))
                    record.update(codec.view_bytes(state.view(seat)))
                    events = state.apply(seat, chooser.choice(state.legal_actions(seat)), now)
                    record.update(repr(events).encode())
                    record.update(b"".join(codec.event(e).SerializeToString() for e in events))
                record.update(repr(state.outcome()).encode())
                digests[f"{name} {number} {seed}"] = record.hexdigest()
    return digests


def test_both_paths_play_every_variant_of_every_game_alike() -> None:
    compiled_here()
    compiled = playout_digests()
    printed = pure("-c", "import json, tests.test_native as t; print(json.dumps(t.playout_digests()))")
    pure_digests = json.loads(printed)
    assert len(compiled) == SEEDS * sum(len(spec.test_variants) for spec in GAMES.values())
    differing = [key for key in compiled if compiled[key] != pure_digests[key]]
    assert not differing, f"compiled and pure Python differ on {len(differing)} playouts: {differing[:5]}"
