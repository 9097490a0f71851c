"""``SprtPlan``: a luck-corrected test resumed reads the sets it finished before as it read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from croupier.clients.author.sprt_plan import SprtPlan
from croupier.clients.author.sprt_run import _settings
from croupier.clients.results.luck import default_evaluator
from croupier.clients.results.sprt import Sprt
from croupier.clients.results.store import SeatResult, Store
from croupier.clients.tournament.config import parse

SECRET = bytes(32)


def _plan(corrected: bool) -> SprtPlan:
    names = ["new", "old"]
    config = parse(_settings("chinese_ten", names, ["heuristic", "random"], {"target": 100}, 1, 100, True))
    evaluator = default_evaluator("chinese_ten") if corrected else None
    return SprtPlan(Sprt(elo0=0, elo1=10), config, "new", "old", 50, SECRET, evaluator)


@pytest.mark.parametrize("corrected", [True, False])
def test_a_finished_set_found_on_resuming_is_read_less_the_luck_kept_with_its_results(
    tmp_path: Path, corrected: bool
) -> None:
    plan = _plan(corrected)
    duplicate = plan.plan(0)
    assert duplicate is not None
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(tournament.id, duplicate.matches)
        for record, luck in zip(store.matches(tournament.id).values(), (0.25, -0.125), strict=True):
            new = record.seats.index("new")  # NEW wins both: 1 point a match, less its luck
            store.record_result(
                record.id,
                [
                    SeatResult(seat, bot, 0, 1 if seat == new else 2, luck=luck if seat == new else -luck)
                    for seat, bot in enumerate(record.seats)
                ],
                None,
            )
        finished = store.finished(tournament.id)
    resumed = _plan(corrected)
    resumed.set_over(0, finished, replayed=True)
    assert resumed.scores[0] == pytest.approx(1.0 - (0.25 - 0.125) / 2 if corrected else 1.0)
