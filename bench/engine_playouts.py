"""Random playouts per second of every registered game, on one core: an older commit's engine,
today's pure Python and today's compiled build, side by side.

Usage: python -m bench.engine_playouts [--seconds S] [--game NAME] [--runs N] [--baseline REF]
Each game plays whole matches with its default options and random legal
choices (the same loop as the conformance harness, without its checks), match
``i`` dealt and played from seed ``i`` on every path.
Games with clocks get 20 ms of referee time between actions. Games of several
deals (Chinese Ten, Spoil Five) number them in ``state.deal``: their deals/s is
printed too. Rates are per CPU second of the process (a busy machine's waits for
a core do not count). Each game runs on each path in turn, each in its own process:
the engine of commit REF (default 8d5ffcc, the engine when issue 21's work began; its
``engine/`` exported by ``git archive`` into a temporary ``croupier`` package, pure
Python), today's pure Python (CROUPIER_PURE=1), then the build compiled by mypyc
(make compiled). Each row says how many times the baseline's actions/s it is; with
``--runs N`` the whole alternation repeats N times and the last table gives each ratio's range.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import machine
from croupier.engine.games import GAMES  # the baseline's worker imports its own (PYTHONPATH)
from croupier.engine.rng import Rng

CLOCK_STEP = 0.02
BASELINE = "8d5ffcc"
REPO = Path(__file__).resolve().parent.parent
PURE = "CROUPIER_PURE"  # wire/native.py's switch; not imported: a baseline tree has no server


def play_one(name: str, seed: int, options: Any = None) -> tuple[int, int]:
    """Play one random match (default options unless given); return the actions it took and its
    deals (1 for one-deal games)."""
    spec = GAMES[name]
    state = spec.new_game(spec.options() if options is None else options, Rng(seed))
    chooser = random.Random(seed)
    now, actions = 0.0, 0
    while not state.is_over():
        now += CLOCK_STEP
        wake = state.wake_at()
        if wake is not None and (wake <= now or not state.to_act()):
            now = max(now, wake)
            state.advance(now)
            continue
        seat = chooser.choice(sorted(state.to_act()))
        state.apply(seat, chooser.choice(state.legal_actions(seat)), now)
        actions += 1
    return actions, getattr(state, "deal", 1)


def measure(name: str, seconds: float) -> dict[str, float]:
    """Play ``name`` for ``seconds`` of CPU in this process: matches, deals and actions per CPU second."""
    matches = actions = deals = 0
    start = time.process_time()  # CPU seconds: on a shared machine, time waiting for a core is not counted
    while (elapsed := time.process_time() - start) < seconds:
        match_actions, match_deals = play_one(name, matches)
        actions += match_actions
        deals += match_deals
        matches += 1
    return {
        "matches": matches / elapsed,
        "deals": deals / elapsed,
        "actions": actions / elapsed,
        "per": actions / matches,
    }


def export_engine(ref: str, into: Path) -> Path | None:
    """Commit ``ref``'s engine/ as ``into/croupier/engine`` (a bare ``croupier`` package around it:
    the engine imports nothing else of the project); returns the folder for PYTHONPATH, or None
    (saying why) where git or the commit is missing (a tarball, a shallow clone)."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", ref, "engine"],
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        print(f"no baseline rows: git cannot run ({exc})")
        return None
    if archive.returncode != 0:
        print(f"no baseline rows: git archive {ref} failed: {archive.stderr.decode().strip()}")
        return None
    package = into / "croupier"
    package.mkdir()
    (package / "__init__.py").write_text(f'"""The engine of commit {ref}, for bench/engine_playouts.py."""\n')
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(package, filter="data")
    return into


def on_path(name: str, seconds: float, path: str, tree: Path | None = None) -> tuple[dict[str, float], str]:
    """``measure`` in a process of its own: ``path`` is "pure" or "compiled" (today's tree), or
    a label for the engine exported into ``tree``. Its figures and the build it really ran."""
    env = {**os.environ, PURE: "" if path == "compiled" else "1"}
    if tree is not None:  # before site-packages, where today's croupier package is
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, "-m", "bench.engine_playouts", "--game", name, "--seconds", str(seconds)]
    command += ["--here", path if tree is not None else ""]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"{name} on {path}: the worker failed:\n{done.stderr.strip()}")
    figures = json.loads(done.stdout)
    if tree is not None and not Path(figures["engine"]).is_relative_to(tree):
        raise SystemExit(f"{name} on {path}: the worker ran the engine in {figures['engine']}, not {tree}")
    return figures["figures"], figures["build"]


def here(name: str, seconds: float, label: str) -> None:
    """The worker: one game on this process's engine, as JSON."""
    from croupier import engine

    figures = measure(name, seconds)
    if label:
        build = f"pure Python ({label})"
    else:
        from croupier.wire import native

        build = native.build()
    print(json.dumps({"figures": figures, "build": build, "engine": str(Path(engine.__file__).parent)}))


def spread(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="CPU seconds per game and path (default 3)"
    )
    parser.add_argument("--game", choices=sorted(GAMES), help="one game only")
    parser.add_argument("--runs", type=int, default=1, help="repeat the whole alternation (default 1)")
    parser.add_argument(
        "--baseline",
        default=BASELINE,
        metavar="REF",
        help=f"the commit whose pure engine the rows are compared with (default {BASELINE}); '' for none",
    )
    parser.add_argument("--here", metavar="LABEL", help=argparse.SUPPRESS)  # the worker
    args = parser.parse_args()
    if args.here is not None:
        here(args.game, args.seconds, args.here)
        return
    games = [args.game] if args.game else sorted(GAMES)
    ratios: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="croupier-baseline-") as temp:
        tree = export_engine(args.baseline, Path(temp)) if args.baseline else None
        for run in range(1, args.runs + 1):
            print(machine() + (f"; run {run} of {args.runs}" if args.runs > 1 else ""))
            print("per CPU second of one process, default options")
            print(
                f"{'game':<15} {'path':<9} {'matches/s':>10} {'deals/s':>10} {'actions/s':>10}"
                f" {'actions/match':>14}  x {args.baseline if tree else 'pure'}"
            )
            for name in games:
                rows = []
                if tree is not None:
                    rows.append((args.baseline, *on_path(name, args.seconds, args.baseline, tree)))
                rows.append(("pure", *on_path(name, args.seconds, "pure")))
                compiled, build = on_path(name, args.seconds, "compiled")
                if build.startswith("compiled"):
                    rows.append(("compiled", compiled, build))
                else:
                    print(f"{name:<15} no compiled row: the hot path runs {build}")
                reference = rows[0][1]["actions"]  # the baseline's, or today's pure without one
                for path, f, _ in rows:
                    ratio = f["actions"] / reference
                    if path != rows[0][0]:
                        ratios.setdefault((name, path), []).append(ratio)
                    print(
                        f"{name:<15} {path:<9} {f['matches']:>10.1f} {f['deals']:>10.1f}"
                        f" {f['actions']:>10.0f} {f['per']:>14.1f}  {ratio:.2f}x"
                    )
    if args.runs > 1:
        print(f"actions/s as times {args.baseline if tree else 'pure'}'s, over {args.runs} runs")
        for (name, path), values in ratios.items():
            print(f"{name:<15} {path:<9} {spread(values)}x")


if __name__ == "__main__":
    main()
