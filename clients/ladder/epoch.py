"""A ladder epoch's commitment, published when it opens: what decides its deals and reads its luck.

A ladder has no schedule to commit to (its sets are chosen as it goes), but what decides its deals
and how its luck is measured is fixed before the first deal: the SHA-256 of the epoch's secret, its
games with their options and clocks, how its sets are dealt, and the identity of each measured
game's luck value function V (``luck``: results/luck_journal.identities, as a tournament's schedule
commits to it), with ``luck_deal``: the deal is chance too. On a ladder it always is: a pool's table
and a fresh match each play their deal in one seating, with no twin to cancel it.

The document holds nothing secret, so it is published at once (``DATA/reveals/NAME-EPOCH.commitment
.json``); its SHA-256 is the epoch's commitment (``DATA/reveals/NAME-EPOCH.commitment.sha256``,
``sha256sum`` form). The reveal carries the document, and ``croupier verify REVEAL --commitment
HASH`` checks that it is the one committed to (neither the secret nor V changed after the first
deal) and recomputes every seat's luck from the journals (audit/epoch_check.py). An epoch opened
before this (``NAME-EPOCH.secret.sha256``: its secret's SHA-256 alone) measures no luck.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.audit import commitment
from croupier.clients.results.luck_journal import evaluator_of, identities

if TYPE_CHECKING:
    from croupier.clients.ladder.settings import LadderConfig
    from croupier.clients.results.luck import Evaluator
    from croupier.clients.results.store import Tournament

FORMAT = 1


def _stem(epoch: Tournament) -> str:
    return f"{epoch.name}-{epoch.run}"


def document_path(data: Path, epoch: Tournament) -> Path:
    return data / "reveals" / f"{_stem(epoch)}.commitment.json"


def commitment_path(data: Path, epoch: Tournament) -> Path:
    """Where the epoch's commitment is published when it opens (``sha256sum`` form)."""
    return data / "reveals" / f"{_stem(epoch)}.commitment.sha256"


def secret_path(data: Path, epoch: Tournament) -> Path:
    """An older epoch's commitment: its secret's SHA-256 alone (no luck committed)."""
    return data / "reveals" / f"{_stem(epoch)}.secret.sha256"


def document(config: LadderConfig, epoch: Tournament) -> dict[str, Any]:
    from croupier.engine.core import options_to_dict
    from croupier.engine.games import get_game

    assert epoch.secret is not None
    return {
        "format": FORMAT,
        "ladder": epoch.name,
        "epoch": epoch.run,
        "secret_sha256": hashlib.sha256(epoch.secret).hexdigest(),
        "deals": config.deals,
        "dealing": config.dealing.value,
        "rotations": config.rotations.value,
        "games": {
            game.game: {
                "seats": game.seats,
                "options": options_to_dict(get_game(game.game).options(game.options)),
                "clock": game.clock.as_dict(),
            }
            for game in config.games
        },
        "luck": identities(game.game for game in config.games),
        "luck_deal": True,
    }


def commit(data: Path, config: LadderConfig, epoch: Tournament) -> tuple[str, Path, bool] | None:
    """Commit to the epoch before its first deal (the first time; a resumed epoch keeps what it
    committed to): its commitment, the file it is in, and whether it was written now. None for an
    epoch opened before commitments carried V (it keeps its secret's SHA-256 and measures no luck)."""
    path, public = document_path(data, epoch), commitment_path(data, epoch)
    if secret_path(data, epoch).exists() and not path.exists():
        return None
    written = not path.exists()
    if written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(commitment.encode(document(config, epoch)))
    value = commitment.digest(path.read_bytes())
    if not public.exists():
        public.write_text(f"{value}  {path.name}\n", encoding="ascii")
    return value, public, written


def committed(data: Path, epoch: Tournament) -> dict[str, Any] | None:
    """The epoch's commitment document (None: an epoch that committed to none)."""
    path = document_path(data, epoch)
    if not path.exists():
        return None
    found: dict[str, Any] = json.loads(path.read_bytes())
    return found


def committed_luck(document: Mapping[str, Any] | None, note: Callable[[str], None]) -> dict[str, Evaluator]:
    """Each game's V as the epoch committed to it; one this croupier does not have (an epoch
    resumed by another version) is ``note``d and its results stay plain."""
    found = {}
    for game, identity in (document or {}).get("luck", {}).items():
        try:
            found[game] = evaluator_of(identity)
        except ValueError as exc:
            note(f"luck not measured: {exc}")
    return found
