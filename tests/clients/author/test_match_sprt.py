"""``croupier match ... --sprt``: every game decides, over gRPC and in-process; the verdict is
the exit code; an interrupted test goes on where it stopped, nothing lost or counted twice."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.clients.terminal import croupier

WAIT = 300
FIRST_LEGAL = '''from croupier.clients.sdk import Bot, main


class First(Bot):
    """Always the first legal action: deterministic, and weaker than the heuristic."""

    def choose(self, view, legal):
        return 0


if __name__ == "__main__":
    main(First)
'''
QUICK = {  # options that keep each game's matches short
    "chinese_ten": ["--option", "target=100"],
    "pair_battle": ["--option", "timing=lockstep"],
    "platinum_fish": ["--option", "players=3"],
    "spoil_five": ["--option", "players=3"],
}
EXIT_H1, EXIT_H0, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED = 0, 3, 4, 130


def sprt(tmp_path: Path, *args: str, data: str = "data") -> list[str]:
    return croupier("match", *args, "--data", str(tmp_path / data), "--plain")


def run(tmp_path: Path, *args: str, data: str = "data") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        sprt(tmp_path, *args, data=data), cwd=tmp_path, capture_output=True, text=True, timeout=WAIT
    )


def verdict(output: str) -> tuple[str, str]:
    """The verdict line and the estimate line the test ends with."""
    lines = output.splitlines()
    found = next(i for i, line in enumerate(lines) if re.match(r"(H[01] accepted|inconclusive)", line))
    return lines[found], lines[found + 1]


@pytest.mark.parametrize("game", sorted(QUICK))
def test_in_process_the_heuristic_is_found_better_than_random_in_every_game(
    tmp_path: Path, game: str
) -> None:
    done = run(
        tmp_path,
        game,
        "--bot",
        "heuristic",
        "--bot",
        "random",
        "--sprt",
        "elo0=0",
        "elo1=10",
        "--in-process",
        *QUICK[game],
    )
    assert done.returncode == EXIT_H1, done.stdout + done.stderr
    accepted, estimate = verdict(done.stdout)
    assert accepted.startswith("H1 accepted: heuristic is better than random by 10 Elo or more")
    assert re.match(r"Elo of heuristic over random: \+\d+\.\d \(95% interval \+\d", estimate), estimate
    assert re.search(
        r"\d+ games, \d+ sets \| LLR [+-]\d\.\d\d \(-2\.94, \+2\.94\) \| Elo .* \| set score", done.stdout
    )
    assert "croupier verify" in done.stdout
    reveal = next((tmp_path / "data" / "reveals").glob("sprt-*.json"))
    checked = subprocess.run(croupier("verify", str(reveal)), capture_output=True, text=True, timeout=WAIT)
    assert checked.returncode == 0 and "are the secret's" in checked.stdout


@pytest.mark.parametrize("game", sorted(QUICK))
def test_over_grpc_each_game_is_played_by_launched_bots_to_a_verdict_or_the_limit(
    tmp_path: Path, game: str
) -> None:
    (tmp_path / "first.py").write_text(FIRST_LEGAL)
    done = run(
        tmp_path, game, "--bot", "heuristic", "--bot", "python first.py", "--sprt", "elo0=0", "elo1=50",
        "--max-games", "60", *QUICK[game],
    )  # fmt: skip
    # a verdict either way: in real-time Pair Battle the heuristic and the first legal play can tie
    # (set scores 0.500 ± 0.006 over 20 sets), and H0 is then the right answer
    said = {EXIT_H1: "H1 accepted", EXIT_H0: "H0 accepted", EXIT_INCONCLUSIVE: "inconclusive"}
    assert done.returncode in said, done.stdout + done.stderr
    accepted, _ = verdict(done.stdout)
    assert accepted.startswith(said[done.returncode])
    journals = list((tmp_path / "data" / "referee" / "matches").glob("*.jsonl"))
    assert journals, "played on the embedded referee, a journal per match"
    with sqlite3.connect(tmp_path / "data" / "results.db") as db:
        (done_games,) = db.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()
    assert done_games == len(journals)


def test_the_exit_code_says_which_hypothesis_was_accepted_or_that_none_was(tmp_path: Path) -> None:
    base = ("pair_battle", "--option", "timing=lockstep", "--in-process", "--sprt", "elo0=0", "elo1=10")
    worse = run(tmp_path, *base, "--bot", "random", "--bot", "heuristic", data="worse")
    assert worse.returncode == EXIT_H0, worse.stdout + worse.stderr
    assert verdict(worse.stdout)[0].startswith("H0 accepted: random is not better than heuristic by 10 Elo")
    short = run(tmp_path, *base, "--bot", "random", "--bot", "random", "--max-games", "6", data="short")
    assert short.returncode == EXIT_INCONCLUSIVE, short.stdout + short.stderr
    assert verdict(short.stdout)[0] == "inconclusive: 6 games (--max-games) did not decide"


def test_the_output_states_the_test_s_games_once_its_pentanomial_and_its_speed(tmp_path: Path) -> None:
    """One count of games and sets (the test's, the live line's last), the pairs counted by points as
    fishtest prints them, the games per second; games played past the verdict said apart."""
    done = run(
        tmp_path, "chinese_ten", "--bot", "heuristic", "--bot", "random", "--sprt", "elo0=0", "elo1=10",
        "--in-process", *QUICK["chinese_ten"],
    )  # fmt: skip
    assert done.returncode == EXIT_H1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    last = re.fullmatch(
        r"(\d+) games, (\d+) sets \| LLR .* \| Ptnml\(0-2\) (\d+), (\d+), (\d+), (\d+), (\d+) \| "
        r"(\d+\.\d) games/s",
        lines[lines.index(verdict(done.stdout)[0]) - 1],
    )
    assert last, done.stdout
    games, sets, *pentanomial, speed = last.groups()
    (size,) = re.findall(r"in sets of (\d+) games", done.stdout)
    assert int(games) == int(size) * int(sets) == 2 * sum(map(int, pentanomial)) and float(speed) > 0
    after = "\n".join(lines[lines.index(last.group(0)) + 1 :])
    assert " games" not in after.replace(" more games were played", ""), after  # no other count
    with sqlite3.connect(tmp_path / "data" / "results.db") as db:
        (played,) = db.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()
    extra = f"{played - int(games)} more games were played in sets still in play at the verdict"
    assert (extra in after) == (played > int(games)), after


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--bot", "heuristic"],
            "--sprt compares two bots, the new then the old: give --bot twice, not 1 times",
        ),
        (
            ["--bot", "heuristic", "--bot", "random", "--sprt", "elo0=10", "elo1=0"],
            "elo0 (10) must be below elo1 (0)",
        ),
        (
            ["--bot", "heuristic", "--bot", "random", "--sprt", "elo=0", "elo1=5"],
            "--sprt 'elo=0': write elo0=E0 elo1=E1",
        ),
        (
            ["--bot", "heuristic", "--bot", "./mybot --fast", "--in-process"],
            "'./mybot --fast' is a command, not a Python SDK bot",
        ),
        (
            ["--bot", "heuristic", "--bot", "random", "--opponents", "random", "random"],
            "leaves 1 for --opponents",
        ),
    ],
)
def test_a_command_line_to_mend_is_told_in_one_line_and_exits_2(
    tmp_path: Path, args: list[str], says: str
) -> None:
    sprt_args = [] if "--sprt" in args else ["--sprt", "elo0=0", "elo1=10"]
    done = run(tmp_path, "chinese_ten", *args, *sprt_args)
    assert done.returncode == 2
    assert says in done.stdout + done.stderr
    assert not (tmp_path / "data" / "results.db").exists() or "--in-process" in args


def db_counts(data: Path) -> tuple[int, int, int]:
    """Done matches, result rows, and matches still started."""
    with sqlite3.connect(data / "results.db") as db:
        done = db.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()[0]
        rows = db.execute("SELECT count(*) FROM results").fetchone()[0]
        started = db.execute("SELECT count(*) FROM matches WHERE status = 'started'").fetchone()[0]
    return done, rows, started


def wait_for_games(data: Path, games: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(sqlite3.OperationalError):  # the runner is making its tables
            if (data / "results.db").exists() and db_counts(data)[0] >= games:
                return
        time.sleep(0.05)
    raise AssertionError(f"no {games} games before the test ended: {process.communicate()}")


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_an_interrupted_test_resumes_and_ends_as_an_uninterrupted_one(
    tmp_path: Path, how: signal.Signals
) -> None:
    (tmp_path / "first.py").write_text(FIRST_LEGAL)
    args = ("chinese_ten", "--option", "target=100", "--bot", "heuristic", "--bot", "first.py", "--seed", "3")
    args += ("--sprt", "elo0=0", "elo1=10", "--in-process", "--luck-correction")  # each set's luck kept
    whole = run(tmp_path, *args, data="whole")
    assert whole.returncode == EXIT_H1, whole.stdout + whole.stderr
    data = tmp_path / "parts"
    first = subprocess.Popen(
        sprt(tmp_path, *args, data="parts"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_games(data, 60, first)
    first.send_signal(how)
    out, err = first.communicate(timeout=WAIT)
    if how == signal.SIGINT:
        assert first.returncode == EXIT_INTERRUPTED, out + err
        assert "not decided yet; the same command goes on where it stopped" in out
        assert db_counts(data)[2] == 0  # the sets in progress finished first
    done_before = db_counts(data)[0]
    again = run(tmp_path, *args, data="parts")
    assert again.returncode == EXIT_H1, again.stdout + again.stderr
    assert "resuming after" in again.stdout
    if how == signal.SIGINT:  # the same deals, read in the same order: the same test
        assert verdict(again.stdout) == verdict(whole.stdout)
    else:  # the sets it was playing were dealt again: other cards, the same verdict
        assert verdict(again.stdout)[0] == verdict(whole.stdout)[0]
    done, rows, started = db_counts(data)
    assert started == 0 and rows == 3 * done and done >= done_before
    with sqlite3.connect(data / "results.db") as db:
        sets = db.execute("SELECT deal, count(*) FROM matches WHERE status = 'done' GROUP BY deal").fetchall()
        voided = db.execute("SELECT count(*) FROM voided").fetchone()[0]
    assert all(count == 6 for _, count in sets)  # every set whole: its six rotations, once each
    if how == signal.SIGKILL:
        assert voided > 0  # the sets it was playing were dealt again, their first deal set aside
    reveal = json.loads(next((data / "reveals").glob("*.json")).read_text())
    assert len(reveal["matches"]) == 6 * len(sets) + voided


def test_in_process_and_over_grpc_the_same_deals_give_the_same_test(tmp_path: Path) -> None:
    """Deterministic bots on the same deals (--seed): what in-process play hands the bots is what
    the referee sends them, so every match, and the test, comes out the same."""
    (tmp_path / "first.py").write_text(FIRST_LEGAL)
    args = ("chinese_ten", "--option", "target=50", "--bot", "heuristic", "--bot", "first.py", "--seed", "5")
    args += ("--sprt", "elo0=0", "elo1=10", "--max-games", "48")
    here = run(tmp_path, *args, "--in-process", data="here")
    there = run(tmp_path, *args, data="there")
    assert here.returncode == there.returncode, here.stdout + here.stderr + there.stdout + there.stderr
    assert verdict(here.stdout) == verdict(there.stdout)
    places = []
    for data in ("here", "there"):
        with sqlite3.connect(tmp_path / data / "results.db") as db:
            places.append(
                db.execute(
                    "SELECT m.deal, m.rotation, r.seat, r.bot, r.score, r.place FROM results r "
                    "JOIN matches m ON m.id = r.match_id ORDER BY m.deal, m.rotation, r.seat"
                ).fetchall()
            )
    assert places[0] == places[1] and places[0]


def test_in_process_chinese_ten_reads_luck_corrected_sets_when_told_to(tmp_path: Path) -> None:
    """The corrected scores are off the grid: the normal GSPRT reads them, and decides nothing
    before its 30 sets however clear the sets; without --luck-correction it is the plain test
    (another name); --luck-correction where it cannot be measured is refused in one line."""
    args = (
        "chinese_ten",
        "--bot",
        "heuristic",
        "--bot",
        "random",
        "--sprt",
        "elo0=0",
        "elo1=10",
        "--in-process",
    )
    corrected = run(tmp_path, *args, *QUICK["chinese_ten"], "--seed", "3", "--luck-correction")
    assert corrected.returncode == EXIT_H1, corrected.stdout + corrected.stderr
    assert "luck-corrected set scores, V " in corrected.stdout
    live = [line for line in corrected.stdout.splitlines() if re.match(r"\d+ games, \d+ sets \|", line)]
    found = re.search(r"(\d+) sets", live[-1])
    assert found and int(found.group(1)) >= 30
    plain = run(tmp_path, *args, *QUICK["chinese_ten"], "--seed", "3")
    assert plain.returncode == EXIT_H1, plain.stdout + plain.stderr
    assert "luck-corrected" not in plain.stdout
    refused = run(tmp_path, "spoil_five", *args[1:], "--luck-correction")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "croupier match: --luck-correction needs --in-process and one of chinese_ten"
    ]
    assert " run 1:" in plain.stdout  # a test of its own, not the corrected one resumed
