"""``croupier verify ARCHIVE``: a whole tournament run checked from its archive alone.

The archive is what ``croupier export`` writes. Nothing else is asked for, no referee
answers: every check is recomputed here, from the engine.

1. The schedule is the one committed to at the start: its SHA-256 against the commitment
   given (``--commitment``, as published when the run began) and the archive's own.
2. The reveal's secret is the one the schedule committed to, and it deals every seed the
   schedule committed to; every deal of the reveal is the secret's (reveal.verify).
3. Every scheduled match has exactly one counted result, and every result is of a scheduled
   match, on the deal the reveal played last for it.
4. Every journal replays through the engine from its seed and recorded actions, to the
   outcome it records; its game, options, clocks and seats are the schedule's.
5. Every seat's result (bot, version, score, place, timeouts, refusals, forfeit) is what its
   journal says, and the ratings tables are what these results give.
6. A set counted on redeal k was dealt k times before: each earlier deal is in the archive,
   voided, with its journal and the reason it was voided (else whoever runs the arena could
   stop a run whenever a set went badly for a favourite, let it be dealt again, and hide it).

Members are read as streams, each at most MEMBER_BYTES and all at most ARCHIVE_BYTES (a
zero-filled member compresses to nothing and would fill the memory): over it, one line.

Each problem is one line naming the match and what differs.
"""

from __future__ import annotations

import hashlib
import json
import math
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.clients.audit import archive as export
from croupier.clients.audit import commitment, reveal
from croupier.clients.results.schedule import Deals, MatchKey, set_seed
from croupier.server.journal import seed_sha256

REQUIRED = ("schedule.json", "schedule.sha256", "reveal.json", "results.json", "ratings.json")
MEMBER_BYTES = 64 << 20
"""The most one member may hold (a long match's journal is a few megabytes)."""
ARCHIVE_BYTES = 2 << 30
"""The most all members together may hold."""
TOLERANCE = 0.01
"""How far a recomputed rating (Elo points, interval ends, a likelihood) may be from the archive's."""
LUCK_TOLERANCE = 1e-6
"""How far a recomputed seat's luck may be from the archive's (it is stored rounded to 9 digits)."""


class Unusable(Exception):
    """Not an archive this can check: unreadable, incomplete, of another format."""


@dataclass(frozen=True)
class Archive:
    folder: str
    members: Mapping[str, bytes]
    schedule: Mapping[str, Any]
    reveal: Mapping[str, Any]
    results: Mapping[str, Any]
    ratings: Mapping[str, Any]

    @property
    def committed(self) -> str:
        """The commitment the archive itself carries."""
        return commitment.read_commitment(self.members["schedule.sha256"].decode("ascii", "replace"))


