"""``croupier tournament FILE --in-process``: a tournament of Python bots played without a referee
gives, set for set, the results and tables of the same file played over the referee on the same
secret; interrupted (Ctrl-C, or killed), the same command goes on and no set counts twice; what it
cannot play is refused in one line, and so is the export of what it played."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.clients.author.inprocess import SetJob, play_set
from croupier.clients.cli import main
from croupier.clients.results.schedule import duplicate_set
from croupier.clients.results.store import SeatResult, Store
from croupier.clients.tournament.config import load
from tests.clients.terminal import croupier

WAIT = 300
"""Seconds before a run is given up as hung: a guard, never a timing check."""
FIRST_LEGAL = '''import time

from croupier.clients.sdk import Bot, main


class First(Bot):
    """Always the first legal action: deterministic, weaker than the heuristic; SLOW s a move."""

    def choose(self, view, legal):
        time.sleep(SLOW)
        return 0


if __name__ == "__main__":
    main(First)
'''
TOURNAMENT = """
name = "small"
seed = 7
rounds = ROUNDS

[[games]]
game = "spoil_five"
seats = 2
deals = 2

[[games]]
game = "chinese_ten"
seats = 2
options = { target = 50 }

[[bots]]
name = "heur"
command = "croupier bot --strategy heuristic --max-matches 8"

[[bots]]
name = "first"
command = ["PYTHON", "FIRST"]
"""


def tournament(folder: Path, rounds: int = 1, slow: float = 0.0) -> Path:
    """The tournament file (two games, so that the deal numbers of their sets repeat), its bot file
    beside it."""
    (folder / "first.py").write_text(FIRST_LEGAL.replace("SLOW", repr(slow)))
    text = TOURNAMENT.replace("ROUNDS", str(rounds)).replace("PYTHON", sys.executable)
    (folder / "t.toml").write_text(text.replace("FIRST", str(folder / "first.py")))
    return folder / "t.toml"


def play(file: Path, data: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        croupier("tournament", str(file), "--data", str(data), "--samples", "20", "--plain", *extra),
        cwd=file.parent,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def seeded(file: Path, data: Path, secret: bytes) -> None:
    """The tournament's run begun in ``data`` on ``secret``, as a referee run began it (the OS draws
    a run's secret: this is the one way two runs deal the same)."""
    config = load(file)
    with Store(data / "results.db") as store:
        store.open_tournament(config.name, config.fingerprint(), config.settings(), False, secret)


def secret_of(data: Path) -> bytes:
    with Store(data / "results.db") as store:
        secret = store.tournaments()[-1].secret
    assert secret is not None
    return secret


def results(data: Path) -> list[tuple[object, ...]]:
    """Every counted seat of every match: its key, seed, seating and each seat's whole line."""
    with contextlib.closing(sqlite3.connect(data / "results.db")) as db:
        return db.execute(
            "SELECT m.game, m.round, m.grp, m.deal, m.rotation, m.redeal, m.seed, m.seats, r.seat, r.bot, "
            "r.score, r.place, r.timeouts, r.refusals, r.forfeited, r.note, r.version, r.luck "
            "FROM matches m JOIN results r ON r.match_id = m.id "
            "ORDER BY m.game, m.round, m.grp, m.deal, m.rotation, r.seat"
        ).fetchall()


def tables(output: str) -> list[str]:
    """The rows of the crosstables, incidents and ratings printed at the end."""
    return [line for line in output.splitlines() if line.startswith(("│", "┃"))]


def test_in_process_the_results_and_tables_are_the_referee_s_set_for_set(tmp_path: Path) -> None:
    file = tournament(tmp_path, rounds=2)
    there = play(file, tmp_path / "there")
    assert there.returncode == 0, there.stdout + there.stderr
    seeded(file, tmp_path / "here", secret_of(tmp_path / "there"))
    here = play(file, tmp_path / "here", "--in-process")
    assert here.returncode == 0, here.stdout + here.stderr
    played = results(tmp_path / "here")
    assert len(played) == 2 * 2 * (2 * 2 + 2)  # rounds, seats, and each round's spoil_five and chinese_ten
    assert played == results(tmp_path / "there")
    assert any(row[-1] is not None for row in played)  # chinese_ten's luck, measured alike
    assert tables(here.stdout) == tables(there.stdout) and tables(here.stdout)
    assert "no journals, nothing for croupier export" in here.stdout


