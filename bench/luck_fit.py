"""Fit, once and offline, what the luck correction's V (clients/results/luck.py) reads of a Chinese
Ten state beyond the score: the deal points each seat is still to take, as a linear function of
``luck_games.chinese_ten_features``, by least squares on self-play of the bench's fixed bots.

Usage: python -m bench.luck_fit [--matches N] [--seed S]

The bots are bench.luck's: the heuristic against the heuristic playing a share of its moves at
random (q 0, 0.25 and 0.5, both seatings), on seeds of their own (not bench.luck's: V is fixed
before the data it is measured on). Prints the weights to paste into
``luck_games.CHINESE_TEN_WEIGHTS``, their R², and the load.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

from bench.sprt_calibration import OPTIONS, mixed
from croupier.clients.author.inprocess import play
from croupier.clients.results.luck_games import _reach, _table_for, chinese_ten_features
from croupier.engine.games import get_game
from croupier.engine.games.chinese_ten import pile_points


class Recorder:
    """Stands where a LuckMeter would (``play(luck=)``): notes, before every Play, each seat's
    features and its points, and at the deal's end what each seat took after them."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, ...]] = []
        self.targets: list[float] = []
        self._open: list[tuple[int, tuple[float, ...], float]] = []
        self.luck: dict[tuple[int, int], float] = {}

    def follow(self, state: Any, spec: Any, options: Any) -> Any:
        return _Recorded(state, self)

    def before(self, state: Any) -> None:
        if state.turned is not None or state.over:
            return
        scoring = state.options.scoring
        mover = state.turn
        best, _, table_points = _table_for(_reach(state.hands[mover], scoring), state.table, scoring)
        held = [float(pile_points(hand, scoring)) for hand in state.hands]
        for seat, features in enumerate(chinese_ten_features(held, mover, best, table_points)):
            self._open.append((seat, features, float(state.points[seat])))

    def after(self, state: Any, deals: int) -> None:
        if len(state.deal_results) == deals:
            return
        final = state.deal_results[-1]
        for seat, features, points in self._open:
            self.rows.append(features)
            self.targets.append(final[seat] - points)
        self._open = []


class _Recorded:
    def __init__(self, state: Any, recorder: Recorder) -> None:
        self._state, self._recorder = state, recorder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)

    def apply(self, seat: int, action: Any, now: float = 0.0) -> Any:
        deals = len(self._state.deal_results)
        self._recorder.before(self._state)
        events = self._state.apply(seat, action, now)
        self._recorder.after(self._state, deals)
        return events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.luck_fit", description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=600)
    parser.add_argument("--seed", type=int, default=424242)
    args = parser.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}; {args}", flush=True)
    spec = get_game("chinese_ten")
    options = spec.options(OPTIONS["chinese_ten"])
    recorder = Recorder()
    for index in range(args.matches):
        q = (0.0, 0.25, 0.5)[index % 3]
        weak = index % 2
        factories = [
            mixed(q if seat == weak else 0.0, f"fit/{args.seed}/{index}/{seat}") for seat in range(2)
        ]
        play(spec, options, args.seed * 1_000_003 + index, factories, luck=recorder)  # type: ignore[arg-type]
    x = np.column_stack([np.array(recorder.rows), np.ones(len(recorder.rows))])
    y = np.array(recorder.targets)
    weights, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = y - x @ weights
    r2 = 1 - residual.var() / y.var()
    print(f"{len(y)} rows; R² {r2:.3f}; residual sd {residual.std():.2f} (target sd {y.std():.2f})")
    print(
        "CHINESE_TEN_WEIGHTS = ("
        + ", ".join(f"{w:.4f}" for w in weights[:-1])
        + f")  # intercept {weights[-1]:.3f}"
    )
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
