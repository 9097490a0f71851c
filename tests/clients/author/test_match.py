"""``croupier match``: a bundled bot, a Python bot and a shell-command bot play on an embedded
referee; what the author sees at the end, and the one line of each mistake."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from pathlib import Path

from croupier.clients.author.match_run import bot_names, silent_bots
from croupier.clients.results.schedule import MatchKey
from croupier.clients.results.store import FinishedMatch, MatchRecord, SeatResult
from croupier.server.clocks import Clocks
from croupier.server.journal import Act, Header, JournalWriter, Seated, Timeout
from tests.clients.terminal import croupier
from tests.e2e.test_wheel import readme_bot

WAIT = 120


def match(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        croupier("match", *args, "--data", str(tmp_path / "data"), "--plain"),
        cwd=tmp_path, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip


def command_lines() -> list[str]:
    """Every running process's command line."""
    lines = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            lines.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return lines


def row(table_output: str, bot: str) -> list[str]:
    """A bot's row of a printed table, cell by cell."""
    line = next(line for line in table_output.splitlines() if re.match(rf"│ {re.escape(bot)} +│", line))
    return [cell.strip() for cell in line.strip("│").split("│")]


def test_bundled_bots_play_duplicate_deals_and_the_results_and_ratings_are_printed(tmp_path: Path) -> None:
    run = match(
        tmp_path, "platinum_fish", "--bot", "heuristic", "--bot", "random", "--games", "2", "--seed", "4"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "seed 4 (--seed 4 deals the same cards again)" in run.stdout
    assert "platinum_fish: results per bot" in run.stdout
    heuristic, random = row(run.stdout, "heuristic"), row(run.stdout, "random")
    assert heuristic[1] == random[1] == "4"  # two deals, each played with the seats both ways round
    assert int(heuristic[2]) + int(random[2]) >= 4  # every match has a winner (or a shared first place)
    assert "platinum_fish: ratings of this run" in run.stdout
    journals = list((tmp_path / "data" / "referee" / "matches").glob("*.jsonl"))
    assert len(journals) == 4
    assert f"journals in {tmp_path / 'data' / 'referee' / 'matches'}" in run.stdout


def test_a_python_bot_and_a_shell_command_bot_are_given_the_server_and_their_token_off_the_command_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "mybot.py").write_text(readme_bot())
    # a shell-command bot: it notes what it was given, then plays as the bundled random bot
    (tmp_path / "shellbot.sh").write_text(
        'echo "args: $*" > given.txt\n'
        'echo "env: $CROUPIER_SERVER $CROUPIER_TOKEN" >> given.txt\n'
        f'exec {sys.executable} -m croupier.clients.cli bot --strategy random "$@"\n'
    )
    marker = f"--name mybot-{tmp_path.name}"  # finds the bot's process (run by a shell) afterwards
    run = match(
        tmp_path, "spoil_five", "--bot", f"python mybot.py {marker}", "--bot", "sh shellbot.sh",
        "--bot", "heuristic", "--games", "1", "--option", "deals=2",
        "--isolation", "off",  # the shell bot writes beside itself; isolated, it could not
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert not [cmd for cmd in command_lines() if marker in cmd], "the shell's bot outlived the match"
    assert (
        row(run.stdout, "mybot")[1]
        == row(run.stdout, "shellbot")[1]
        == row(run.stdout, "heuristic")[1]
        == "6"  # one deal in the six seatings of a three-seat Williams design
    )
    args, env = (tmp_path / "given.txt").read_text().splitlines()
    # the token only in the environment: a command line is any local user's to read (ps)
    found = re.fullmatch(r"args: --server (127\.0\.0\.1:\d+)", args)
    assert found, args
    assert re.fullmatch(rf"env: {found.group(1)} bot_\S+", env), env


def test_a_misspelt_game_or_option_is_one_line_each_with_what_was_meant(tmp_path: Path) -> None:
    run = match(tmp_path, "platnum_fish", "--bot", "random", "--bot", "random")
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "croupier match: no game 'platnum_fish' (did you mean platinum_fish?); "
        "known: chinese_ten, pair_battle, platinum_fish, spoil_five"
    ]
    run = match(
        tmp_path, "chinese_ten", "--bot", "random", "--bot", "random", "--option", "targt=300",
        "--option", 'target="300"',
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "croupier match: --option targt: chinese_ten has no option 'targt' (did you mean target?); "
        "its options: players, scoring, target",
        "croupier match: --option target: a whole number is required, not '300' "
        "(write target = 300 without quotes)",
    ]
    assert not (tmp_path / "data").exists()


