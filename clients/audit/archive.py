"""``croupier export TOURNAMENT``: a finished run in one archive, for anyone to audit.

The archive (``DATA/reveals/NAME-RUN.audit.tar.gz`` by default; tar and gzip, which any
system reads) holds, under ``NAME-RUN/``:

  schedule.json     the schedule committed to at the start (commitment.py), byte for byte
  schedule.sha256   its commitment, as published at the start
  reveal.json       the run's secret and every deal it played (as croupier verify reads it alone)
  results.json      every counted match: key, deal, referee match id, journal, each seat's result;
                    and the matches voided when their set was dealt again
  ratings.json      each game's ratings table, with the model and bootstrap it was computed with
  journals/ID.jsonl the referee's journal of every match (voided ones too, where the referee kept them)

Only a finished run is exported: its journals and schedule are public once the run is over
(every rotation of every set is played, so no live match shares a deal). ``croupier verify
ARCHIVE --commitment HASH`` checks all of it with nothing else.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import tarfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.results.ratings_cli import (
    DEFAULT_DATA,
    DEFAULT_SAMPLES,
    add_model_argument,
    fail,
    rating_model,
)

if TYPE_CHECKING:
    from croupier.clients.results.store import MatchRecord, Store, Tournament

FORMAT = 1
VOIDED_BECAUSE = {
    "started": "abandoned: in progress when a run stopped; its set was dealt again",
    "done": "its set was dealt again (a twin was abandoned, or a bot left the set)",
    "scheduled": "its set was dealt again before it started",
}
"""Why a voided match was voided, by what it was when it was (Store.redeal)."""


class ExportError(Exception):
    """What stops an export, in one line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tournament", metavar="TOURNAMENT", help="the tournament's name (its file's `name`)")
    parser.add_argument("--run", type=int, help="which run of it (default: the latest)")
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="the tournament's data directory (default: %(default)s)",
    )
    parser.add_argument("--db", type=Path, help="results database (default: DATA/results.db)")
    parser.add_argument(
        "--journals",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also look for journals (MATCH_ID.jsonl) here: a referee's matches/ folder copied from its "
        "machine, after --server (repeatable)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, help="the archive to write (default: DATA/reveals/NAME-RUN.audit.tar.gz)"
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help="bootstrap samples of the ratings' 95%% intervals (default: %(default)s)",
    )
    add_model_argument(parser)


def run(args: argparse.Namespace) -> int:
    from croupier.clients.results.store import Store, StoreError

    db = args.db or args.data / "results.db"
    if not db.exists():
        return fail(f"no results database at {db}", 2)
    try:
        with Store(db) as store:
            tournament = _find(store, args.tournament, args.run)
            output = args.output or args.data / "reveals" / f"{tournament.name}-{tournament.run}.audit.tar.gz"
            members = archive_members(store, tournament, args)
    except (StoreError, ExportError) as exc:
        return fail(str(exc), 2)
    write_archive(output, f"{tournament.name}-{tournament.run}", members)
    commitment = members["schedule.sha256"].decode().split()[0]
    journals = sum(name.startswith("journals/") for name in members)
    print(
        f"wrote {output}: {journals} journals, results, ratings, the schedule and its commitment {commitment}"
    )
    print(f"anyone can audit it with nothing else: croupier verify {output} --commitment {commitment}")
    return 0


def _find(store: Store, name: str, run: int | None) -> Tournament:
    runs = store.tournaments([name])
    if not runs:
        known = ", ".join(sorted({t.name for t in store.tournaments()})) or "none"
        raise ExportError(f"no tournament {name!r} in {store.path}; tournaments: {known}")
    if run is None:
        return runs[-1]
    for tournament in runs:
        if tournament.run == run:
            return tournament
    raise ExportError(f"tournament {name} has runs {', '.join(str(t.run) for t in runs)}, not {run}")