def is_archive(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False


def read_archive(path: Path) -> Archive:
    """The archive's files, its JSON read; Unusable (with why) if it is not a whole one."""
    members: dict[str, bytes] = {}
    folders = set()
    total = 0
    try:
        with tarfile.open(
            path, "r:*"
        ) as tar:  # gzip read in bounded steps (a stream mode inflates whole blocks)
            for info in tar:
                if not info.isfile():
                    continue
                folder, _, name = info.name.partition("/")
                folders.add(folder)
                total += info.size
                if info.size > MEMBER_BYTES or total > ARCHIVE_BYTES:
                    over = (
                        f"{info.size} bytes, over the {MEMBER_BYTES} a member may hold"
                        if (info.size > MEMBER_BYTES)
                        else f"past {ARCHIVE_BYTES} bytes in all, the most an archive may hold"
                    )
                    raise Unusable(f"{path}: its member {info.name} is {over}: not read")
                file = tar.extractfile(info)
                assert file is not None  # a regular file
                members[name] = file.read(MEMBER_BYTES + 1)
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise Unusable(f"{path}: not a readable archive: {exc}") from None
    if len(folders) != 1:
        raise Unusable(f"{path}: an archive of croupier export holds one folder, not {len(folders)}")
    missing = [name for name in REQUIRED if name not in members]
    if missing:
        raise Unusable(f"{path}: not an archive of croupier export: no {', '.join(missing)}")
    try:
        documents = [json.loads(members[name]) for name in REQUIRED if name.endswith(".json")]
        schedule, reveal_, results, ratings = documents
        formats = (schedule["format"], reveal_["format"], results["format"], ratings["format"])
    except (ValueError, TypeError, KeyError) as exc:
        raise Unusable(f"{path}: a damaged archive: {exc}") from None
    if formats != (commitment.FORMAT, reveal.FORMAT, export.FORMAT, export.FORMAT):
        raise Unusable(f"{path}: an archive of another format ({formats}): use the croupier that wrote it")
    return Archive(folders.pop(), members, schedule, reveal_, results, ratings)


def audit(archive: Archive, committed: str | None) -> list[str]:
    """Every problem found (none: the run is what the archive says it is)."""
    with tempfile.TemporaryDirectory(prefix="croupier-audit-") as folder:
        return [
            *_commitment(archive, committed),
            *_secret(archive),
            *_reveal(archive),
            *_coverage(archive),
            *_redeals(archive),
            *_journals(archive, Path(folder)),
            *_ratings(archive),
        ]


def _key(entry: Mapping[str, Any]) -> MatchKey:
    return MatchKey(entry["game"], entry["round"], entry["group"], entry["deal"], entry["rotation"])


def _scheduled(archive: Archive) -> dict[MatchKey, Mapping[str, Any]]:
    return {_key(entry): entry for entry in archive.schedule["matches"]}


def _commitment(archive: Archive, committed: str | None) -> Iterator[str]:
    actual = commitment.digest(archive.members["schedule.json"])
    if committed is not None and actual != committed:
        yield (
            f"the schedule's SHA-256 is {actual}, not {committed}, the commitment published at the start: "
            "this is not the schedule the run committed to"
        )
    if actual != archive.committed:
        yield f"the schedule's SHA-256 is {actual}, but the archive's schedule.sha256 is {archive.committed}"


def _secret(archive: Archive) -> Iterator[str]:
    """The reveal's secret is the committed one, and deals every committed seed."""
    schedule, revealed = archive.schedule, archive.reveal
    for field in ("tournament", "run", "deals"):
        if revealed[field] != schedule[field]:
            yield f"the reveal is of {field} {revealed[field]!r}, the schedule of {schedule[field]!r}"
    secret = bytes.fromhex(revealed["secret"])
    if hashlib.sha256(secret).hexdigest() != schedule["secret_sha256"]:
        yield (
            f"the reveal's secret hashes to {hashlib.sha256(secret).hexdigest()}, but the schedule commits "
            f"to a secret hashing to {schedule['secret_sha256']}"
        )
        return  # every seed would differ: one line says it
    dealing = Deals(schedule["deals"])
    for key, entry in _scheduled(archive).items():
        seed = set_seed(secret, key, dealing)
        if seed_sha256(seed) != entry["seed_sha256"]:
            yield (
                f"{key}: the schedule commits to seed_sha256 {entry['seed_sha256']}, but the secret deals "
                f"seed {seed} (SHA-256 {seed_sha256(seed)})"
            )


def _reveal(archive: Archive) -> Iterator[str]:
    """Every deal of the reveal is the secret's, and of a scheduled match seated as scheduled."""
    yield from reveal.verify(archive.reveal)
    scheduled = _scheduled(archive)
    for entry in archive.reveal["matches"]:
        key = _key(entry)
        planned = scheduled.get(key)
        if planned is None:
            yield f"{key} (match {entry['match_id']}): dealt in the reveal, but not in the schedule"
        elif list(entry["seats"]) != list(planned["seats"]):
            where = f"{key} (match {entry['match_id']})"
            yield f"{where}: the reveal seats {entry['seats']}, the schedule {planned['seats']}"


def _played(archive: Archive) -> dict[MatchKey, Mapping[str, Any]]:
    """Each match's last deal in the reveal: the one its counted result must be of."""
    last: dict[MatchKey, Mapping[str, Any]] = {}
    for entry in archive.reveal["matches"]:
        key = _key(entry)
        if key not in last or entry["redeal"] > last[key]["redeal"]:
            last[key] = entry
    return last


def _coverage(archive: Archive) -> Iterator[str]:
    """No scheduled match left out, none added, none counted twice, each on its last deal."""
    scheduled, played = _scheduled(archive), _played(archive)
    counted = Counter(_key(entry) for entry in archive.results["matches"])
    for key in scheduled:
        if not counted[key]:
            yield f"{key}: scheduled, but the archive has no result of it"
    for key, times in counted.items():
        if key not in scheduled:
            yield f"{key}: a result of a match the schedule does not have"
        elif times > 1:
            yield f"{key}: {times} results counted, not one"
    for entry in archive.results["matches"]:
        key, last = _key(entry), played.get(_key(entry))
        if last is None:
            continue  # not dealt: said above (not in the schedule) or by the reveal's own check
        if (entry["redeal"], entry["match_id"]) != (last["redeal"], last["match_id"]):
            yield (
                f"{key} (match {entry['match_id']}): counted on deal {entry['redeal']} (match "
                f"{entry['match_id']}), but the reveal's last deal of it is {last['redeal']} (match "
                f"{last['match_id']})"
            )


def _redeals(archive: Archive) -> Iterator[str]:
    """Each set counted on redeal k has its deals 0 to k-1 in the archive, voided, each with a
    journal and a reason; every voided match says why it was voided."""
    voided: dict[tuple[str, int, int, int], dict[int, list[Mapping[str, Any]]]] = {}
    for entry in archive.results["voided"]:
        if not entry.get("reason"):
            yield f"{_key(entry)} (match {entry['match_id']}): voided, with no reason given"
        voided.setdefault(_key(entry).set_key, {}).setdefault(entry["redeal"], []).append(entry)
    counted: dict[tuple[str, int, int, int], int] = {}
    for entry in archive.results["matches"]:
        key = _key(entry).set_key
        counted[key] = max(counted.get(key, 0), entry["redeal"])
    for key, redeal in sorted(counted.items()):
        for attempt in range(redeal):
            if not any(e["journal"] is not None for e in voided.get(key, {}).get(attempt, [])):
                yield (
                    f"set {key}: counted on deal {redeal}, but its deal {attempt} is not in the archive "
                    "(voided, with its journal and why): a deal played before was left out"
                )


def _journals(archive: Archive, folder: Path) -> Iterator[str]:
    scheduled = _scheduled(archive)
    secret = bytes.fromhex(archive.reveal["secret"])
    dealing = Deals(archive.schedule["deals"])
    for number, entry in enumerate([*archive.results["matches"], *archive.results["voided"]]):
        key = _key(entry)
        where = f"{key} (match {entry['match_id']})"
        counted = "results" in entry
        planned = scheduled.get(key)
        if planned is None:
            continue  # said by _coverage
        name = entry["journal"]
        if name is None and not counted:
            continue  # a voided match the referee never saw, or whose end it never wrote
        if name not in archive.members:
            yield f"{where}: its journal {name} is not in the archive"
            continue
        seed = set_seed(secret, key, dealing, entry["redeal"])
        yield from _journal(archive, where, entry, planned, seed, folder / f"{number}.jsonl")


def _journal(
    archive: Archive,
    where: str,
    entry: Mapping[str, Any],
    planned: Mapping[str, Any],
    seed: int,
    path: Path,
) -> Iterator[str]:
    """One match's journal: it replays, from the secret's seed, to the result counted."""
    from croupier.server.journal import End, Forfeit, Header, Refuse, Timeout
    from croupier.server.replay import ReplayMismatch, replay_journal
    from croupier.server.seats import final_places

    path.write_bytes(archive.members[entry["journal"]])
    try:
        _state, records = replay_journal(path, seed)
    except (ReplayMismatch, ValueError, KeyError) as exc:  # an unknown game, options it refuses
        yield f"{where}: its journal does not replay: {str(exc).replace(str(path), entry['journal'])}"
        return
    header = records[0]
    assert isinstance(header, Header)
    conditions = archive.schedule["games"][planned["game"]]
    if header.match_id != entry["match_id"]:
        yield f"{where}: its journal is of match {header.match_id}"
    if header.game != planned["game"]:
        yield f"{where}: its journal is of game {header.game}"
    changed = {
        name: (header.options.get(name), value)
        for name, value in conditions["options"].items()
        if header.options.get(name) != value
    }
    changed |= {
        name: (value, None) for name, value in header.options.items() if name not in conditions["options"]
    }
    if changed:
        told = "; ".join(
            f"{name} {ours!r} (scheduled: {theirs!r})" for name, (ours, theirs) in changed.items()
        )
        yield f"{where}: its journal was played with other options: {told}"
    clocks = header.clocks.to_proto()
    for name, value in conditions["clock"].items():
        if getattr(clocks, name) != value:
            yield f"{where}: its journal's clock {name} is {getattr(clocks, name)}, scheduled {value}"
    seats = [player.name for player in header.players]
    if seats != list(planned["seats"]):
        yield f"{where}: its journal seats {seats}, the schedule {planned['seats']}"
    end = records[-1]
    if "results" not in entry:
        return  # voided: it replays and was played as scheduled; it counts for nothing
    if not isinstance(end, End):
        yield f"{where}: its journal ends without a result ({end.KIND})"
        return
    if end.seed != seed:
        yield f"{where}: its journal reveals seed {end.seed}, the secret deals {seed}"
    if len(end.scores) != len(seats):
        yield f"{where}: its journal's end scores {len(end.scores)} seats, its header seats {len(seats)}"
        return
    forfeits = {r.seat: r.reason for r in records if isinstance(r, Forfeit)}
    journal: dict[str, list[Any]] = {
        "score": list(end.scores),
        "place": final_places(end.engine_places, [seat in forfeits for seat in range(len(seats))]),
        "timeouts": [sum(isinstance(r, Timeout) and r.seat == s for r in records) for s in range(len(seats))],
        "refusals": [sum(isinstance(r, Refuse) and r.seat == s for r in records) for s in range(len(seats))],
        "note": [forfeits.get(seat, "") for seat in range(len(seats))],
    }
    recorded = {
        "place": list(end.places),
        "timeouts": list(end.timeouts),
        "refusals": list(end.refusals),
        "note": list(end.forfeited),
    }
    for field, values in recorded.items():  # the journal's end against its own records
        if values != journal[field]:
            yield f"{where}: its journal's end records {field} {values}, its records give {journal[field]}"
    results = entry["results"]
    if [result["seat"] for result in results] != list(range(len(seats))):
        yield f"{where}: results for seats {[r['seat'] for r in results]}, the match has {len(seats)}"
        return
    for result in results:
        seat, bot = result["seat"], planned["seats"][result["seat"]]
        expected: dict[str, Any] = {
            "bot": bot,
            "version": archive.schedule["bots"].get(bot, ""),
            **{field: journal[field][seat] for field in journal},
            "forfeited": seat in forfeits,
        }
        for field, value in expected.items():
            if result[field] != value:
                yield (
                    f"{where}: seat {seat} ({bot}) has {field} {result[field]!r} in the results, "
                    f"{value!r} in its journal"
                )
    yield from _luck(archive, where, planned, results, records, seed)


def _luck(
    archive: Archive,
    where: str,
    planned: Mapping[str, Any],
    results: list[Mapping[str, Any]],
    records: list[Any],
    seed: int,
) -> Iterator[str]:
    """Each seat's luck stored (its corrected score is its points less it) recomputed from the journal
    with the value function the schedule committed to; a luck where none was committed is a problem
    (none stored: the seat's plain score counts, no claim to check)."""
    from croupier.clients.results.luck_journal import evaluator_of, records_luck

    identity = archive.schedule.get("luck", {}).get(planned["game"])
    if identity is None:
        for result in results:
            if result.get("luck") is not None:
                yield (
                    f"{where}: seat {result['seat']} has luck {result['luck']!r} in the results, but the "
                    f"schedule committed to no luck value function for {planned['game']}"
                )
        return
    try:
        evaluator = evaluator_of(identity)
    except ValueError as exc:
        yield f"{where}: {exc}"
        return
    recomputed = records_luck(records, seed, evaluator, fresh=archive.schedule["deals"] == Deals.FRESH.value)
    for result in results:
        told, ours = result.get("luck"), recomputed[result["seat"]]
        if told is None:
            continue
        if told is None or ours is None or not math.isclose(told, ours, abs_tol=LUCK_TOLERANCE):
            yield (
                f"{where}: seat {result['seat']} ({result['bot']}) has luck {told!r} in the results, "
                f"{ours!r} recomputed from its journal"
            )


def rated_sets(archive: Archive, luck: bool = False) -> dict[str, list[Any]]:
    """Each game's duplicate sets as the ratings read them, from the archive's results, in the
    results database's order (round, group, deal; rotations in turn); ``luck``: with each seat's."""
    from croupier.clients.results.ratings import RatedSet
    from croupier.clients.results.store import SeatResult

    Read = tuple[int, dict[str, int], dict[str, float]]
    sets: dict[str, dict[tuple[int, int, int], list[Read]]] = {}
    for entry in archive.results["matches"]:
        bots = [(SeatResult(0, r["bot"], 0, 0, version=r["version"]).identity, r) for r in entry["results"]]
        places = {bot: r["place"] for bot, r in bots}
        lucks = {bot: r["luck"] for bot, r in bots if r.get("luck") is not None}
        unit = (entry["round"], entry["group"], entry["deal"])
        sets.setdefault(entry["game"], {}).setdefault(unit, []).append((entry["rotation"], places, lucks))
    name = archive.schedule["tournament"]
    return {
        game: [
            RatedSet(
                name,
                tuple(sorted(min(matches)[1])),
                tuple(places for _, places, _ in sorted(matches)),
                tuple(lucks for _, _, lucks in sorted(matches)) if luck else (),
            )
            for _, matches in sorted(units.items())
        ]
        for game, units in sets.items()
    }


def _ratings(archive: Archive) -> Iterator[str]:
    """Each game's table, recomputed from the results with the model and bootstrap it names."""
    from croupier.clients.results.ratings import Bootstrap, Model, Resample, rate

    settings = archive.ratings
    sets = rated_sets(archive, luck=settings.get("luck_correction", False))  # older archives: plain
    for game in archive.schedule["games"]:
        table = rate(
            sets.get(game, []),
            prior=settings["prior"],
            samples=settings["samples"],
            model=Model(settings["model"]),
            resample=Resample(settings["resample"]),
            seed=None if settings.get("seed") == "results" else 0,  # older archives: seed 0
            method=Bootstrap(settings.get("methods", {}).get(game, "refit")),  # older ones refitted
        )
        ours = {rating.bot: rating for rating in table}
        theirs = {row["bot"]: row for row in settings["games"].get(game, [])}
        for bot in sorted(set(ours) ^ set(theirs)):
            how = "missing from" if bot in ours else "added to"
            yield f"ratings of {game}: {bot} is {how} the archive's table"
        for bot in sorted(set(ours) & set(theirs)):
            for field, value in _differences(theirs[bot], ours[bot]):
                told = theirs[bot][field]
                yield f"ratings of {game}: {bot} has {field} {told} in the archive, {value} recomputed"


def _differences(row: Mapping[str, Any], rating: Any) -> Iterator[tuple[str, Any]]:
    for field, value in row.items():
        ours = getattr(rating, field)
        if isinstance(ours, float) and isinstance(value, int | float):
            if not math.isclose(ours, value, abs_tol=TOLERANCE):
                yield field, round(ours, 2)
        elif ours != value:
            yield field, ours


def run(path: Path, committed: str | None) -> int:
    """Check an archive; the exit status (0 verified, 1 a problem found, 2 unusable)."""
    from croupier.clients.results.ratings_cli import fail

    try:
        archive = read_archive(path)
        problems = audit(archive, committed)
    except Unusable as exc:
        return fail(str(exc), 2)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return fail(f"{path}: a damaged archive: {exc!r}", 2)
    schedule = archive.schedule
    what = f"{schedule['tournament']} run {schedule['run']}"
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in {what}: it is not what its archive says")
        return 1
    counted, voided = len(archive.results["matches"]), len(archive.results["voided"])
    aside = f" ({voided} voided, dealt again after an abandoned run, replayed too)" if voided else ""
    print(
        f"verified {what}: {counted} matches as scheduled, dealt from the secret and replayed to their "
        f"results{aside}; ratings of {len(schedule['games'])} game(s) recomputed"
    )
    if committed is None:
        print(
            f"against the archive's own commitment {archive.committed}: compare it with the one published "
            "at the start (or give it: --commitment HASH)"
        )
    else:
        print(f"the schedule is the one committed to at the start: {committed}")
    return 0
