"""The decision metrics, counted in plain numbers and read at scrape time, show on /metrics exactly as
prometheus_client's own labelled Counter and Histogram fed the same decisions would."""

from __future__ import annotations

import random
import re

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from croupier.server.metrics import DECISIONS_HELP, THINK_BUCKETS, THINK_HELP, Metrics

CREATED = re.compile(r"^(\w+_created\{.*\}) .*$", re.MULTILINE)


def scraped(registry: CollectorRegistry) -> str:
    """The exposition, creation times left out (each series has its own)."""
    return CREATED.sub(r"\1 <time>", generate_latest(registry).decode())


def reference(games: list[str]) -> tuple[CollectorRegistry, Counter, Histogram]:
    registry = CollectorRegistry()
    decisions = Counter("croupier_decisions", DECISIONS_HELP, ["game"], registry=registry)
    seconds = Histogram(
        "croupier_decision_seconds", THINK_HELP, ["game"], buckets=THINK_BUCKETS, registry=registry
    )
    for game in games:
        decisions.labels(game)
        seconds.labels(game)
    return registry, decisions, seconds


def decision_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "croupier_decision" in line]


def test_decisions_and_think_times_scrape_as_a_prometheus_counter_and_histogram_would() -> None:
    games = ["chinese_ten", "pair_battle", "spoil_five"]
    ours = Metrics(games)
    registry, decisions, seconds = reference(games)
    chooser = random.Random(21)
    thinks = [0.0, 1e-9, *THINK_BUCKETS, *(b * 1.000001 for b in THINK_BUCKETS), 31.0, 1e6]
    thinks += [chooser.expovariate(chooser.choice([1, 20, 1000])) for _ in range(2000)]
    played = {game: 0 for game in games}
    for think in thinks:
        game = chooser.choice(games[:2])  # the third stays at zero: every series is there from the start
        played[game] += 1
        ours.game(game).decisions.add(think)
        decisions.labels(game).inc()
        seconds.labels(game).observe(think)
    got, expected = decision_lines(scraped(ours.registry)), decision_lines(scraped(registry))
    assert got == expected
    for game, count in played.items():
        assert f'croupier_decisions_total{{game="{game}"}} {float(count)}' in got
        assert f'croupier_decision_seconds_bucket{{game="{game}",le="+Inf"}} {float(count)}' in got


def test_the_other_series_are_there_beside_them() -> None:
    ours = Metrics(["chinese_ten"])
    ours.game("chinese_ten").refused.inc()
    names = {line.split("{")[0] for line in scraped(ours.registry).splitlines() if line[:1] != "#"}
    assert names == {
        "croupier_active_matches",
        "croupier_decisions_total",
        "croupier_decisions_created",
        "croupier_decision_seconds_bucket",
        "croupier_decision_seconds_count",
        "croupier_decision_seconds_sum",
        "croupier_decision_seconds_created",
        "croupier_timeouts_total",
        "croupier_timeouts_created",
        "croupier_refused_actions_total",
        "croupier_refused_actions_created",
        "croupier_matches_finished_total",
        "croupier_matches_finished_created",
    }