def test_the_export_of_an_in_process_run_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tournament(tmp_path)
    done = play(file, tmp_path / "data", "--in-process")
    assert done.returncode == 0, done.stdout + done.stderr
    capsys.readouterr()
    assert main(["export", "small", "--data", str(tmp_path / "data")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "small run 1 was played in-process, without a referee: it has no journals, which croupier verify "
        "replays every result from; its deals alone: "
        f"croupier verify {tmp_path / 'data' / 'reveals' / 'small-1.json'}"
    ]


def counts(data: Path) -> tuple[list[int], int, int, int]:
    """Each set's done matches, the result rows, the matches still started and those voided."""
    with contextlib.closing(sqlite3.connect(data / "results.db")) as db:
        sets = [
            count
            for (count,) in db.execute(
                "SELECT count(*) FROM matches WHERE status = 'done' GROUP BY game, round, grp, deal"
            )
        ]
        rows = db.execute("SELECT count(*) FROM results").fetchone()[0]
        started = db.execute("SELECT count(*) FROM matches WHERE status = 'started'").fetchone()[0]
        voided = db.execute("SELECT count(*) FROM voided").fetchone()[0]
    return sets, rows, started, voided


def wait_for_matches(data: Path, matches: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(sqlite3.OperationalError):  # not there yet
            if (data / "results.db").exists() and sum(counts(data)[0]) >= matches:
                return
        time.sleep(0.02)
    raise AssertionError(f"no {matches} matches before the run ended: {process.communicate()}")


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_an_interrupted_run_goes_on_and_counts_every_set_once(tmp_path: Path, how: signal.Signals) -> None:
    file = tournament(tmp_path, rounds=3, slow=0.002)
    whole = play(file, tmp_path / "whole", "--in-process")
    assert whole.returncode == 0, whole.stdout + whole.stderr
    data = tmp_path / "parts"
    seeded(file, data, secret_of(tmp_path / "whole"))
    first = subprocess.Popen(
        croupier("tournament", str(file), "--data", str(data), "--plain", "--in-process"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_matches(data, 4, first)
    first.send_signal(how)
    out, err = first.communicate(timeout=WAIT)
    sets, _, started, _ = counts(data)
    assert sum(sets) < 3 * 3 * 2, "interrupted before its end"
    if how == signal.SIGINT:
        assert first.returncode == 130, out + err
        assert "stopped early; run the same command again to play the rest" in out
        assert started == 0  # the sets in play finished first
    again = play(file, data, "--in-process")
    assert again.returncode == 0, again.stdout + again.stderr
    sets, rows, started, voided = counts(data)
    assert sets == [2] * (3 * 3) and rows == 2 * sum(sets) and started == 0  # every set whole, once
    if how == signal.SIGINT:  # the same deals, each played once: the uninterrupted run's results
        assert results(data) == results(tmp_path / "whole")
    else:  # the sets in play when it was killed were dealt again, their first deal set aside
        assert voided > 0


def test_a_set_s_matches_are_done_together_or_not_at_all(tmp_path: Path) -> None:
    """A run that stops while it writes a set's results (here the write of its second match fails)
    leaves none of the set done: its results are never counted in part."""
    with Store(tmp_path / "results.db") as store:
        run = store.open_tournament("t", "fp", {}, again=False, secret=bytes(32))
        store.schedule(
            run.id, duplicate_set("spoil_five", ["a", "b"], 0, 0, 0, seed=1, secret=bytes(32)).matches
        )
        first, second = sorted(store.matches(run.id).values(), key=lambda record: record.key.rotation)
        whole = [SeatResult(0, "a", 5, 1), SeatResult(1, "b", 0, 2)]
        broken = [SeatResult(0, "b", 5, 1), SeatResult(0, "a", 0, 2)]  # one seat twice: the write fails
        with pytest.raises(sqlite3.IntegrityError):
            store.record_set([(first.id, whole), (second.id, broken)])
        assert {record.status for record in store.matches(run.id).values()} == {"scheduled"}
        assert store.finished(run.id) == []


FAILING = """from croupier.clients.sdk import Bot


class Failing(Bot):
    def choose(self, view, legal):
        raise RuntimeError("a bad day")
"""


def test_the_file_s_clock_forfeits_a_failing_bot_as_the_referee_s_would(tmp_path: Path) -> None:
    """A bot whose choose raises times out at every decision: forfeited after the referee's 3
    timeouts, or after the tournament file's max_timeouts."""
    (tmp_path / "failing.py").write_text(FAILING)
    specs = {"f": str(tmp_path / "failing.py"), "h": "heuristic"}

    def played(clock: dict[str, int] | None) -> tuple[tuple[int, ...], tuple[str, ...]]:
        (match,) = play_set(SetJob("spoil_five", {"players": 2}, ((1, 5, ("f", "h")),), specs, clock=clock))
        return match.timeouts, match.forfeited

    assert played(None) == ((3, 0), ("timeouts", ""))
    assert played({"decision_ms": 50, "max_timeouts": 1}) == ((1, 0), ("timeouts", ""))


REFUSED = {
    "command": ('[[bots]]\nname = "c"\ncommand = "./mybot --fast"\n', ()),
    "image": ('[[bots]]\nname = "c"\nimage = "mybot:1"\n', ()),
    "pace": ('[[bots]]\nname = "c"\ncommand = "croupier bot --pace-ms 100"\n', ()),
    "isolation": ('isolation = "required"\n', ()),
    "server": ("", ("--server", "127.0.0.1:1")),
    "external": ('deals = "fresh"\n[[bots]]\nname = "c"\nexternal = true\n', ()),
    "registered": ('deals = "fresh"\n[[bots]]\nname = "c"\nregistered = true\n', ()),
}
REFUSALS = {
    "command": "croupier tournament --in-process: bot c: './mybot --fast' is a command, "
    "not a Python SDK bot: give croupier bot --strategy SPEC or python FILE.py, or play it over the referee",
    "image": "croupier tournament --in-process: bot c runs in a container image: "
    "in-process play seats Python SDK bots only",
    "pace": "croupier tournament --in-process: bot c: --pace-ms holds its moves back for watchers; "
    "in-process, drop it",
    "isolation": 'croupier tournament --in-process: TOML: isolation = "required", but in-process play '
    "runs the bots' code unjailed in its worker processes: play it over the referee",
    "server": "croupier tournament --in-process: --server plays on a referee: in-process play has no referee",
    "external": "croupier tournament --in-process: bot c connects by itself: "
    "in-process play seats Python SDK bots only",
    "registered": "croupier tournament --in-process: bot c is registered on a referee: in-process play seats "
    "Python SDK bots only",
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_in_process_play_cannot_honour_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    added, options = REFUSED[case]
    top, marker, bots = added.partition("[[bots]]")
    bots = marker + bots
    file = tmp_path / "t.toml"
    file.write_text(
        'name = "t"\n' + top + '[[games]]\ngame = "spoil_five"\nseats = 2\n'
        '[[bots]]\nname = "a"\ncommand = "croupier bot"\n[[bots]]\nname = "b"\ncommand = "croupier bot"\n'
        + bots
    )
    data = tmp_path / "data"
    assert main(["tournament", str(file), "--in-process", "--data", str(data), *options]) == 2
    assert capsys.readouterr().err.splitlines() == [REFUSALS[case].replace("TOML", str(file))]
    assert not data.exists()  # nothing was begun


def test_a_ladder_s_file_and_cluster_without_in_process_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ladder = Path(__file__).resolve().parents[3] / "tournaments" / "ladder.toml"
    assert main(["tournament", str(ladder), "--in-process", "--data", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"croupier tournament --in-process: {ladder} is a ladder's file (croupier ladder): its bots register "
        "on a referee and play as they connect; --in-process plays a tournament file's Python bots"
    ]
    assert main(["tournament", str(ladder), "--cluster", "tcp://127.0.0.1:1", "--data", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "croupier tournament: --cluster plays Python bots on a Dask cluster: give --in-process too"
    ]
