"""Could I have won? (clients/bots/review.py, ``croupier review``): a boss judges each decision of
the person's seat in a finished match from that seat's view alone, and marks where its choice
scores better, naming the step a fork replays the decision from."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from croupier.clients import cli
from croupier.clients.bots import review as reviewing
from croupier.clients.bots import spoil_five
from croupier.clients.bots.boss import LEVELS
from croupier.engine.games import GAMES
from croupier.engine.rng import Rng
from croupier.server.clocks import Clocks
from croupier.server.forks import history
from croupier.server.journal import Act, End, Header, Record, Seated, Start, encode, replayed, seed_sha256

QUICK = LEVELS["boss-1"]
"""boss-1's own budget (a deal of four decisions: about half a second): at a fraction, too few worlds
for a random move's worst error to stand above the noise."""
SEED = 11


def journal(tmp_path: Path) -> tuple[Path, list[Record]]:
    """A finished two-seat deal of Spoil Five: "you" (seat 0) plays at random, the heuristic seat 1."""
    spec = GAMES["spoil_five"]
    options = spec.options({"players": 2, "deals": 1})
    state = spec.new_game(options, Rng(SEED))
    person = random.Random(SEED)
    records: list[Record] = [
        Header("m1", "spoil_five", {"players": 2, "deals": 1}, (Seated("you", ""), Seated("heuristic", "")),
               Clocks(), seed_sha256(SEED), 0),
        Start(0.0),
    ]  # fmt: skip
    while not state.is_over():
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        index = (
            person.randrange(len(legal)) if seat == 0 else spoil_five.choose(state.view(seat), legal, options)
        )
        records.append(Act(float(len(records)), seat, str(legal[index]), len(records), 0.0, 30.0))
        state.apply(seat, legal[index])
    outcome = state.outcome()
    places = tuple(outcome.places)
    records.append(End(float(len(records)), SEED, tuple(outcome.scores), places, places, (0, 0), (0, 0), ()))
    path = tmp_path / "m1.jsonl"
    path.write_bytes(b"".join(encode(r) for r in records))
    return path, records


def test_the_review_marks_where_the_boss_would_have_played_better_at_the_step_a_fork_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, records = journal(tmp_path)
    monkeypatch.delenv("CROUPIER_BOSS_BUDGET", raising=False)
    assert cli.main(["review", str(path), "--boss", "boss-1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "m1 (spoil_five): boss-1 reviews seat 0"
    marked = [line for line in lines if line.startswith("✗")]
    decisions = list(reviewing.review(records, {0}, QUICK))
    assert len(lines) == len(decisions) + 2 and all(" seat 0 " in line for line in lines[1:-1])
    assert marked and len(marked) == sum(d.better for d in decisions), "a random player's errors are marked"
    assert lines[-1].startswith(
        f"{len(marked)} of {len(decisions)} decisions where boss-1's choice scores better"
    )
    spec = GAMES["spoil_five"]
    for decision in decisions:
        # the fork at the named step is the position the person decided in: its legal moves, its view
        kept = history(records, decision.step, "m1")
        state = replayed(spec, spec.options({"players": 2, "deals": 1}), SEED, [records[0], *kept])
        assert state.to_act() == {0} and decision.played in state.legal_actions(0)
        if decision.better:
            assert decision.choice != decision.played and decision.gain > decision.error
            assert (
                f"step {decision.step:>4}  seat 0  played {decision.played}  boss-1 plays {decision.choice}"
                in ("\n".join(marked))
            )


def test_the_boss_judges_from_the_person_s_view_and_legal_moves_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, records = journal(tmp_path)
    seen: list[tuple[Any, list[Any]]] = []
    judged = reviewing.values

    def spy(game: str, view: Any, legal: list[Any], *rest: Any) -> list[list[float]]:
        seen.append((view, legal))
        return judged(game, view, legal, *rest)

    monkeypatch.setattr(reviewing, "values", spy)
    decisions = list(reviewing.review(records, {0}, QUICK))
    spec = GAMES["spoil_five"]
    options = spec.options({"players": 2, "deals": 1})
    given = list(seen)  # what the review gave the boss (the check below asks it again)
    assert len(given) == len(decisions) > 0
    for decision, (view, legal) in zip(decisions, given, strict=True):
        state = replayed(spec, options, SEED, [records[0], *history(records, decision.step, "m1")])
        assert view == state.view(0) and legal == state.legal_actions(0)
        assert view != state.full_view(), "a view of the seat hides the other hand"
        # what the seat cannot see re-dealt: the same judgement
        twin = state.resample_hidden(0, Rng(5))
        assert twin.full_view() != state.full_view()
        again = reviewing.judge("spoil_five", twin.view(0), twin.legal_actions(0), options,
                                legal.index(decision.played), QUICK)  # fmt: skip
        assert again == (legal.index(decision.choice), decision.gain, decision.error, decision.worlds)


def test_an_unfinished_match_or_a_seat_not_named_is_refused_in_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, records = journal(tmp_path)
    unfinished = tmp_path / "m2.jsonl"
    unfinished.write_bytes(b"".join(encode(r) for r in records[:-1]))
    assert cli.main(["review", str(unfinished)]) == 1
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith("only a finished match is reviewed: its journal must end with its result")
    )
    assert cli.main(["review", str(path), "--seat", "2"]) == 1
    assert (
        capsys.readouterr().out.strip()
        == "croupier review: name a seat to review with --seat (0 to 1: you, heuristic)"
    )
