"""The engine plays every test variant exactly as it did when digests.json was written: the action texts,
the order of the random draws and what each action does are part of the journal format (README.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from croupier.engine.core import GameSpec, options_to_dict
from tests.golden.digests import FILE, POLICIES, SEED, play, variants

GOLDEN: dict[str, Any] = json.loads(FILE.read_text())
VARIANTS = list(variants())
REGENERATE = "python -m tests.golden.digests (see tests/golden/README.md)"


@pytest.mark.parametrize(("name", "spec", "options"), VARIANTS, ids=[name for name, _, _ in VARIANTS])
def test_a_variant_plays_as_its_golden_digests_say(name: str, spec: GameSpec[Any], options: Any) -> None:
    assert name in GOLDEN, f"{name} is a new test variant with no golden digest: add it with {REGENERATE}"
    golden = GOLDEN[name]
    assert golden["options"] == options_to_dict(options), (
        f"{name}'s options are not the ones its golden digests were made with: a changed list of test "
        f"variants, not a changed engine? then {REGENERATE}"
    )
    for policy, choose in POLICIES.items():
        played = play(spec, options, SEED, choose)
        for part in ("stream", "outcome"):
            assert played[part] == golden[policy][part], (
                f"{name} ({options_to_dict(options)}), {policy} policy, seed {SEED}: the engine's "
                f"{'event stream' if part == 'stream' else 'final outcome'} differs from tests/golden/"
                "digests.json: this changes the journal format: migrate or bump the version "
                "(journal.VERSION and MIGRATIONS), then regenerate"
            )


def test_every_golden_digest_is_of_a_variant_still_tested() -> None:
    gone = sorted(set(GOLDEN) - {name for name, _, _ in VARIANTS})
    assert not gone, f"golden digests of variants no longer tested: {gone}; {REGENERATE}"
