"""``croupier verify FILE``: verifiable dealing, checked.

Every deal of a tournament is HMAC-SHA256(secret, its key) (schedule.deal_seed)
and every match published SHA-256 of its seed when it was created
(``seed_sha256`` in ListMatches, open to anyone). When the tournament is over
the runner publishes the secret in a reveal file (``DATA/reveals/NAME-RUN.json``:
the secret, and per match its key, seed, commitment and referee match id).
Anyone can then recompute every seed from the secret alone and check it
against the commitment the match showed at its start: against the file's own
copy, or, with ``--server``, against what the referee itself publishes, asked
as anyone (no token).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.clients.results.schedule import Deals, MatchKey, set_seed
from croupier.clients.results.store import MatchRecord, Store, Tournament
from croupier.server.journal import seed_sha256

FORMAT = 1


@dataclass(frozen=True, slots=True)
class Published:
    """What a referee shows anyone about a match: its commitment, and its seed once finished."""

    seed_sha256: str
    seed: int | None


def document(
    store: Store, tournament: Tournament, dealing: Deals, committed: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The reveal of a finished run: its secret and every deal it played, voided ones included.
    With a ladder epoch's commitment document (ladder/epoch.py): that document, and each counted
    match's results with each seat's luck, which ``croupier verify`` recomputes (epoch_check.py)."""
    if tournament.secret is None:
        raise ValueError(f"tournament {tournament.name} run {tournament.run} was dealt before secret deals")
    played = [(record, record.redeal) for record in store.matches(tournament.id).values()]
    played += store.voided(tournament.id)
    matches = [_match(record, redeal) for record, redeal in sorted(played, key=_order)]
    found: dict[str, Any] = {
        "format": FORMAT,
        "tournament": tournament.name,
        "run": tournament.run,
        "secret": tournament.secret.hex(),
        "deals": dealing.value,
        "matches": matches,
    }
    if committed is not None:
        found["commitment"] = dict(committed)
        results = {m.record.referee_match_id: m.results for m in store.finished(tournament.id)}
        for entry in matches:
            counted = results.get(entry["match_id"]) if entry["match_id"] else None
            if counted is not None:
                entry["results"] = [
                    {"seat": r.seat, "bot": r.bot, "version": r.version, "place": r.place, "luck": r.luck}
                    for r in counted
                ]
    return found


def _order(item: tuple[MatchRecord, int]) -> tuple[MatchKey, int]:
    return item[0].key, item[1]


def _match(record: MatchRecord, redeal: int) -> dict[str, Any]:
    key = record.key
    return {
        "game": key.game,
        "round": key.round,
        "group": key.group,
        "deal": key.deal,
        "rotation": key.rotation,
        "redeal": redeal,
        "seed": record.seed,
        "seed_sha256": seed_sha256(record.seed),
        "match_id": record.referee_match_id or "",
        "seats": list(record.seats),
    }


def publish(
    store: Store,
    data: Path,
    tournament: Tournament,
    dealing: Deals,
    committed: Mapping[str, Any] | None = None,
) -> Path:
    """Publish a finished run's secret and every deal it played (the runner, the ladder and
    ``--sprt`` do so once a run is over): its reveal file, then the store's mark that the secret
    is out. The path of the file. ``committed``: a ladder epoch's commitment document."""
    path = reveal_path(data, tournament)
    write(path, document(store, tournament, dealing, committed))
    store.reveal(tournament.id)
    return path


