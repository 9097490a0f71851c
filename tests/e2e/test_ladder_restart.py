"""A ladder killed (SIGKILL) in the middle of its sets and started again by the same command:
nothing finished is lost or counted twice, the sets it left are dealt again, and it goes on."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from croupier.clients.results.store import Store
from tests.clients.terminal import croupier
from tests.clients.test_first_steps import WAIT, read_until, run, serve, stop

__all__ = ["serve"]  # the fixture

LADDER = """\
name = "open"
deals = "fresh"  # three bots: a pool needs four
[clock]
decision_ms = 2000
[[games]]
game = "chinese_ten"
seats = 2
options = { target = 100 }
"""


@pytest.fixture
def bots(serve: tuple[str, Path], tmp_path: Path) -> Iterator[str]:
    """Three registered bundled bots connected to the referee with their own tokens."""
    address, _ = serve
    processes = []
    for name in ("ann", "bob", "cat"):
        registered = run("register", name, "--server", address, cwd=tmp_path)
        assert registered.returncode == 0, registered.stderr
        token = registered.stdout.strip()
        command = ["bot", "--strategy", "random", "--server", address, "--token", token, "--max-matches", "4"]
        bot = subprocess.Popen(
            croupier(*command), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        read_until(bot, "stderr", "connected to")
        processes.append(bot)
    yield address
    for bot in processes:
        stop(bot)


def wait_for_started(db: Path) -> int:
    """Once a set is over and another is in progress: how many sets are over."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        with Store(db) as store:
            runs = [t.id for t in store.tournaments(["open"])]
            over = len(store.duplicate_sets("chinese_ten", runs)) if runs else 0
            started = any(r.status == "started" for run_id in runs for r in store.matches(run_id).values())
        if over >= 1 and started:
            return over
        time.sleep(0.05)
    raise AssertionError("the ladder played no set")


def test_a_ladder_killed_mid_set_and_restarted_loses_nothing_counts_nothing_twice_and_goes_on(
    bots: str, tmp_path: Path
) -> None:
    (tmp_path / "ladder.toml").write_text(LADDER)
    command = croupier("ladder", "ladder.toml", "--server", bots, "--plain")
    first = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    db = tmp_path / "croupier-data" / "results.db"
    try:
        wait_for_started(db)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    with Store(db) as store:
        (epoch,) = store.tournaments(["open"])
        before = {r.key: r for r in store.matches(epoch.id).values()}
        counted = store.duplicate_sets("chinese_ten", [epoch.id])
    left = [r for r in before.values() if r.status == "started"]
    assert left  # killed with a set in progress
    again = subprocess.run(
        [*command, "--sets", "3"], cwd=tmp_path, capture_output=True, text=True, timeout=3 * WAIT
    )
    assert again.returncode == 0, again.stdout + again.stderr
    with Store(db) as store:
        after = store.matches(epoch.id)
        voided = store.voided(epoch.id)
        sets = store.duplicate_sets("chinese_ten", [epoch.id])
        finished = store.finished(epoch.id)
    # what was done before the kill is done still, with the same result, once (fresh deals: every
    # match's deal is its own, so a done match of the set left in progress keeps its result)
    for key, record in before.items():
        if record.status == "done":
            assert after[key].status == "done" and after[key].seed == record.seed
    assert all(rated in sets for rated in counted)
    # the matches left in progress: voided, dealt again on a new deal, played to the end
    assert {record.id for record, _ in voided} >= {r.id for r in left}
    for record in left:
        assert after[record.key].redeal == 1 and after[record.key].seed != record.seed
        assert after[record.key].status == "done"
    # the restarted ladder played its three sets; every match has one result per seat
    assert len(sets) >= len(counted) + 3
    assert all(len(match.results) == 2 for match in finished)
    assert len({match.record.referee_match_id for match in finished}) == len(finished)
    ratings = run("ratings", "--ladder", "open", "--samples", "50", cwd=tmp_path)
    assert ratings.returncode == 0 and "ann@1" in ratings.stdout, ratings.stdout + ratings.stderr
    assert f"voided matches: {len(voided)} (an arena fault" in ratings.stdout  # what the ladder lost, said