def archive_members(store: Store, tournament: Tournament, args: argparse.Namespace) -> dict[str, bytes]:
    """Every file of the archive, by its name under the archive's folder."""
    from croupier.clients.audit import commitment, reveal
    from croupier.clients.results.schedule import Deals
    from croupier.clients.results.store import IN_PROCESS

    where = f"{tournament.name} run {tournament.run}"
    if not tournament.finished:
        raise ExportError(
            f"{where} is not over: its schedule and journals stay private until it is "
            "(run the tournament again to finish it)"
        )
    if tournament.secret is None:
        raise ExportError(f"{where} was dealt before secret deals: there is nothing to verify it against")
    private = commitment.private_path(args.data, tournament)
    published = commitment.commitment_path(args.data, tournament)
    if not private.exists() or not published.exists():
        raise ExportError(
            f"{where} committed to no schedule at its start (no {private}): it cannot be audited"
        )
    schedule_bytes = private.read_bytes()
    schedule = json.loads(schedule_bytes)
    finished = store.finished(tournament.id)
    if any(match.record.replica == IN_PROCESS for match in finished):
        deals = reveal.reveal_path(args.data, tournament)
        raise ExportError(
            f"{where} was played in-process, without a referee: it has no journals, which croupier verify "
            f"replays every result from; its deals alone: croupier verify {deals}"
        )
    voided = store.voided(tournament.id)
    members: dict[str, bytes] = {
        "schedule.json": schedule_bytes,
        "schedule.sha256": published.read_bytes(),
        "reveal.json": _json(reveal.document(store, tournament, Deals(schedule["deals"]))),
    }
    counted = []
    for match in sorted(finished, key=lambda m: m.record.key):
        name = _journal(match.record, args.journals, members, closed_only=False)
        entry = _entry(match.record, match.record.redeal, name)
        entry["results"] = [dataclasses.asdict(result) for result in match.results]
        counted.append(entry)
    set_aside = [
        _entry(record, redeal, _journal(record, args.journals, members, closed_only=True))
        | {"reason": VOIDED_BECAUSE[record.status]}
        for record, redeal in voided
    ]
    members["results.json"] = _json(
        {
            "format": FORMAT,
            "tournament": tournament.name,
            "run": tournament.run,
            "matches": counted,
            "voided": set_aside,
        }
    )
    members["ratings.json"] = _json(_ratings(store, tournament, schedule, args))
    return members


def _entry(record: MatchRecord, redeal: int, journal: str | None) -> dict[str, Any]:
    key = record.key
    return {
        "game": key.game,
        "round": key.round,
        "group": key.group,
        "deal": key.deal,
        "rotation": key.rotation,
        "redeal": redeal,
        "match_id": record.referee_match_id or "",
        "journal": journal,
    }


def _journal(
    record: MatchRecord, folders: list[Path], members: dict[str, bytes], closed_only: bool
) -> str | None:
    """Put the match's journal in the archive; its name there. A counted match without one is an
    error; a voided match may have none (the referee never saw it), and one that did not end is
    left out (nothing says its referee is done with it)."""
    from croupier.server.journal import CLOSING, header_and_last

    places = [Path(record.journal)] if record.journal else []
    if record.referee_match_id:
        places += [folder / f"{record.referee_match_id}.jsonl" for folder in folders]
    found = next((path for path in places if path.is_file()), None)
    if found is None:
        if closed_only:
            return None
        looked = ", ".join(map(str, places)) or "nowhere: the database names none"
        raise ExportError(
            f"{record.key} (match {record.referee_match_id}): no journal at {looked}; "
            "give the folder holding it: --journals DIR"
        )
    ends = header_and_last(found)
    if ends is None or not isinstance(ends[1], CLOSING):
        if closed_only:
            return None
        raise ExportError(f"{record.key}: the journal {found} does not end with the match's result")
    name = f"journals/{found.name}"
    members[name] = found.read_bytes()
    return name


def _ratings(
    store: Store, tournament: Tournament, schedule: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """The ratings table of every game, as the tournament's report computes it."""
    from croupier.clients.results.ratings import DEFAULT_PRIOR, Bootstrap, rate

    tables, methods = {}, {}
    for game in schedule["games"]:
        sets = store.duplicate_sets(game, [tournament.id], luck=args.luck_correction)
        bots = {bot for rated in sets for places in rated.matches for bot in places}
        methods[game] = Bootstrap.for_pool(len(bots)).value
        table = rate(
            sets,
            prior=DEFAULT_PRIOR,
            samples=args.samples,
            model=rating_model(args),
            resample=args.bootstrap,
            method=Bootstrap(methods[game]),
        )
        tables[game] = [dataclasses.asdict(rating) for rating in table]
    return {
        "format": FORMAT,
        "model": rating_model(args).value,
        "luck_correction": args.luck_correction,  # each set's points less its luck (ratings.set_choices)
        "resample": args.bootstrap.value,
        "samples": args.samples,
        "prior": DEFAULT_PRIOR,
        "seed": "results",  # the bootstrap seeded from the results (ratings.results_seed)
        "methods": methods,  # per game, refits or one Newton step a sample (ratings.Bootstrap)
        "games": tables,
    }


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1) + "\n").encode()


def write_archive(path: Path, folder: str, members: dict[str, bytes]) -> None:
    """A .tar.gz of ``members`` under ``folder/``, written whole or not at all."""
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size, info.mtime, info.mode = len(data), now, 0o644
            archive.addfile(info, io.BytesIO(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(buffer.getvalue())
    os.replace(temporary, path)