def write(path: Path, reveal: Mapping[str, Any]) -> None:
    """Write a reveal file whole or not at all: a reader never finds half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_text(json.dumps(reveal, indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def verify(reveal: Mapping[str, Any], published: Mapping[str, Published] | None = None) -> list[str]:
    """Every problem found: a seed that is not the secret's, a commitment that does not match,
    or (with what a referee ``published``) a match it shows otherwise or not at all."""
    problems = []
    secret = bytes.fromhex(reveal["secret"])
    dealing = Deals(reveal["deals"])
    for entry in reveal["matches"]:
        key = MatchKey(entry["game"], entry["round"], entry["group"], entry["deal"], entry["rotation"])
        where = f"{key} (dealt {entry['redeal'] + 1}. time)" if entry["redeal"] else str(key)
        seed = set_seed(secret, key, dealing, entry["redeal"])
        commitment = seed_sha256(seed)
        if entry["seed"] != seed:
            problems.append(f"{where}: seed {entry['seed']} is not the secret's {seed}")
        if entry["seed_sha256"] != commitment:
            problems.append(f"{where}: commitment {entry['seed_sha256']} is not SHA-256 of seed {seed}")
        if published is None or not entry["match_id"]:
            continue
        shown = published.get(entry["match_id"])
        if shown is None:
            problems.append(f"{where}: the referee does not list match {entry['match_id']}")
        elif shown.seed_sha256 != commitment:
            problems.append(
                f"{where}: match {entry['match_id']} published {shown.seed_sha256}, not {commitment}"
            )
        elif shown.seed is not None and shown.seed != seed:
            problems.append(f"{where}: match {entry['match_id']} revealed seed {shown.seed}, not {seed}")
    return problems


async def fetch_published(target: str) -> dict[str, Published]:
    """Every match a referee lists, asked as anyone would: no token."""
    import grpc

    from croupier.v1 import spectator_pb2, spectator_pb2_grpc

    async with grpc.aio.insecure_channel(target) as channel:
        reply = await spectator_pb2_grpc.SpectatorServiceStub(channel).ListMatches(
            spectator_pb2.ListMatchesRequest()
        )
    return {
        info.match_id: Published(info.seed_sha256, info.seed if info.HasField("seed") else None)
        for info in reply.matches
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a reveal file (DATA/reveals/NAME-RUN.json)")
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        action="append",
        help="also check against what this referee publishes (repeatable, one per replica)",
    )


def run(args: argparse.Namespace, secret_sha256: str | None = None) -> int:
    """Check a reveal file (and, given ``secret_sha256``, that its secret is the one committed to;
    for a ladder epoch's reveal, which carries its commitment document, that document's SHA-256)."""
    import asyncio

    from croupier.clients.results.ratings_cli import fail

    try:
        reveal = json.loads(args.file.read_text(encoding="utf-8"))
        if reveal.get("format") != FORMAT:
            return fail(f"{args.file}: not a reveal file of format {FORMAT}", 2)
    except (OSError, ValueError, AttributeError) as exc:
        return fail(f"{args.file}: cannot read a reveal file: {exc}", 2)
    published: dict[str, Published] | None = None
    if args.server:
        published = {}
        for target in args.server:
            try:
                published.update(asyncio.run(fetch_published(target)))
            except Exception as exc:  # grpc's errors name the target and the cause
                return fail(f"--server {target}: cannot list its matches: {exc}", 1)
    unchecked: list[str] = []
    try:
        problems = verify(reveal, published)
        if "commitment" in reveal:  # a ladder epoch's: its secret and luck value functions, and the luck
            from croupier.clients.audit import epoch_check

            folders = [args.file.parent.parent / "matches", *(getattr(args, "journals", None) or [])]
            found, unchecked = epoch_check.check(reveal, secret_sha256, folders)
            problems[:0] = found
        elif secret_sha256 and hashlib.sha256(bytes.fromhex(reveal["secret"])).hexdigest() != secret_sha256:
            problems.insert(0, f"the secret is not the one committed to: its SHA-256 is not {secret_sha256}")
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return fail(f"{args.file}: a damaged reveal file: {exc!r}", 2)
    count = len(reveal["matches"])
    for line in [*problems, *unchecked]:
        print(line)
    against = ", as the referee published them" if published is not None else ", as committed"
    if secret_sha256:
        against += ", from the secret committed to"
        if "commitment" in reveal:
            against += " with the luck value functions"
    lucky = sum(any(r.get("luck") is not None for r in e.get("results", ())) for e in reveal["matches"])
    if lucky and not unchecked:
        against += f"; the luck of {lucky} match(es) recomputed from their journals"
    if problems:
        print(f"{len(problems)} problem(s) in {count} deals of {reveal['tournament']} run {reveal['run']}")
        return 1
    print(f"all {count} deals of {reveal['tournament']} run {reveal['run']} are the secret's{against}")
    if "commitment" in reveal and not secret_sha256:
        from croupier.clients.audit import commitment

        own = commitment.digest(commitment.encode(reveal["commitment"]))
        print(
            f"against the reveal's own commitment document {own}: compare it with the one published when "
            "the epoch opened (or give it: --commitment HASH)"
        )
    return 0


def reveal_path(data: Path, tournament: Tournament) -> Path:
    return data / "reveals" / f"{tournament.name}-{tournament.run}.json"
