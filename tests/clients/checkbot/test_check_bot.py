"""``croupier check-bot``: the Python SDK's bundled bots pass every check, on the stream options they ask
for and on protocol 1, and for each check a bot with one deliberate flaw
(tests/clients/checkbot/broken_bot.py) fails that check, by name, saying what went wrong; so does a
bot that mishandles an option it asks for. The Node.js, C++ and Go bots pass it in their own tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.clients.checkbot.checks import RefuseFirstMove
from croupier.clients.checkbot.cli import CHECKS
from croupier.clients.checkbot.tap import Stream, Tap
from croupier.clients.checkbot.trial import OUT_OF_RANGE, Result, Trial
from croupier.v1 import bots_pb2, match_pb2
from tests.clients.checkbot.broken_bot import FLAWS, OPTION_FLAWS, SDK_FLAWS
from tests.clients.foreign import REPO, check_bot, passes_check_bot
from tests.server.botclient import WAIT

BROKEN = [sys.executable, str(Path(__file__).with_name("broken_bot.py"))]
CHECK_BOT = [sys.executable, "-m", "croupier.clients.cli", "check-bot"]

# What the table says of each flaw: what a bot author reads to find the mistake.
SAYS = {
    "hello": "Hello.protocol_version was 2, the referee speaks 1 (the referee ended the stream: "
    "FAILED_PRECONDITION",
    # the referee's Error that names the mistake is in the row whenever it came (a unit test below): a
    # bot starved of CPU on a loaded machine may time out in the match it names rightly first
    "several-matches": "timed out, while check-bot waited for end of the chinese_ten match",
    "refused-move": "and the bot sent no other move for it: the decision stays open after a refusal",
    "replaced-decision": "the bot never answered",
    "dropped-stream": 'the bot exited with code 0 ("the stream is over, and so is this bot") while check-bot '
    "waited for new stream after the referee dropped the first",
    "resumed-match": "after MatchStarted(resumed): in the chinese_ten match decision",
    "forfeit-and-end": "after SeatForfeited (timeouts): the bot exited with code 1 "
    '("RuntimeError: unexpected message: seat_forfeited")',
    "clock": "timed out: its deadline_ms was",
    "every-game": "timed out, while check-bot waited for end of the",
}


# What the hello check's row says of a bot that mishandles an option it asks for.
OPTION_SAYS = {
    "ignores-batches": "timed out (it came inside a Batch: read each of batch.messages as if it came alone)",
    "waits-for-accepted": "timed out and the bot sent no move for it (with quiet acceptance no ACCEPTED "
    "ActionResult comes",
}
SDK_BOT = [sys.executable, "-m", "croupier.clients.cli", "bot"]


def test_every_check_has_a_broken_bot_and_what_it_must_say() -> None:
    assert list(FLAWS) == list(CHECKS) == list(SAYS)
    assert list(OPTION_FLAWS) == list(OPTION_SAYS)


def test_the_sdk_bot_passes_every_check_on_the_options_it_asks_for_and_meets_a_batch() -> None:
    rows = passes_check_bot([*SDK_BOT, "--strategy", "heuristic"])
    assert "Hello (protocol 1, options: quiet acceptance, deferred updates, batches, " in rows["hello"]
    assert "then a match played, 1 Batch among them" in rows["hello"]


def test_the_sdk_bot_passes_every_check_on_protocol_1_when_check_bot_takes_its_options_out() -> None:
    rows = passes_check_bot([*SDK_BOT, "--strategy", "random"], protocol_1=True)
    options = (
        "options: none (asked for quiet acceptance, deferred updates, batches: --protocol-1 took them out)"
    )
    assert options in rows["hello"] and "Batch" not in rows["hello"]


def test_a_bot_that_asks_for_no_options_passes_every_check_on_protocol_1() -> None:
    rows = passes_check_bot([*SDK_BOT, "--strategy", "random", "--no-stream-options"])
    assert "Hello (protocol 1, options: none, " in rows["hello"] and "Batch" not in rows["hello"]


@pytest.mark.parametrize("flaw", list(OPTION_FLAWS))
def test_a_bot_that_mishandles_an_option_it_asks_for_fails_on_it_and_passes_on_protocol_1(flaw: str) -> None:
    code, rows = check_bot([*BROKEN, flaw], "hello")
    assert code == 1 and rows["hello"].startswith("FAIL"), rows
    assert OPTION_SAYS[flaw] in rows["hello"], rows
    code, rows = check_bot([*BROKEN, flaw], "hello", protocol_1=True)
    assert code == 0 and rows["hello"].startswith("pass"), rows


def test_a_refused_move_may_be_the_first_of_a_moves_message() -> None:
    first, second = (bots_pb2.Move(match_id="m", decision_id=i, index=0) for i in (7, 8))
    sent = bots_pb2.BotMessage(moves=bots_pb2.Moves(moves=[first, second]))
    tamper = RefuseFirstMove()
    changed = tamper.to_referee(Stream(1), sent)
    assert tamper.decision_id == 7
    assert [(m.decision_id, m.index) for m in changed.moves.moves] == [(7, OUT_OF_RANGE), (8, 0)]
    assert [m.index for m in sent.moves.moves] == [0, 0]  # the record keeps what the bot sent
    assert tamper.to_referee(Stream(1), sent) is sent  # only the first


def _stream(*received: bots_pb2.ServerMessage) -> Stream:
    return Stream(1, received=[(float(at), message) for at, message in enumerate(received)])


def _decision(decision_id: int, accepted: int = 0) -> bots_pb2.ServerMessage:
    asked = bots_pb2.DecisionRequest(match_id="m", decision_id=decision_id, accepted=accepted)
    return bots_pb2.ServerMessage(decision=asked)


def test_a_decision_is_accepted_by_its_action_result_or_under_quiet_acceptance_by_a_later_count() -> None:
    def settled(stream: Stream, decision_id: int) -> int | None:
        tap = Tap("127.0.0.1:1")
        trial = Trial("t", [], tap, "", None)
        tap.streams.append(stream)  # opened once the trial began
        return trial.settled("m", decision_id)

    plain = bots_pb2.ServerMessage(welcome=bots_pb2.Welcome())
    result = bots_pb2.ActionResult(match_id="m", decision_id=1, status=Result.ACCEPTED)
    assert settled(_stream(plain, _decision(1), _decision(2)), 1) is None  # protocol 1 waits for its result
    assert (
        settled(_stream(plain, _decision(1), bots_pb2.ServerMessage(action_result=result)), 1)
        == Result.ACCEPTED
    )
    quiet = bots_pb2.ServerMessage(
        welcome=bots_pb2.Welcome(options=bots_pb2.StreamOptions(quiet_acceptance=True))
    )
    counted = _stream(quiet, _decision(1, accepted=3), _decision(2, accepted=3), _decision(3, accepted=4))
    # 1 replaced by 2 (no rise by then), 2 accepted (3 counts it), 3 open
    assert [settled(counted, d) for d in (1, 2, 3)] == [None, Result.ACCEPTED, None]
    refused = bots_pb2.ActionResult(match_id="m", decision_id=1, status=Result.REFUSED)
    waiting = _stream(quiet, _decision(1, accepted=3), bots_pb2.ServerMessage(action_result=refused))
    assert settled(waiting, 1) is None
    ended = bots_pb2.MatchEnded(match_id="m", status=match_pb2.MATCH_STATUS_FINISHED)
    assert (
        settled(_stream(quiet, _decision(1), bots_pb2.ServerMessage(match_ended=ended)), 1) == Result.ACCEPTED
    )
    late = bots_pb2.ActionResult(match_id="m", decision_id=1, status=Result.TIMED_OUT)
    timed_out = _stream(
        quiet, _decision(1), bots_pb2.ServerMessage(action_result=late), _decision(2, accepted=0)
    )
    assert settled(timed_out, 1) == Result.TIMED_OUT


@pytest.mark.parametrize("flaw", list(FLAWS))
def test_a_bot_with_one_flaw_fails_that_check_by_name_saying_what_went_wrong(flaw: str) -> None:
    code, rows = check_bot([*BROKEN, flaw], flaw)
    assert code == 1
    assert list(rows) == [flaw]
    assert rows[flaw].startswith("FAIL"), rows
    assert SAYS[flaw] in rows[flaw], rows


async def test_a_timeout_s_row_gives_the_referee_s_last_error_to_the_bot_when_one_came() -> None:
    tap = Tap("127.0.0.1:1")
    trial = Trial("t", [], tap, "", None)
    trial.games["m"] = "chinese_ten"
    late = bots_pb2.ActionResult(match_id="m", decision_id=7, status=Result.TIMED_OUT)
    error = bots_pb2.Error(message="decision 7 is not open (you have no open decision)")
    received = [_decision(7), bots_pb2.ServerMessage(error=error), bots_pb2.ServerMessage(action_result=late)]
    tap.streams.append(_stream(bots_pb2.ServerMessage(welcome=bots_pb2.Welcome()), *received))
    during = ", while check-bot waited for end of the chinese_ten match"
    assert await trial._diagnosis("m", during) == (
        "in the chinese_ten match decision 7 timed out, while check-bot waited for end of the chinese_ten "
        'match; the referee\'s last Error to the bot: "decision 7 is not open (you have no open decision)"'
    )
    tap.streams[0].received.pop(2)  # no Error came: the row says the timeout alone
    assert await trial._diagnosis("m", during) == "in the chinese_ten match decision 7 timed out" + during


def test_a_bot_that_reports_its_own_error_gets_it_in_the_row_at_its_first_timeout() -> None:
    assert list(SDK_FLAWS) == ["index-out-of-range"]
    code, rows = check_bot([*BROKEN, "index-out-of-range"], "hello", "refused-move", "clock")
    assert code == 1 and list(rows) == ["hello", "refused-move", "clock"]
    error = "the bot's last error: \"IndexError: choose returned index "
    for row in rows.values():
        assert row.startswith("FAIL") and error in row and "but there are" in row, rows
        assert "Batch" not in row and "quiet acceptance" not in row, "no guess about options beside it"
    # the check that waits for a refusal stops at the first timeout, not at its 60 s wait
    assert "timed out, while check-bot waited for refusal of the bot's first move" in rows["refused-move"]


def test_without_a_command_it_says_how_to_give_one() -> None:
    result = subprocess.run(CHECK_BOT, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 2
    assert "give the bot's command after --" in result.stderr


def test_a_command_that_cannot_run_fails_every_check_saying_why() -> None:
    code, rows = check_bot(["./no-such-bot"], "hello")
    assert code == 1
    assert rows["hello"].startswith("FAIL") and "cannot run the bot" in rows["hello"]
    assert "No such file" in rows["hello"]


def test_a_python_command_runs_on_the_python_croupier_runs_on_as_croupier_match_runs_it(
    tmp_path: Path,
) -> None:
    """docs/bots.md's ``croupier check-bot -- python mybot.py``: the ``python`` a shell finds first may be
    one without croupier (here the system's, first on PATH); check-bot runs the bot with its own."""
    first = tmp_path / "bin"
    first.mkdir()
    (first / "python").symlink_to(shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3")
    assert subprocess.run([first / "python", "-c", "import croupier"], capture_output=True).returncode
    result = subprocess.run(
        [*CHECK_BOT, "--only", "hello", "--", "python", "-m", "croupier.clients.cli", "bot"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PATH": os.pathsep.join([str(first), os.environ.get("PATH", "")])},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_slow_bot_s_rows_say_it_is_too_slow_instead_of_blaming_batches_or_refusals() -> None:
    """A bot taking 1.5 s a move (the bundled bot, paced) times out in every check: each row says so,
    rather than guess at quiet acceptance or the handling of a refusal."""
    slow = ["env", "CROUPIER_PACE_MS=1500", *SDK_BOT, "--strategy", "heuristic"]
    code, rows = check_bot(slow, "hello", "refused-move")
    assert code == 1 and list(rows) == ["hello", "refused-move"], rows
    for row in rows.values():
        assert row.startswith("FAIL") and "the bot is too slow for these checks: its moves came " in row, rows
        assert "quiet acceptance" not in row and "stays open after a refusal" not in row, rows


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
        # not jailed: the bot writes its pid where the test reads it (a jail has a /tmp of its own)
        [*CHECK_BOT, "--only", "every-game", "--isolation", "off", "--", "sh", "-c", bot],
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
