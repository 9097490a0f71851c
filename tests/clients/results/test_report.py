"""The tables and progress lines a user reads."""

from __future__ import annotations

import io

from rich.console import Console

from croupier.clients.results.ratings import rate
from croupier.clients.results.report import crosstable, incidents_table, ratings_table
from croupier.clients.results.schedule import MatchKey
from croupier.clients.results.store import FinishedMatch, MatchRecord, SeatResult
from croupier.clients.tournament.display import PlainDisplay


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=120, color_system=None), out


def finished(number: int, *results: SeatResult) -> FinishedMatch:
    record = MatchRecord(
        number, MatchKey("g", 0, 0, 0, number), 1, tuple(r.bot for r in results), "done", None, None, 1
    )
    return FinishedMatch(record, results)


MATCHES = [
    finished(0, SeatResult(0, "ann", 10, 1), SeatResult(1, "bob", 5, 2), SeatResult(2, "cat", 0, 3)),
    finished(1, SeatResult(0, "bob", 10, 1), SeatResult(1, "cat", 10, 1), SeatResult(2, "ann", 0, 3, 2, 1)),
    finished(
        2,
        SeatResult(0, "cat", 0, 3, 3, 0, True, "timeouts"),
        SeatResult(1, "ann", 9, 1),
        SeatResult(2, "bob", 9, 1),
    ),
]


def test_the_crosstable_shows_pairwise_points_out_of_results() -> None:
    out_console, out = console()
    out_console.print(crosstable("g", MATCHES))
    lines = {
        line.split()[1]: line.split()[2:]
        for line in out.getvalue().splitlines()
        if line[:3] in ("│ a", "│ b", "│ c")
    }
    # ann: beat bob, lost to bob, drew bob = 1.5/3; beat cat, lost to cat, beat cat = 2/3
    assert lines["ann"] == ["│", "│", "1.5/3", "│", "2/3", "│", "3.5/6", "│"]
    assert lines["bob"] == ["│", "1.5/3", "│", "│", "2.5/3", "│", "4/6", "│"]
    assert lines["cat"] == ["│", "1/3", "│", "0.5/3", "│", "│", "1.5/6", "│"]


def test_the_ratings_table_lists_bots_best_first_with_interval_and_los() -> None:
    out_console, out = console()
    out_console.print(ratings_table("g", rate([[m.places] for m in MATCHES], samples=50)))
    text = out.getvalue()
    rows = [line for line in text.splitlines() if line.startswith("│ ")]
    assert [row.split("│")[2].strip() for row in rows] == ["bob", "ann", "cat"]
    assert "95% interval" in text and "LOS next" in text


def test_an_interval_the_bootstrap_cannot_give_is_explained_in_words() -> None:
    out_console, out = console()
    out_console.print(ratings_table("g", rate([[m.places for m in MATCHES]], samples=50)))  # one set
    text = " ".join(out.getvalue().split())
    assert "n/a" in text
    assert "n/a: no interval, the results hold fewer than two sets to resample (or --samples 0)" in text


def test_the_incidents_table_counts_timeouts_refusals_and_forfeits() -> None:
    out_console, out = console()
    out_console.print(incidents_table(MATCHES))
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:6]]
        for line in out.getvalue().splitlines()
        if line.startswith("│ ")
    }
    assert rows == {"ann": ["3", "2", "1", "0"], "bob": ["3", "0", "0", "0"], "cat": ["3", "3", "0", "1"]}


def test_plain_progress_prints_a_line_at_each_tenth_with_the_leaders() -> None:
    out_console, out = console()
    display = PlainDisplay(out_console)
    display.begin("demo (run 1)", total=10, done=0)
    for match in MATCHES:
        display.match_done("g", match.places)
    lines = out.getvalue().splitlines()
    assert lines[0] == "demo (run 1): 0/10 matches (0%)"
    assert lines[-1].startswith("demo (run 1): 3/10 matches (30%), ")
    assert "leading: g: " in lines[-1]
    assert len(lines) == 4


def test_plain_progress_counts_earlier_matches_in_standings_but_not_in_progress() -> None:
    out_console, out = console()
    display = PlainDisplay(out_console)
    display.match_done("g", MATCHES[0].places, replayed=True)
    display.begin("demo (run 1)", total=10, done=1)
    (ann, *_) = rate([[MATCHES[0].places]], samples=20)  # the final table's leader, and its rating
    assert out.getvalue().splitlines() == [f"demo (run 1): 1/10 matches (10%), leading: g: ann {ann.elo:.0f}"]
