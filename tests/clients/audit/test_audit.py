"""A whole tournament run audited from its archive alone: ``croupier export``, then ``croupier verify
ARCHIVE``. One real run (bots in subprocesses, an embedded referee) is exported once; each test
tampers with a copy the way a dishonest operator could, keeping the rest of the archive consistent
(ratings recomputed, hashes redone), and the audit must name the match and what differs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.audit import archive_check as audit
from croupier.clients.audit import commitment
from croupier.clients.audit.archive import write_archive
from croupier.clients.cli import main
from croupier.clients.results.luck import default_evaluator
from croupier.clients.results.luck_journal import records_luck
from croupier.clients.results.ratings import Model, Resample, rate
from croupier.clients.results.schedule import Deals, MatchKey, set_seed
from croupier.clients.results.store import Store
from croupier.clients.tournament.config import load
from croupier.clients.tournament.referee_client import Replicas
from croupier.clients.tournament.runner import Entrant, Runner
from croupier.engine.core import options_to_dict
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.journal import Act, End, Header, Start, encode, from_json, replayed, seed_sha256
from tests.clients.tournament.test_runner import Quiet, entrants
from tests.clients.tournament.test_runner import config as runner_config

__all__ = ["entrants"]  # the fixture: a referee with three bots connected

TOURNAMENT = """
name = "audited"
seed = 5
concurrency = 6

[clock]
decision_ms = 2000

[[games]]
game = "chinese_ten"
seats = 2
options = { target = 100 }

[[games]]
game = "platinum_fish"
seats = 3

[[bots]]
name = "alpha"
command = "croupier bot --strategy random --max-matches 8"
[[bots]]
name = "beta"
command = "croupier bot --strategy random --max-matches 8"
[[bots]]
name = "gamma"
command = "croupier bot --strategy heuristic --max-matches 8"
"""


@dataclasses.dataclass(frozen=True)
class Run:
    folder: Path
    archive: Path
    commitment: str
    stdout: str

    @property
    def data(self) -> Path:
        return self.folder / "data"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("audited")
    (folder / "t.toml").write_text(TOURNAMENT)
    played = subprocess.run(
        [
            *(sys.executable, "-m", "croupier.clients.cli", "tournament", str(folder / "t.toml")),
            *("--data", str(folder / "data"), "--samples", "20", "--plain"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert played.returncode == 0, played.stderr
    archive = folder / "audited.tar.gz"
    assert (
        main(["export", "audited", "--data", str(folder / "data"), "-o", str(archive), "--samples", "20"])
        == 0
    )
    published = (folder / "data" / "reveals" / "audited-1.schedule.sha256").read_text()
    return Run(folder, archive, published.split()[0], played.stdout)


class Copy:
    """An archive's files, open to tampering, written back as a new archive."""

    def __init__(self, path: Path) -> None:
        with tarfile.open(path) as tar:
            self.members = {
                info.name.partition("/")[2]: tar.extractfile(info).read()  # type: ignore[union-attr]
                for info in tar
                if info.isfile()
            }

    def json(self, name: str) -> Any:
        return json.loads(self.members[name])

    def put(self, name: str, value: Any) -> None:
        self.members[name] = (json.dumps(value, indent=1) + "\n").encode()

    def lines(self, journal: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.members[journal].splitlines()]

    def put_lines(self, journal: str, lines: list[dict[str, Any]]) -> None:
        self.members[journal] = b"".join(encode(from_json(line)) for line in lines)

    def match(self, game: str, rotation: int = 0) -> dict[str, Any]:
        """A counted match's entry in results.json (a copy: put it back with ``results``)."""
        matches = self.json("results.json")["matches"]
        found: dict[str, Any] = next(m for m in matches if m["game"] == game and m["rotation"] == rotation)
        return found

    def rerate(self) -> None:
        """The ratings tables of the results as they now stand: a careful forger's."""
        ratings = self.json("ratings.json")
        archive = audit.Archive(
            "x", self.members, *(self.json(n) for n in audit.REQUIRED if n.endswith("json"))
        )
        for game, sets in audit.rated_sets(archive).items():
            table = rate(
                sets,
                prior=ratings["prior"],
                samples=ratings["samples"],
                model=Model(ratings["model"]),
                resample=Resample(ratings["resample"]),
            )
            ratings["games"][game] = [dataclasses.asdict(rating) for rating in table]
        self.put("ratings.json", ratings)

    def recommit(self) -> None:
        """The archive's own commitment made to fit its schedule (whoever forges one does)."""
        value = commitment.digest(self.members["schedule.json"])
        self.members["schedule.sha256"] = f"{value}  audited-1.schedule.json\n".encode()

    def write(self, path: Path) -> Path:
        write_archive(path, "audited-1", self.members)
        return path


