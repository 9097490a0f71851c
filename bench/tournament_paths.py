"""One tournament file three ways: over the embedded referee (the bots launched as processes, every
move over gRPC), ``--in-process`` (this machine's pool of worker processes, no referee), and
``--in-process --cluster`` on a Dask scheduler and two workers started here as processes of their
own (as ``dask scheduler`` and ``dask worker`` run them).

Usage: python -m bench.tournament_paths [--file tournaments/demo.toml] [--rounds R] [--runs N]

Each path plays the whole file from an empty data directory, ``--runs`` times, the paths in turns
so that a change of the shared machine's load falls on all of them. Printed per run: the wall
seconds, the CPU seconds of every process the run used (the croupier command and the bots or
workers it started, and, for the cluster, the scheduler's and workers' CPU over the run), and the
load average before it. ``--rounds`` overrides the file's rounds (the demo's 2 by default). The
in-process paths play no clock: every bot answers at once (the demo's bots do). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKER = ["--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard", "--death-timeout", "60"]
WAIT = 3600.0
DASK = [sys.executable, "-m"]


def toml_with_rounds(source: Path, rounds: int | None, folder: Path) -> Path:
    """The file, its rounds replaced if asked (a name of its own: each run is a new tournament)."""
    text = source.read_text()
    if rounds is not None:
        settings = tomllib.loads(text)
        text = text.replace(f"rounds = {settings.get('rounds', 1)}", f"rounds = {rounds}", 1)
    path = folder / source.name
    path.write_text(text)
    return path


def cpu_of(pids: list[int]) -> float:
    """CPU seconds so far of these live processes (Linux's /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int) -> Iterator[tuple[str, list[int]]]:
    """A Dask scheduler and ``workers`` one-thread workers, each its own process on 127.0.0.1: the
    scheduler's address and every process id. All are ended on leaving."""
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    started: list[subprocess.Popen[bytes]] = []
    log = (folder / "dask.log").open("wb")
    scheduler = ["--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--idle-timeout", "600"]
    try:
        started.append(
            subprocess.Popen(
                [
                    *DASK,
                    "distributed.cli.dask_scheduler",
                    "--scheduler-file",
                    str(scheduler_file),
                    *scheduler,
                ],
                stdout=log,
                stderr=log,
            )
        )
        for number in range(workers):
            local = folder / f"worker-{number}"
            local.mkdir()
            worker = [*WORKER, "--local-directory", str(local)]
            started.append(
                subprocess.Popen(
                    [*DASK, "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file), *worker],
                    stdout=log,
                    stderr=log,
                    cwd=local,
                )
            )
        deadline = time.monotonic() + 120
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with Client(scheduler_file=str(scheduler_file), set_as_default=False, timeout=60) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(workers, timeout=120)
            address = client.scheduler.address
        yield address, [process.pid for process in started]
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait(timeout=60)
        log.close()


def play(file: Path, data: Path, *extra: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``croupier tournament FILE`` (its child processes' CPU included)."""
    environment = {k: v for k, v in os.environ.items() if k != "CROUPIER_PACE_MS"}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    command = [sys.executable, "-m", "croupier.clients.cli", "tournament", str(file), "--data", str(data)]
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [*command, "--plain", "--samples", "100", *extra],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env=environment,
        cwd=file.parent,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(extra) or 'referee'}: exit {done.returncode}: {done.stderr.strip()}")
    return wall, children_cpu() - cpu


def matches_in(data: Path) -> int:
    import sqlite3

    with contextlib.closing(sqlite3.connect(data / "results.db")) as db:
        return int(db.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=ROOT / "tournaments" / "demo.toml")
    parser.add_argument("--rounds", type=int, help="the file's rounds, replaced")
    parser.add_argument("--runs", type=int, default=1, help="runs of each path, in turns")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="croupier-paths-") as temporary:
        folder = Path(temporary)
        file = toml_with_rounds(args.file.resolve(), args.rounds, folder)
        (folder / "dask").mkdir()
        with dask_cluster(folder / "dask", workers=2) as (address, pids):
            print(f"{file.name}: {os.cpu_count()} cores here; cluster of 2 one-thread workers at {address}")
            print(f"{'path':<22} {'matches':>7} {'wall s':>8} {'CPU s':>8} {'matches/s':>9}  load before")
            paths = {
                "referee": (),
                "in-process": ("--in-process",),
                "in-process --cluster": ("--in-process", "--cluster", address),
            }
            for run in range(args.runs):
                for name, extra in paths.items():
                    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
                    data = folder / f"{name.replace(' ', '')}-{run}"
                    before = cpu_of(pids)
                    wall, cpu = play(file, data, *extra)
                    if "--cluster" in extra:
                        cpu += cpu_of(pids) - before
                    matches = matches_in(data)
                    print(
                        f"{name:<22} {matches:>7} {wall:>8.1f} {cpu:>8.1f} {matches / wall:>9.1f}  {load}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
