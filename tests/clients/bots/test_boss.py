"""The bosses (clients/bots/boss.py): worlds built from a view alone agree with it, decisions read
nothing but the view (a re-deal of what the seat cannot see changes none of them, where a search
over the referee's own state would), every level plays every variant, and the bundled bot passes
``croupier check-bot``."""

from __future__ import annotations

import dataclasses
import random
import sys
from typing import Any

import pytest

from croupier.clients.author.inprocess import play
from croupier.clients.bots import boss, strategy
from croupier.clients.bots.boss import LEVELS, Level, decide, improvement
from croupier.clients.bots.worlds import searchable, voids, world
from croupier.clients.web.seat import HumanSeat, Refused
from croupier.engine.cards import Card, Rank
from croupier.engine.core import GameSpec
from croupier.engine.games import GAMES
from croupier.engine.games.spoil_five import suit_of
from croupier.engine.rng import Rng
from tests.clients.foreign import passes_check_bot
from tests.engine.conformance import Playout

CASES = [
    pytest.param(spec, options, id=f"{name}-{i}")
    for name, spec in GAMES.items()
    for i, options in enumerate(spec.test_variants)
]
QUICK = LEVELS["boss-1"].scaled(0.1)
"""A budget small enough to search every decision of a test's playouts."""


def moments(spec: GameSpec[Any], options: Any, seed: int, every: int = 1) -> Any:
    """(state, seat, legal) at every ``every``-th decision of a random playout."""
    playout = Playout(spec, options, seed)
    chooser = random.Random(seed)
    step = 0
    while not playout.state.is_over():
        for seat in sorted(playout.state.to_act()):
            legal = playout.state.legal_actions(seat)
            if step % every == 0:
                yield playout.state, seat, legal
            step += 1
        if playout.step(chooser) is None:
            return


@pytest.mark.parametrize(("spec", "options"), CASES)
def test_a_world_built_from_a_view_shows_that_view_and_deals_the_rest(
    spec: GameSpec[Any], options: Any
) -> None:
    rng, differed = Rng(7), 0
    for seed in range(2):
        for state, seat, legal in moments(spec, options, seed):
            view = state.view(seat)
            drawn = world(spec.name, view, options, legal, rng)
            assert drawn.view(seat) == view, f"{spec.name} seat {seat}: the world shows another view"
            assert drawn.legal_actions(seat) == legal, f"{spec.name} seat {seat}: other legal actions"
            assert drawn.public_view() == state.public_view(), f"{spec.name}: the world's public view differs"
            differed += drawn.full_view() != state.full_view()
    assert differed, "no world ever differed from the real deal: the worlds would prove nothing"


def broken_voids(infer: bool) -> tuple[int, int]:
    """(worlds drawn where a seat has shown a void, those that deal it a card of that suit anyway)."""
    spec = GAMES["spoil_five"]
    drawn = broken = 0
    for players in (2, 4):
        options = spec.options({"players": players})
        for state, seat, legal in moments(spec, options, players):
            view = state.view(seat)
            shown = {s: suits for s, suits in voids(view).items() if s != seat}
            if not shown:
                continue
            found = world("spoil_five", view, options, legal, Rng(len(legal)), infer)
            assert found.view(seat) == view and found.legal_actions(seat) == legal
            trump = view.trumps
            drawn += 1
            broken += any(
                suit_of(card, trump, view.ranking) in suits
                and card not in (view.turn_up, Card(Rank.ACE, trump))  # a known trump stays where it is
                for s, suits in shown.items()
                for card in found.hands[s]
            )
    return drawn, broken


def test_a_spoil_five_world_deals_no_seat_a_suit_its_plays_showed_it_lacks() -> None:
    drawn, broken = broken_voids(infer=True)
    assert drawn > 10 and broken == 0
    assert broken_voids(infer=False)[1] > 0, (
        "the engine's plain re-deal breaks voids: the check proves something"
    )


def decisions(spec: GameSpec[Any], options: Any, seed: int) -> list[tuple[Any, int, list[Any]]]:
    """Searched decisions (more than one legal action) of a random playout, a few per match."""
    return [
        (state.copy(), seat, legal)
        for state, seat, legal in moments(spec, options, seed, every=3)
        if len(legal) > 1 and searchable(spec.name, state.view(seat))
    ][:6]


def redealt_decisions_differ(spec: GameSpec[Any], options: Any, level: Level = QUICK) -> int:
    """How many decisions changed when the seat's unseen cards were re-dealt (must be none)."""
    changed = 0
    for seed in range(2):
        for state, seat, legal in decisions(spec, options, seed):
            twin = state.resample_hidden(seat, Rng(seed + 100))
            mine = decide(spec.name, state.view(seat), legal, options, level, seed=3)
            theirs = decide(spec.name, twin.view(seat), twin.legal_actions(seat), options, level, seed=3)
            changed += mine != theirs
    return changed


@pytest.mark.parametrize(("spec", "options"), CASES)
def test_redealing_what_the_seat_cannot_see_changes_no_decision(spec: GameSpec[Any], options: Any) -> None:
    assert redealt_decisions_differ(spec, options) == 0