def verify(
    capsys: pytest.CaptureFixture[str], archive: Path, committed: str | None = None
) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["verify", str(archive), *(["--commitment", committed] if committed else [])])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def tampered(run: Run, tmp_path: Path, change: Callable[[Copy], None]) -> Path:
    copy = Copy(run.archive)
    change(copy)
    return copy.write(tmp_path / "tampered.tar.gz")


def where(entry: dict[str, Any]) -> str:
    key = MatchKey(entry["game"], entry["round"], entry["group"], entry["deal"], entry["rotation"])
    return f"{key} (match {entry['match_id']})"


def replace_match(copy: Copy, entry: dict[str, Any]) -> None:
    results = copy.json("results.json")
    results["matches"] = [entry if m["match_id"] == entry["match_id"] else m for m in results["matches"]]
    copy.put("results.json", results)


# --- the honest run ---------------------------------------------------------------------------


def test_an_untouched_archive_verifies_against_the_commitment_printed_before_the_first_match(
    run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    assert f"committed: sha256 {run.commitment}" in run.stdout
    published = run.data / "reveals" / "audited-1.schedule.sha256"
    copy = Copy(run.archive)
    first_match = min(
        json.loads(copy.members[name].splitlines()[0])["created_ms"]
        for name in copy.members
        if name.startswith("journals/")
    )
    assert published.stat().st_mtime * 1000 < first_match  # committed before play
    assert (
        commitment.digest((run.data / "reveals" / "audited-1.schedule.json").read_bytes()) == run.commitment
    )
    code, lines = verify(capsys, run.archive, run.commitment)
    assert code == 0, lines
    assert lines[0].startswith("verified audited run 1: 12 matches as scheduled")
    assert lines[-1] == f"the schedule is the one committed to at the start: {run.commitment}"
    # the published file itself serves as --commitment
    assert verify(capsys, run.archive, str(published))[0] == 0


def test_the_commitment_confirms_no_guess_of_the_schedule_made_from_everything_public(run: Run) -> None:
    """An anonymous attacker knows the tournament file and every seed_sha256 ListMatches publishes
    (here: every one, as after the last match started); the seating is the one thing the
    commitment must not let them confirm before the end. Without the secret's hash in the
    document, this rebuild would hit the commitment exactly."""
    config = load(run.folder / "t.toml")
    schedule = json.loads((run.data / "reveals" / "audited-1.schedule.json").read_bytes())
    public_hashes = [m["seed_sha256"] for m in schedule["matches"]]  # as ListMatches shows them
    with Store(run.data / "results.db") as store:
        (tournament,) = store.tournaments(["audited"])
    # every field rebuilt from the file and the published hashes (any secret will do for the seating)
    rebuilt = commitment.document(config, dataclasses.replace(tournament, secret=bytes(32)))
    for match, published in zip(rebuilt["matches"], public_hashes, strict=True):
        match["seed_sha256"] = published
    for guess in [None, b"", str(config.seed).encode(), b"audited", bytes(32)]:
        if guess is None:
            del rebuilt["secret_sha256"]
        else:
            rebuilt["secret_sha256"] = hashlib.sha256(guess).hexdigest()
        assert commitment.digest(commitment.encode(rebuilt)) != run.commitment
    # and the seating it hides is the file's: what the attacker rebuilt is right but for the secret
    assert rebuilt["matches"][0]["seats"] == schedule["matches"][0]["seats"]


def test_the_commitment_carries_each_games_luck_value_function_and_every_seat_its_luck(run: Run) -> None:
    """V is fixed before the first deal (issue #46): its identity is in the committed schedule, and
    the runner stored each seat's luck, replayed from the referee's journal, with its result."""
    schedule = json.loads((run.data / "reveals" / "audited-1.schedule.json").read_bytes())
    for game in ("chinese_ten", "platinum_fish"):
        assert schedule["luck"][game] == default_evaluator(game).identity()
    results = Copy(run.archive).json("results.json")["matches"]
    assert all(result["luck"] is not None for entry in results for result in entry["results"])
    two_seats = [entry["results"] for entry in results if entry["game"] == "chinese_ten"]
    assert all(first["luck"] == -second["luck"] for first, second in two_seats)  # a pair's luck is one
    assert any(first["luck"] != 0 for first, _ in two_seats)


# --- each kind of tampering -------------------------------------------------------------------


def test_a_changed_luck_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A seat's corrected score is its points less its luck: a luck made up is recomputed from the
    journal with the committed V, and named."""
    copy = Copy(run.archive)
    entry = copy.match("chinese_ten", rotation=1)
    seat = entry["results"][0]
    told = seat["luck"]
    seat["luck"] = told + 0.25
    replace_match(copy, entry)
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    assert said[:-1] == [
        f"{where(entry)}: seat 0 ({seat['bot']}) has luck {told + 0.25!r} in the results, "
        f"{told!r} recomputed from its journal"
    ]


def test_a_seat_swap_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The seats of one match reversed everywhere the archive tells them but the schedule: its
    reveal, its results (the bots' lines swapped) and its journal's header."""
    copy = Copy(run.archive)
    entry = copy.match("chinese_ten")
    reveal = copy.json("reveal.json")
    for dealt in reveal["matches"]:
        if dealt["match_id"] == entry["match_id"]:
            dealt["seats"].reverse()
            seats = dealt["seats"]
    copy.put("reveal.json", reveal)
    for result in entry["results"]:
        result["bot"] = seats[result["seat"]]
    replace_match(copy, entry)
    lines = copy.lines(entry["journal"])
    lines[0]["players"].reverse()
    copy.put_lines(entry["journal"], lines)
    copy.rerate()
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    scheduled = list(reversed(seats))
    assert f"{where(entry)}: the reveal seats {seats}, the schedule {scheduled}" in said
    assert f"{where(entry)}: its journal seats {seats}, the schedule {scheduled}" in said
    assert (
        f"{where(entry)}: seat 0 ({scheduled[0]}) has bot {seats[0]!r} in the results, "
        f"{scheduled[0]!r} in its journal" in said
    )


def test_a_seat_swap_in_the_schedule_too_is_caught_by_the_commitment(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = Copy(run.archive)
    schedule = json.loads(copy.members["schedule.json"])
    schedule["matches"][0]["seats"].reverse()
    copy.members["schedule.json"] = commitment.encode(schedule)
    copy.recommit()
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    digest = commitment.digest(copy.members["schedule.json"])
    assert said[0] == (
        f"the schedule's SHA-256 is {digest}, not {run.commitment}, the commitment published at the start: "
        "this is not the schedule the run committed to"
    )


def test_a_changed_result_row_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = Copy(run.archive)
    entry = copy.match("platinum_fish", rotation=2)
    loser = max(entry["results"], key=lambda r: r["place"])
    loser["place"], loser["score"] = 1, loser["score"] + 50
    replace_match(copy, entry)
    copy.rerate()
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    seat, bot = loser["seat"], loser["bot"]
    assert any(
        line.startswith(f"{where(entry)}: seat {seat} ({bot}) has score {loser['score']} in the results")
        for line in said
    )
    assert any(
        line.startswith(f"{where(entry)}: seat {seat} ({bot}) has place 1 in the results") for line in said
    )


def test_a_result_left_as_it_was_but_its_ratings_changed_is_named(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = Copy(run.archive)
    ratings = copy.json("ratings.json")
    top = ratings["games"]["chinese_ten"][0]
    top["elo"] += 29.0
    copy.put("ratings.json", ratings)
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    assert said[0].startswith(f"ratings of chinese_ten: {top['bot']} has elo {top['elo']} in the archive")


def test_a_changed_seed_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = Copy(run.archive)
    reveal = copy.json("reveal.json")
    dealt = reveal["matches"][3]
    dealt["seed"] += 1
    dealt["seed_sha256"] = seed_sha256(dealt["seed"])
    copy.put("reveal.json", reveal)
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    key = MatchKey(dealt["game"], dealt["round"], dealt["group"], dealt["deal"], dealt["rotation"])
    secret_seed = dealt["seed"] - 1
    assert said == [
        f"{key}: seed {dealt['seed']} is not the secret's {secret_seed}",
        f"{key}: commitment {dealt['seed_sha256']} is not SHA-256 of seed {secret_seed}",
        "2 problem(s) in audited run 1: it is not what its archive says",
    ]


def test_a_dropped_match_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = Copy(run.archive)
    entry = copy.match("chinese_ten", rotation=1)
    results = copy.json("results.json")
    results["matches"].remove(entry)
    copy.put("results.json", results)
    del copy.members[entry["journal"]]
    copy.rerate()
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    key = where(entry).partition(" (")[0]
    assert said == [
        f"{key}: scheduled, but the archive has no result of it",
        "1 problem(s) in audited run 1: it is not what its archive says",
    ]


def test_an_added_match_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = Copy(run.archive)
    results = copy.json("results.json")
    extra = dict(results["matches"][0], round=1)  # a round the schedule does not have
    results["matches"].append(extra)
    copy.put("results.json", results)
    copy.rerate()
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    assert f"{where(extra).partition(' (')[0]}: a result of a match the schedule does not have" in said


def test_an_edited_action_is_named(run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One move changed to another that was legal at that point: the rest no longer follows."""
    copy = Copy(run.archive)
    entry = copy.match("platinum_fish")
    seed = next(d["seed"] for d in copy.json("reveal.json")["matches"] if d["match_id"] == entry["match_id"])
    lines = copy.lines(entry["journal"])
    records = [from_json(line) for line in lines]
    spec = get_game("platinum_fish")
    for number, line in enumerate(lines):
        if line["t"] != "act":
            continue
        header = records[0]
        assert isinstance(header, Header)
        state = replayed(spec, spec.options(header.options), seed, records[:number])
        legal = [str(action) for action in state.legal_actions(line["seat"])]
        if len(legal) > 1:
            line["action"] = next(action for action in legal if action != line["action"])
            break
    copy.put_lines(entry["journal"], lines)
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1
    assert said[0].startswith(f"{where(entry)}: its journal does not replay: {entry['journal']}: "), said


def forge(copy: Copy, entry: dict[str, Any], seed: int, options: dict[str, Any], rng: random.Random) -> None:
    """Play the match again through the engine (random legal moves) from ``seed`` and ``options``:
    its journal, its results, all self-consistent. What an operator could fabricate."""
    header = from_json(json.loads(copy.members[entry["journal"]].splitlines()[0]))
    assert isinstance(header, Header)
    spec = get_game(entry["game"])
    options = {**header.options, **options}
    state = spec.new_game(spec.options(options), Rng(seed))
    records: list[Any] = [
        dataclasses.replace(
            header, options=options_to_dict(spec.options(options)), seed_sha256=seed_sha256(seed)
        ),
        Start(0.0),
    ]
    while not state.is_over():
        seat = min(state.to_act())
        action = rng.choice(state.legal_actions(seat))
        at = len(records) / 1000
        state.apply(seat, action, at)
        records.append(Act(at, seat, str(action), len(records), 0.001, 30.0))
    outcome = state.outcome()
    seats = len(header.players)
    records.append(
        End(
            len(records) / 1000,
            seed,
            tuple(outcome.scores),
            tuple(outcome.places),
            tuple(outcome.places),
            (0,) * seats,
            (0,) * seats,
            ("",) * seats,
        )
    )
    copy.members[entry["journal"]] = b"".join(map(encode, records))
    luck = records_luck(records, seed, default_evaluator(entry["game"]), fresh=False)  # the committed V's
    for result in entry["results"]:
        result.update(score=outcome.scores[result["seat"]], place=outcome.places[result["seat"]])
        result.update(timeouts=0, refusals=0, forfeited=False, note="", luck=luck[result["seat"]])


def test_a_match_played_with_a_changed_option_is_named(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = Copy(run.archive)
    entry = copy.match("chinese_ten")
    seed = next(d["seed"] for d in copy.json("reveal.json")["matches"] if d["match_id"] == entry["match_id"])
    forge(copy, entry, seed, {"target": 60}, random.Random(1))
    replace_match(copy, entry)
    copy.rerate()
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), run.commitment)
    assert code == 1, said
    assert said[0] == f"{where(entry)}: its journal was played with other options: target 60 (scheduled: 100)"


def test_a_forged_but_self_consistent_reveal_is_caught_by_the_commitment_published_at_the_start(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another secret, every seed and hash recomputed from it, every match played again on its
    deals: the archive agrees with itself in every line, and only the commitment published before
    the first match tells it from the real one."""
    copy = Copy(run.archive)
    secret = bytes(range(32))
    schedule = json.loads(copy.members["schedule.json"])
    dealing = Deals(schedule["deals"])
    schedule["secret_sha256"] = hashlib.sha256(secret).hexdigest()
    for match in schedule["matches"]:
        match["seed_sha256"] = seed_sha256(set_seed(secret, audit._key(match), dealing))
    copy.members["schedule.json"] = commitment.encode(schedule)
    copy.recommit()
    reveal = copy.json("reveal.json")
    reveal["secret"] = secret.hex()
    seeds = {}
    for dealt in reveal["matches"]:
        dealt["seed"] = seeds[dealt["match_id"]] = set_seed(
            secret, audit._key(dealt), dealing, dealt["redeal"]
        )
        dealt["seed_sha256"] = seed_sha256(dealt["seed"])
    copy.put("reveal.json", reveal)
    results = copy.json("results.json")
    rng = random.Random(7)
    for entry in results["matches"]:
        forge(copy, entry, seeds[entry["match_id"]], schedule["games"][entry["game"]]["options"], rng)
    copy.put("results.json", results)
    copy.rerate()
    forged = copy.write(tmp_path / "forged.tar.gz")
    code, said = verify(capsys, forged)
    assert code == 0, said  # consistent in itself: the archive alone cannot tell
    code, said = verify(capsys, forged, run.commitment)
    assert code == 1
    assert said[0].endswith(
        f"not {run.commitment}, the commitment published at the start: "
        "this is not the schedule the run committed to"
    )


async def test_a_run_with_a_set_dealt_again_verifies_with_its_voided_match_replayed_and_not_counted(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A match left on the referee by a stopped run is called off, and its set dealt again from
    the same committed secret: the archive holds both deals, and verifies."""
    referee, bots = entrants
    plan = runner_config()
    bots = {name: dataclasses.replace(bot, version=plan.bot(name).version) for name, bot in bots.items()}
    data = tmp_path / "data"
    with Store(data / "results.db") as store:
        tournament = store.open_tournament("t", plan.fingerprint(), plan.settings(), again=False)
        committed, _ = commitment.commit(data, plan, tournament)
        assert tournament.secret is not None
        store.schedule(tournament.id, (m for d in plan.schedule(tournament.secret) for m in d.matches))
        first = min(store.matches(tournament.id).values(), key=lambda record: record.id)
        # the stopped run's match, waiting for bots that are gone
        replica, created = await referee.create_match(
            plan.games[0], first.seed, [(b, "") for b in first.seats]
        )
        store.mark_started(first.id, created.match.match_id, created.journal, replica)
        assert await Runner(plan, store, referee, bots, Quiet()).run(tournament) is True
    assert main(["export", "t", "--data", str(data), "--samples", "20"]) == 0
    archive = data / "reveals" / "t-1.audit.tar.gz"
    code, said = verify(capsys, archive, committed)
    assert code == 0, said
    assert said[0] == (
        "verified t run 1: 12 matches as scheduled, dealt from the secret and replayed to their results "
        "(1 voided, dealt again after an abandoned run, replayed too); ratings of 1 game(s) recomputed"
    )
    # the voided deal's journal is in the archive, and a result claimed on it is refused
    copy = Copy(archive)
    results = copy.json("results.json")
    (voided,) = results["voided"]
    assert voided["journal"] in copy.members
    counted = next(
        m for m in results["matches"] if m["match_id"] != voided["match_id"] and m["rotation"] == 0
    )
    counted = dict(next(m for m in results["matches"] if audit._key(m) == audit._key(voided)))
    results["matches"] = [
        dict(m, redeal=voided["redeal"], match_id=voided["match_id"], journal=voided["journal"])
        if audit._key(m) == audit._key(voided)
        else m
        for m in results["matches"]
    ]
    copy.put("results.json", results)
    code, said = verify(capsys, copy.write(tmp_path / "t.tar.gz"), committed)
    assert code == 1
    assert said[0] == (
        f"{audit._key(voided)} (match {voided['match_id']}): counted on deal 0 (match {voided['match_id']}), "
        f"but the reveal's last deal of it is 1 (match {counted['match_id']})"
    )
    # every trace of the voided deal removed (the reveal, the results, the journal), the counted
    # matches keeping redeal 1: an attempt hidden, which the counted redeal gives away
    hidden = Copy(archive)
    set_key = audit._key(voided).set_key
    revealed = hidden.json("reveal.json")
    revealed["matches"] = [
        m for m in revealed["matches"] if not (audit._key(m).set_key == set_key and m["redeal"] == 0)
    ]
    hidden.put("reveal.json", revealed)
    hidden.put("results.json", dict(hidden.json("results.json"), voided=[]))
    del hidden.members[voided["journal"]]
    code, said = verify(capsys, hidden.write(tmp_path / "hidden.tar.gz"), committed)
    assert (code, said[0]) == (
        1,
        f"set {set_key}: counted on deal 1, but its deal 0 is not in the archive (voided, with its "
        "journal and why): a deal played before was left out",
    )
    # and a voided match must say why
    unexplained = Copy(archive)
    results = unexplained.json("results.json")
    unexplained.put("results.json", dict(results, voided=[{**voided, "reason": ""}]))
    code, said = verify(capsys, unexplained.write(tmp_path / "unexplained.tar.gz"), committed)
    assert (code, said[0]) == (
        1,
        f"{audit._key(voided)} (match {voided['match_id']}): voided, with no reason given",
    )


# --- what is not an archive, and what is not exported -----------------------------------------


def test_an_unusable_archive_is_one_line_and_exit_2(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = Copy(run.archive)
    del copy.members["results.json"]
    code, said = verify(capsys, copy.write(tmp_path / "incomplete.tar.gz"))
    assert (code, len(said)) == (2, 1)
    assert said[0].endswith("not an archive of croupier export: no results.json")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(run.archive.read_bytes()[:2000])
    code, said = verify(capsys, cut)
    assert (code, len(said)) == (2, 1)
    assert "not a readable archive" in said[0]
    code, said = verify(capsys, run.archive, "beef")
    assert (code, said) == (2, ["--commitment: 'beef' is not a SHA-256 (64 hex digits)"])


def test_a_member_over_the_limit_is_refused_in_one_line_without_being_read(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zero-filled member compresses to almost nothing: read whole, 800 MiB of it took 864 MiB."""
    import tracemalloc

    limit = 1 << 20
    monkeypatch.setattr(audit, "MEMBER_BYTES", limit)
    copy = Copy(run.archive)
    copy.members["journals/zeros.jsonl"] = bytes(8 * limit)
    bomb = copy.write(tmp_path / "bomb.tar.gz")
    del copy
    tracemalloc.start()
    try:
        code, said = verify(capsys, bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (code, len(said)) == (2, 1), said
    assert said[0] == (
        f"{bomb}: its member audited-1/journals/zeros.jsonl is {8 * limit} bytes, over the {limit} a member "
        "may hold: not read"
    )
    assert peak < 4 * limit, peak


def test_an_unfinished_run_is_not_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(tmp_path / "results.db") as store:
        store.open_tournament("pending", "fp", {}, again=False)
    code = main(["export", "pending", "--data", str(tmp_path)])
    assert code == 2
    assert capsys.readouterr().err == (
        "pending run 1 is not over: its schedule and journals stay private until it is "
        "(run the tournament again to finish it)\n"
    )
    assert not (tmp_path / "reveals").exists()


def test_ratings_exported_less_luck_are_recomputed_less_luck(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "less-luck.tar.gz"
    data = str(run.data)
    exported = [
        "export",
        "audited",
        "--data",
        data,
        "-o",
        str(archive),
        "--samples",
        "20",
        "--luck-correction",
    ]
    assert main(exported) == 0
    ratings = Copy(archive).json("ratings.json")
    assert (ratings["luck_correction"], ratings["model"]) == (True, "pairwise")
    assert verify(capsys, archive, run.commitment)[0] == 0
