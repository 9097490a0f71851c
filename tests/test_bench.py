"""The benches compare side by side: two paths measured in turns, so that a change of the shared
machine's load falls on both (docs/benchmarks.md). Nothing here reads a timing."""

from __future__ import annotations

import time
from collections.abc import Callable

from bench.env_steps import interleaved
from bench.throughput import turns


def test_env_steps_measures_the_engine_and_the_environment_in_turns() -> None:
    order: list[str] = []

    def play(name: str) -> Callable[[int], int]:
        def one_match(number: int) -> int:
            order.append(name)
            start = time.process_time()
            while time.process_time() - start < 0.001:  # a match's CPU time
                pass
            return 1

        return one_match

    rates = interleaved({"engine": play("engine"), "env": play("env")}, seconds=0.03, rounds=3)
    turns = [name for index, name in enumerate(order) if index == 0 or order[index - 1] != name]
    assert turns == ["engine", "env"] * 3 and set(rates) == {"engine", "env"}


def test_the_referee_bench_takes_its_configurations_round_robin_between_ceilings() -> None:
    """Each configuration between two ceilings, and every configuration once per round: never a
    configuration's runs one after another, nor one ceiling for several configurations."""
    order = list(turns(["seats", "bots"], runs=2))
    assert order == [None, "seats", None, "bots", None] * 2
