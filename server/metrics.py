"""Prometheus metrics, served on their own port (one registry per referee, so tests can run several)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server


@dataclass(frozen=True)
class GameMetrics:
    """One game's series, looked up once (a label lookup takes a lock: not on every decision)."""

    active_matches: Gauge
    decisions: Counter
    decision_seconds: Histogram
    timeouts: Counter
    refused: Counter
    finished: Counter


class Metrics:
    def __init__(self, games: Iterable[str] = ()) -> None:
        self.registry = CollectorRegistry()
        self.active_matches = Gauge(
            "croupier_active_matches", "Matches running now", ["game"], registry=self.registry
        )
        self.decisions = Counter(
            "croupier_decisions",
            "Actions applied for bots (timeouts excluded)",
            ["game"],
            registry=self.registry,
        )
        self.decision_seconds = Histogram(
            "croupier_decision_seconds",
            "Referee-measured time from a decision request to the bot's accepted answer",
            ["game"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
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
        for game in games:  # every series exists from the start, at zero
            self.game(game)

    def game(self, game: str) -> GameMetrics:
        found = self._games.get(game)
        if found is None:
            found = self._games[game] = GameMetrics(
                active_matches=self.active_matches.labels(game),
                decisions=self.decisions.labels(game),
                decision_seconds=self.decision_seconds.labels(game),
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
