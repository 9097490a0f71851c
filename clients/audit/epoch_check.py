"""``croupier verify REVEAL``, for a ladder epoch that committed to its luck (ladder/epoch.py).

Beyond the deals (reveal.verify): the reveal's commitment document is the one committed to when the
epoch opened (``--commitment``: its SHA-256), so neither the secret nor a game's luck value function V
changed after the first deal; the secret is the one it commits to; and every seat's luck stored
with a counted match is recomputed by replaying the match's journal with the committed V, exactly
as the ladder measured it (luck_journal.records_luck). The journals are the referee's
(``MATCH_ID.jsonl``): looked for in the ``matches`` folder beside the reveals' (the embedded
referee's), and in each ``--journals DIR``. A luck whose journal is not found is not claimed checked:
it is counted and said.

Each problem is one line naming the match and what differs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from croupier.clients.audit import commitment

LUCK_TOLERANCE = 1e-6
"""How far a recomputed seat's luck may be from the stored one (stored rounded to 9 digits)."""


def check(
    reveal: Mapping[str, Any], committed: str | None, folders: Sequence[Path]
) -> tuple[list[str], list[str]]:
    """The problems found, and what was not checked (one line each)."""
    document = reveal["commitment"]
    problems = list(_commitment(reveal, document, committed))
    unchecked: list[str] = []
    missing = 0
    for entry in reveal["matches"]:
        if "results" not in entry or all(r.get("luck") is None for r in entry["results"]):
            continue
        places = [folder / f"{entry['match_id']}.jsonl" for folder in folders]
        path = next((place for place in places if place.is_file()), None)
        if path is None:
            missing += 1
            continue
        problems += _luck(document, entry, path)
    if missing:
        looked = ", ".join(map(str, folders)) or "nowhere"
        unchecked.append(
            f"the luck of {missing} match(es) not recomputed: their journals are not in {looked} "
            "(--journals DIR)"
        )
    return problems, unchecked


def _commitment(
    reveal: Mapping[str, Any], document: Mapping[str, Any], committed: str | None
) -> Iterator[str]:
    actual = commitment.digest(commitment.encode(dict(document)))
    secret = hashlib.sha256(bytes.fromhex(reveal["secret"])).hexdigest()
    if committed is not None and actual != committed:
        said = " (that is the secret's SHA-256 alone)" if committed == secret else ""
        yield (
            f"the epoch's commitment document hashes to {actual}, not {committed}{said}, the commitment "
            "published when it opened: its secret or its luck value functions are not the ones committed to"
        )
    if document.get("secret_sha256") != secret:
        told = document.get("secret_sha256")
        yield f"the secret's SHA-256 is {secret}, but the commitment document commits to {told}"
    if (document.get("ladder"), document.get("epoch")) != (reveal["tournament"], reveal["run"]):
        yield (
            f"the commitment document is of {document.get('ladder')} epoch {document.get('epoch')}, "
            f"the reveal of {reveal['tournament']} run {reveal['run']}"
        )


def _luck(document: Mapping[str, Any], entry: Mapping[str, Any], path: Path) -> Iterator[str]:
    """One match's stored luck against its journal replayed with the committed V."""
    from croupier.clients.results.luck_journal import evaluator_of, records_luck
    from croupier.server.journal import End, Header, read_records

    key = f"{entry['game']} deal {entry['deal']} rotation {entry['rotation']}"
    where = f"{key} (match {entry['match_id']})"
    identity = document.get("luck", {}).get(entry["game"])
    if identity is None:
        yield f"{where}: luck stored, but the epoch committed to no luck value function for {entry['game']}"
        return
    try:
        evaluator = evaluator_of(identity)
        records = read_records(path)
    except (OSError, ValueError) as exc:
        yield f"{where}: {exc}"
        return
    header, end = records[0], records[-1]
    if not isinstance(header, Header) or header.match_id != entry["match_id"] or not isinstance(end, End):
        yield f"{where}: {path} is not this match's finished journal"
        return
    if end.seed != entry["seed"]:
        yield f"{where}: its journal reveals seed {end.seed}, the reveal deals {entry['seed']}"
        return
    try:
        recomputed = records_luck(records, entry["seed"], evaluator, fresh=bool(document.get("luck_deal")))
    except (ValueError, KeyError, RuntimeError) as exc:
        yield f"{where}: its journal does not replay: {exc}"
        return
    for result in entry["results"]:
        told, ours = result.get("luck"), recomputed[result["seat"]]
        if told is None:
            continue
        if ours is None or not math.isclose(told, ours, abs_tol=LUCK_TOLERANCE):
            yield (
                f"{where}: seat {result['seat']} ({result['bot']}@{result['version']}) has luck {told!r} in "
                f"the reveal, {ours!r} recomputed from its journal"
            )
