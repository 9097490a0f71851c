"""The benches compare side by side: two paths measured in turns, so that a change of the shared
machine's load falls on both (docs/benchmarks.md). Nothing here reads a timing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench import tournament_paths
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


def test_the_tournament_paths_bench_plays_a_file_three_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench/tournament_paths.py on a small file: over the referee, in-process and on its cluster."""
    file = tmp_path / "small.toml"
    file.write_text(
        'name = "small"\n[[games]]\ngame = "spoil_five"\nseats = 2\n'
        '[[bots]]\nname = "a"\ncommand = "croupier bot"\n[[bots]]\nname = "b"\ncommand = "croupier bot"\n'
    )
    tournament_paths.main(["--file", str(file)])
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row.split("  ")[0].strip() for row in rows] == ["referee", "in-process", "in-process --cluster"]
    assert all(row.split()[-7] == "2" for row in rows), rows  # matches played: the file's 2
