"""``croupier check-bot``: the Python SDK's bundled bots pass every check, and for each check a bot with
one deliberate flaw (tests/clients/broken_bot.py) fails that check, by name, saying what went wrong.
The Node.js, C++ and Go bots pass it in their own tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.clients.check_bot import CHECKS
from tests.clients.broken_bot import FLAWS
from tests.clients.foreign import REPO, check_bot, passes_check_bot
from tests.server.botclient import WAIT

BROKEN = [sys.executable, str(Path(__file__).with_name("broken_bot.py"))]
CHECK_BOT = [sys.executable, "-m", "croupier.clients.cli", "check-bot"]

# What the table says of each flaw: what a bot author reads to find the mistake.
SAYS = {
    "hello": "Hello.protocol_version was 2, the referee speaks 1 (the referee ended the stream: "
    "FAILED_PRECONDITION",
    "several-matches": "the bot's seat was forfeited (timeouts): decision",
    "refused-move": "and the bot sent no other move for it: the decision stays open after a refusal",
    "replaced-decision": "the bot never answered",
    "dropped-stream": 'the bot exited with code 0 ("the stream is over, and so is this bot") while check-bot '
    "waited for new stream after the referee dropped the first",
    "resumed-match": "after MatchStarted(resumed): in the chinese_ten match the bot's seat was forfeited "
    "(timeouts)",
    "forfeit-and-end": "after SeatForfeited (timeouts): the bot exited with code 1 "
    '("RuntimeError: unexpected message: seat_forfeited")',
    "clock": "timed out: its deadline_ms was",
    "every-game": "the bot's seat was forfeited (timeouts)",
}


def test_every_check_has_a_broken_bot_and_what_it_must_say() -> None:
    assert list(FLAWS) == list(CHECKS) == list(SAYS)


@pytest.mark.parametrize("strategy", ["random", "heuristic"])
def test_the_sdk_bots_pass_every_check(strategy: str) -> None:
    passes_check_bot([sys.executable, "-m", "croupier.clients.cli", "bot", "--strategy", strategy])


@pytest.mark.parametrize("flaw", list(FLAWS))
def test_a_bot_with_one_flaw_fails_that_check_by_name_saying_what_went_wrong(flaw: str) -> None:
    code, rows = check_bot([*BROKEN, flaw], flaw)
    assert code == 1
    assert list(rows) == [flaw]
    assert rows[flaw].startswith("FAIL"), rows
    assert SAYS[flaw] in rows[flaw], rows


def test_without_a_command_it_says_how_to_give_one() -> None:
    result = subprocess.run(CHECK_BOT, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 2
    assert "give the bot's command after --" in result.stderr


def test_a_command_that_cannot_run_fails_every_check_saying_why() -> None:
    code, rows = check_bot(["./no-such-bot"], "hello")
    assert code == 1
    assert rows["hello"].startswith("FAIL") and "cannot run the bot" in rows["hello"]
    assert "No such file" in rows["hello"]


def test_a_bot_the_referee_never_welcomes_fails_every_check_saying_why() -> None:
    code, rows = check_bot([*BROKEN, "hello"])
    assert code == 1 and list(rows) == list(CHECKS)
    assert all(row.startswith("FAIL") for row in rows.values()), rows
    refused = (
        "the referee ended its stream (FAILED_PRECONDITION: this referee speaks protocol version 1, not 2)"
    )
    assert all(refused in row for name, row in rows.items() if name != "hello"), rows


def test_sigterm_stops_the_checks_and_the_bot_with_them(tmp_path: Path) -> None:
    pid_file = tmp_path / "bot.pid"
    bot = f"echo $$ > {pid_file}; exec {sys.executable} -m croupier.clients.cli bot --strategy random"
    checking = subprocess.Popen(
        [*CHECK_BOT, "--only", "every-game", "--", "sh", "-c", bot],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline and checking.poll() is None, "the bot never started"
            time.sleep(0.05)
        checking.send_signal(signal.SIGTERM)
        _, errors = checking.communicate(timeout=WAIT)
    finally:
        if checking.poll() is None:
            checking.kill()
    assert checking.returncode == 130
    assert "interrupted (the bot was stopped)" in errors
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