def test_a_bot_that_never_connects_is_one_line_with_the_end_of_its_log(tmp_path: Path) -> None:
    run = match(tmp_path, "platinum_fish", "--bot", "random", "--bot", "pythn mybot.py")
    assert run.returncode == 1
    [line] = run.stderr.splitlines()
    log = re.escape(str(tmp_path / "data" / "logs"))
    assert re.fullmatch(
        r"bot pythn never connected: it exited 3 times \(last exit code 127\); "
        r"its log ends '[^']*pythn: (command )?not found' "
        rf"\(all of it: {log}/match-platinum_fish-[\d-]+-1/pythn\.log\)",
        line,
    ), line


def test_the_command_line_is_checked_before_anything_starts(tmp_path: Path) -> None:
    run = match(tmp_path, "platinum_fish", "--bot", "random", "--bot", "random", "--option", "short_roll")
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "croupier match: --option 'short_roll': write KEY=VALUE, e.g. --option target=300"
    ]


def test_watch_shows_every_match_of_the_run_in_the_terminal_spectator(tmp_path: Path) -> None:
    args = ("chinese_ten", "--bot", "heuristic", "--bot", "random", "--games", "1", "--option", "target=100")
    first = match(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    watched = match(tmp_path, *args, "--watch")  # the referee keeps the first run's matches: not shown
    assert watched.returncode == 0, watched.stderr
    ends = re.findall(r"match (\S+) is finished", watched.stdout)
    assert len(ends) == 2 and watched.stdout.count("the match is over: every hand shown") == 2
    assert "chinese_ten: results per bot" in watched.stdout
    assert "watch it in a browser: http://127.0.0.1:" in watched.stdout, "and the web viewer beside it"


def test_a_bot_is_named_after_its_program_its_strategy_or_its_folder(tmp_path: Path) -> None:
    specs = {
        "python mybot.py": "mybot",
        "FOO=1 .venv/bin/python bots/mybot.py --fast": "mybot",
        "croupier bot --strategy random": "random",
        "croupier bot --strategy=mybots.strong:StrongBot": "StrongBot",
        ".venv/bin/croupier bot": "heuristic",  # its default strategy
        "./run": "alice",  # a generic program: its folder
        "bots/bob/main.py": "bob",
        "./build/cpp-bot/croupier-bot": "cpp-bot",
        "go run .": "alice",
        "registered:carol": "carol",
    }
    (tmp_path / "alice").mkdir()
    with contextlib.chdir(tmp_path / "alice"):
        assert {spec: bot_names([spec])[0] for spec in specs} == specs
    assert bot_names(["random", "random", "registered:carol"]) == ["random-1", "random-2", "carol"]


def test_a_bot_that_never_made_a_move_of_its_own_is_named_from_the_journals(tmp_path: Path) -> None:
    header = Header("m1", "platinum_fish", {}, (Seated("a", ""), Seated("b", "")), Clocks(), "", 0)
    writer = JournalWriter(tmp_path / "m1.jsonl")
    for record in (header, Act(1.0, 0, "ask 7", 1, 0.1, 30.0), Timeout(6.0, 1, "ask 9", 2)):
        writer.write(record)
    writer.close()

    def finished(journal: Path, *bots: str) -> FinishedMatch:
        record = MatchRecord(
            1, MatchKey("platinum_fish", 1, 1, 1, 0), 1, bots, "finished", "m1", str(journal), 1
        )
        return FinishedMatch(record, tuple(SeatResult(seat, bot, 0, 1) for seat, bot in enumerate(bots)))

    assert silent_bots([finished(tmp_path / "m1.jsonl", "heuristic", "offbyone")]) == ["offbyone"]
    # a move in another match counts; a journal not on this machine tells nothing
    swapped = finished(tmp_path / "m1.jsonl", "offbyone", "heuristic")
    assert silent_bots([finished(tmp_path / "m1.jsonl", "heuristic", "offbyone"), swapped]) == []
    assert silent_bots([finished(tmp_path / "elsewhere.jsonl", "heuristic", "offbyone")]) == []