SEARCHED = ["chinese_ten", "platinum_fish", "spoil_five"]
"""Games where the peeking boss below decides otherwise at boss-1's full budget (in Pair Battle's
lockstep the dealt cards changed none of its choices: a check there would prove nothing)."""


def searched_variant(spec: GameSpec[Any]) -> Any:
    return next(options for options in spec.test_variants if decisions(spec, options, 0))


@pytest.mark.parametrize("name", SEARCHED)
def test_boss_1_at_its_full_budget_reads_the_view_alone(name: str) -> None:
    """At a fraction of its budget the heuristic's choice mostly stands; at its own the search decides."""
    spec = GAMES[name]
    changed = redealt_decisions_differ(spec, searched_variant(spec), LEVELS["boss-1"])
    assert changed == 0, f"{changed} decisions changed with what the seat cannot see"


@pytest.mark.parametrize("variant", [{"infer": True}, {"random_rollouts": True}])
def test_the_measured_variants_read_the_view_alone_too(variant: dict[str, bool]) -> None:
    spec = GAMES["spoil_five"]
    level = dataclasses.replace(LEVELS["boss-1"], **variant)  # enough worlds to overrule the heuristic
    changed = redealt_decisions_differ(spec, spec.options({"players": 3}), level)
    assert changed == 0, f"{changed} decisions changed with what the seat cannot see"


@pytest.mark.parametrize(
    ("name", "level"), [("chinese_ten", QUICK), *((name, LEVELS["boss-1"]) for name in SEARCHED)]
)
def test_a_search_over_the_referees_state_fails_that_test(
    name: str, level: Level, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same check catches a boss that peeks: worlds copied from the state itself, not the view."""
    spec = GAMES[name]
    real: dict[str, Any] = {}

    def peeking(game: str, view: Any, options: Any, legal: list[Any], rng: Rng, infer: bool) -> Any:
        return real["state"].copy()

    monkeypatch.setattr(boss, "world", peeking)
    options = searched_variant(spec)
    changed = 0
    for seed in range(2):
        for state, seat, legal in decisions(spec, options, seed):
            twin = state.resample_hidden(seat, Rng(seed + 100))
            real["state"] = state
            mine = decide(spec.name, state.view(seat), legal, options, level, 3)
            real["state"] = twin
            theirs = decide(spec.name, twin.view(seat), twin.legal_actions(seat), options, level, 3)
            changed += mine != theirs
    assert changed > 0, "a boss that reads the dealt cards decided alike: the check proves nothing"


def test_the_same_view_and_seed_give_the_same_choice_and_another_seed_may_not() -> None:
    spec = GAMES["spoil_five"]
    options = spec.options({"players": 3})
    found = decisions(spec, options, 0)
    assert found
    for state, seat, legal in found:
        view = state.view(seat)
        assert decide(spec.name, view, legal, options, QUICK, 1) == decide(
            spec.name, view, legal, options, QUICK, 1
        )


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize(("spec", "options"), CASES)
def test_every_level_plays_every_variant_in_process(
    level: str, spec: GameSpec[Any], options: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROUPIER_BOSS_BUDGET", "0.02")
    heuristic = strategy("heuristic")
    factories = [strategy(level), *[heuristic] * (options.players - 1)]
    played = play(spec, options, seed=5, factories=factories)
    assert not played.forfeited[0] and played.refusals[0] == 0 and played.timeouts[0] == 0, played


def test_a_budget_factor_that_is_not_one_is_refused_in_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROUPIER_BOSS_BUDGET", "lots")
    with pytest.raises(ValueError, match="CROUPIER_BOSS_BUDGET is a factor on the bosses' playouts"):
        strategy("boss-1")


@pytest.mark.parametrize("level", list(LEVELS))
def test_each_level_passes_check_bot(level: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROUPIER_BOSS_BUDGET", "0.05")  # the protocol is checked, not the strength
    passes_check_bot([sys.executable, "-m", "croupier.clients.cli", "bot", "--strategy", level])


def test_the_search_overrules_the_heuristic_only_where_the_worlds_agree() -> None:
    heuristic, steady, lucky = [1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0], [12.0, -6.0, 3.0, 4.0]
    assert improvement([heuristic, lucky], default=0) == 0, "a lead in one world only is noise"
    assert improvement([heuristic, lucky, steady], default=0) == 2, "a lead in every world is not"
    assert improvement([lucky, heuristic], default=1) == 1


async def test_a_hint_at_a_forks_seat_is_boss_1s_choice_and_no_seat_that_counts_gives_one() -> None:
    spec = GAMES["spoil_five"]
    options = spec.options({"players": 3})
    state, seat, legal = next(
        (s, seat, legal) for s, seat, legal in moments(spec, options, 1) if len(legal) > 1
    )
    view = state.view(seat)
    fork = HumanSeat("127.0.0.1:1", hints=True)
    fork._match = {"game": "spoil_five", "options": options, "decision": (7, view, legal)}
    index = decide("spoil_five", view, legal, options, LEVELS["boss-1"])
    assert await fork.hint() == {"decision_id": 7, "index": index, "text": str(legal[index])}
    rated = HumanSeat("127.0.0.1:1")
    rated._match = fork._match
    with pytest.raises(Refused, match="no hints here: a hint is for a fork, never rated"):
        await rated.hint()
