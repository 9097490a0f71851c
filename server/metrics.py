"""Prometheus metrics, served on their own port (one registry per referee, so tests can run several)."""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import INF, floatToGoString

THINK_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
"""The upper bounds (seconds) of ``croupier_decision_seconds``' buckets, +Inf after them."""
_LE = [floatToGoString(bound) for bound in (*THINK_BUCKETS, INF)]  # type: ignore[no-untyped-call]
"""Their ``le`` labels, as prometheus_client writes them ("1.0", "+Inf")."""

DECISIONS_HELP = "Actions applied for bots (timeouts excluded)"
THINK_HELP = "Referee-measured time from a decision request to the bot's accepted answer"


@dataclass
class Decisions:
    """A game's decisions applied for bots and their think times, kept in plain numbers and read when
    /metrics is scraped (``croupier_decisions``, ``croupier_decision_seconds``): a decision costs an
    index and two additions, not a labelled Counter's and Histogram's three locked increments."""

    buckets: list[int] = field(default_factory=lambda: [0] * (len(THINK_BUCKETS) + 1))
    """Decisions per bucket (not cumulative), the last one above every bound."""
    seconds: float = 0.0
    created: float = field(default_factory=time.time)

    def add(self, think: float) -> None:
        self.buckets[bisect.bisect_left(THINK_BUCKETS, think)] += 1  # le: a bound counts as below it
        self.seconds += think


@dataclass(frozen=True)
class GameMetrics:
    """One game's series, looked up once (a label lookup takes a lock: not on every decision)."""

    active_matches: Gauge
    decisions: Decisions
    timeouts: Counter
    refused: Counter
    finished: Counter


class Metrics:
    def __init__(self, games: Iterable[str] = ()) -> None:
        self.registry = CollectorRegistry()
        self.active_matches = Gauge(
            "croupier_active_matches", "Matches running now", ["game"], registry=self.registry
        )
        self.timeouts = Counter(
            "croupier_timeouts",
            "Decisions the referee played because a clock ran out",
            ["game"],
            registry=self.registry,
        )
        self.refused = Counter(
            "croupier_refused_actions", "Actions refused with a reason", ["game"], registry=self.registry
        )
        self.finished = Counter(
            "croupier_matches_finished", "Matches finished", ["game"], registry=self.registry
        )
        self._http: WSGIServer | None = None
        self._games: dict[str, GameMetrics] = {}
        self.registry.register(_DecisionsCollector(self._games))
        for game in games:  # every series exists from the start, at zero
            self.game(game)

    def game(self, game: str) -> GameMetrics:
        found = self._games.get(game)
        if found is None:
            found = self._games[game] = GameMetrics(
                active_matches=self.active_matches.labels(game),
                decisions=Decisions(),
                timeouts=self.timeouts.labels(game),
                refused=self.refused.labels(game),
                finished=self.finished.labels(game),
            )
        return found

    def serve(self, host: str, port: int) -> int:
        """Serve /metrics over HTTP in a daemon thread; returns the bound port (port 0 picks one)."""
        self._http, _thread = start_http_server(port, addr=host, registry=self.registry)
        bound: int = self._http.server_address[1]
        return bound

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None


class _DecisionsCollector:
    """``croupier_decisions`` and ``croupier_decision_seconds`` per game from ``Decisions``, as a
    labelled Counter and Histogram would show them (read in the scraping thread: a decision counted
    meanwhile shows at the next scrape)."""

    def __init__(self, games: dict[str, GameMetrics]) -> None:
        self._games = games

    def describe(self) -> Iterator[Metric]:
        yield CounterMetricFamily("croupier_decisions", DECISIONS_HELP, labels=["game"])
        yield HistogramMetricFamily("croupier_decision_seconds", THINK_HELP, labels=["game"])

    def collect(self) -> Iterator[Metric]:
        decisions = CounterMetricFamily("croupier_decisions", DECISIONS_HELP, labels=["game"])
        think = HistogramMetricFamily("croupier_decision_seconds", THINK_HELP, labels=["game"])
        for game, metrics in list(self._games.items()):
            counts = metrics.decisions
            below = list(itertools.accumulate(counts.buckets))
            decisions.add_metric([game], below[-1], created=counts.created)
            think.add_metric([game], list(zip(_LE, below, strict=True)), counts.seconds)
            think.add_sample("croupier_decision_seconds_created", {"game": game}, counts.created)
        yield decisions
        yield think
