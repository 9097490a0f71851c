"""``croupier match ... --in-process --cluster``: a real Dask scheduler and two workers, each its own
process on 127.0.0.1. A worker SIGKILLed mid-run, in the middle of a batch of sets, loses nothing
and doubles nothing: the results are those of a local run on the same deals, set for set (one bot a
file, the other a package of the author's, both shipped to the workers); a worker without a bot's
dependency fails the run in one line; a client or a worker running another Croupier is refused in one
line; without the extra, one line says how to install it. A settled
test cancels the sets it no longer needs, a set failing in a batch is the one named, and
bench/cluster.py's turns run on the same cluster. The cluster is started once for the file: the
tests hold whichever order they run in (the kill leaves one worker)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from distributed import Client

import croupier as package
from bench.cluster import dealt, side_by_side
from croupier.clients.author.cluster import (
    ClusterError,
    Sets,
    _hand_over,
    code_identity,
    connect,
    play_shipped_set,
)
from croupier.clients.author.inprocess import Played, SetJob, play_set, pool
from croupier.clients.author.inprocess_run import SetFailed, play_plan
from croupier.clients.results.schedule import DuplicateSet, duplicate_set
from croupier.clients.results.store import FinishedMatch, Store
from tests.clients.terminal import croupier

WAIT = 120
"""Seconds before a run is given up as hung: a guard, never a timing check."""
SLOW_HEURISTIC = """import time

from croupier.clients.bots import HeuristicBot


class Slow(HeuristicBot):
    \"\"\"The heuristic, a little slow: sets last long enough to kill a worker in the middle of one.\"\"\"

    def choose(self, view, legal):
        time.sleep(0.01)
        return super().choose(view, legal)
"""
PLAIN = """from croupier.clients.bots import HeuristicBot


class Plain(HeuristicBot):
    pass
"""
NEEDY = """import croupier_test_dependency

from croupier.clients.bots import HeuristicBot


class Needy(HeuristicBot):
    pass
"""
SCHEDULER = ["--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--idle-timeout", "120"]
"""The scheduler ends by itself after two idle minutes, whatever becomes of the test."""
WORKER = ["--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard", "--death-timeout", "60"]
"""One set at a time; nothing revives a killed worker; without its scheduler a minute, it ends."""
GAME = ["spoil_five", "--option", "players=2"]
SPRT = ("--sprt", "elo0=0", "elo1=10", "--in-process", "--data", "data", "--plain")
SETS = 8
"""Sets (of 2 games) each run plays: equal bots, so the test cannot decide before --max-games."""
SINGLES = 4
"""The cluster's first sets, one a task (two workers, two tasks each in flight) until one is timed;
with ``croupier.batch-seconds`` far above their pace, the rest go in one batch."""
BATCHED = {**os.environ, "DASK_CROUPIER__BATCH_SECONDS": "60"}


def test_a_worker_killed_mid_run_changes_no_result(
    tmp_path: Path, cluster: tuple[str, dict[str, int]]
) -> None:
    """The same test on this machine's pool and on the cluster, side by side (the bots mostly
    sleep), the worker playing the cluster's batch killed once the sets before it are done."""
    address, workers = cluster
    (tmp_path / "slow.py").write_text(SLOW_HEURISTIC)
    (tmp_path / "helpers").mkdir()  # a package of the author's: shipped zipped, as slow.py is as a file
    (tmp_path / "helpers" / "__init__.py").write_text("")
    (tmp_path / "helpers" / "plain.py").write_text(PLAIN)
    test = [*GAME, "--bot", "slow.py", "--bot", "helpers.plain:Plain", "--sprt", "elo0=0", "elo1=10"]
    test += ["--in-process", "--seed", "11", "--max-games", str(2 * SETS), "--plain"]
    runs = {
        where: subprocess.Popen(
            croupier("match", *test, "--data", where, *extra),
            cwd=tmp_path,
            env=BATCHED,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for where, extra in (("local", []), ("cluster", ["--cluster", address]))
    }
    try:
        with Client(address, set_as_default=False, timeout=30) as client:
            holder = _worker_holding_the_batch(client, runs["cluster"], tmp_path / "cluster")
        os.kill(workers.pop(holder), signal.SIGKILL)
        output = {where: run.communicate(timeout=WAIT)[0] for where, run in runs.items()}
    finally:
        for run in runs.values():
            run.kill()
    for where, run in runs.items():
        assert run.returncode == 4 and "inconclusive" in output[where], output[where]  # every set played
    played = _results(tmp_path / "cluster")
    assert len(played) == SETS * 2 and played == _results(tmp_path / "local")


def _worker_holding_the_batch(client: Client, run: subprocess.Popen[str], data: Path) -> str:
    """The address of the worker playing the batch, once the sets played one a task are done (its
    loss costs a batch in the middle)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and run.poll() is None:
        busy = [worker for worker, tasks in client.processing().items() if tasks]
        if busy and _done(data) >= 2 * SINGLES:
            return busy[0]
        time.sleep(0.02)
    raise AssertionError(f"no batch was being played on the cluster (run exited {run.poll()})")


def _done(data: Path) -> int:
    """The matches the run has finished so far."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{data / 'results.db'}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()[0])
    except sqlite3.OperationalError:  # not there yet
        return 0


def _results(data: Path) -> dict[tuple[int, str], list[tuple[object, ...]]]:
    """Every finished match of the run by deal and seating: each seat's bot, score, place, timeouts,
    refusals and forfeit."""
    with contextlib.closing(sqlite3.connect(data / "results.db")) as db:
        rows = db.execute(
            "SELECT m.deal, m.seats, r.seat, r.bot, r.score, r.place, r.timeouts, r.refusals, r.forfeited "
            "FROM matches m JOIN results r ON r.match_id = m.id ORDER BY m.deal, m.seats, r.seat"
        ).fetchall()
    found: dict[tuple[int, str], list[tuple[object, ...]]] = {}
    for deal, seats, *result in rows:
        found.setdefault((deal, seats), []).append(tuple(result))
    return found


def test_a_worker_without_a_bot_s_dependency_fails_the_run_in_one_line(
    tmp_path: Path, cluster: tuple[str, dict[str, int]]
) -> None:
    address, _ = cluster
    (tmp_path / "needy.py").write_text(NEEDY)
    (tmp_path / "installed").mkdir()
    (tmp_path / "installed" / "croupier_test_dependency.py").write_text("")
    here = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}  # on this machine, not the workers
    run = subprocess.run(
        croupier("match", *GAME, "--bot", "needy.py", "--bot", "heuristic", *SPRT, "--cluster", address),
        cwd=tmp_path,
        env=here,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert len(run.stderr.splitlines()) == 1, run.stderr
    (line,) = run.stderr.splitlines()
    assert re.fullmatch(
        r"croupier match --in-process: set \d+: ModuleNotFoundError: "
        r"No module named 'croupier_test_dependency' \(every worker needs the bots' dependencies\)",
        line,
    ), run.stderr


def _edited_croupier(folder: Path) -> Path:
    """A copy of this Croupier with one comment added to one of its files (a worker or client a
    release behind, or patched by hand): the folder to put first on PYTHONPATH."""
    root = folder / "edited"
    shutil.copytree(
        Path(package.__file__).resolve().parent,
        root / "croupier",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    with (root / "croupier" / "clients" / "author" / "batches.py").open("a") as source:
        source.write("# patched by hand\n")
    return root


def test_a_client_whose_croupier_differs_from_the_workers_is_refused_in_one_line(
    tmp_path: Path, cluster: tuple[str, dict[str, int]]
) -> None:
    address, _ = cluster
    edited = {**os.environ, "PYTHONPATH": str(_edited_croupier(tmp_path))}
    run = subprocess.run(
        croupier("match", *GAME, "--bot", "heuristic", "--bot", "random", *SPRT, "--cluster", address),
        cwd=tmp_path,
        env=edited,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    (line,) = run.stderr.splitlines()
    theirs = re.escape(code_identity())
    assert re.fullmatch(
        rf"croupier match --cluster: the Dask worker at tcp://127\.0\.0\.1:\d+ runs Croupier {theirs}, "
        r"this side \S+: install the same Croupier on the workers as here \(croupier --version names it\)",
        line,
    ), line
    assert _done(tmp_path / "data") == 0


def test_a_worker_joining_with_another_croupier_plays_no_set(
    tmp_path: Path, cluster: tuple[str, dict[str, int]]
) -> None:
    """A worker started after the run connected (the check at connection cannot see it) refuses
    the run's sets: each worker keeps the run's code identity from a plugin as it joins."""
    address, _ = cluster
    edited = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    edited["PYTHONPATH"] = str(_edited_croupier(tmp_path))
    (tmp_path / "late").mkdir()
    with connect(address, {"heuristic": "heuristic", "random": "random"}) as joined:
        assert isinstance(joined.executor, Sets)
        client = joined.executor.client
        before = set(client.scheduler_info()["workers"])
        late = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                *WORKER,
                "--local-directory",
                "late",
            ],
            cwd=tmp_path,
            env=edited,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            client.wait_for_workers(len(before) + 1, timeout=WAIT)
            (newcomer,) = set(client.scheduler_info()["workers"]) - before
            job = SetJob("spoil_five", {"players": 2}, ((1, 7, ("heuristic", "random")),), joined.specs)
            task = client.submit(play_shipped_set, job, workers=[newcomer], pure=False)
            with pytest.raises(
                ClusterError, match=rf"the Dask worker at {newcomer} runs Croupier \S+, this side"
            ):
                task.result(timeout=WAIT)
        finally:
            late.kill()
            late.wait(timeout=WAIT)


class _ClosedTask:
    """A task that finished on its worker, whose result can no longer be fetched: the run closed
    its client after another set failed (a CI run printed Dask's traceback of it under the run's
    one-line error)."""

    status = "finished"

    def result(self) -> object:
        raise OSError("in <TCP (closed) ConnectionPool.gather>: Stream is closed")


def test_a_result_lost_on_the_way_fails_its_future_and_raises_nothing_into_dask() -> None:
    handed: concurrent.futures.Future[Any] = concurrent.futures.Future()
    _hand_over(handed, _ClosedTask())  # Dask logs, as an ERROR with its traceback, what escapes here
    with pytest.raises(ClusterError, match=r"the cluster lost the task's result: .*Stream is closed"):
        handed.result(timeout=0)


def test_without_the_extra_cluster_says_how_to_install_it(tmp_path: Path) -> None:
    hide = (
        "import sys; sys.modules['distributed'] = None; from croupier.clients.cli import main; exit(main())"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            hide,
            "match",
            *GAME,
            "--bot",
            "heuristic",
            "--bot",
            "random",
            *SPRT,
            "--cluster",
            "tcp://127.0.0.1:1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.splitlines() == [
        "croupier match: --cluster: Dask's distributed is not installed here: pip install 'croupier[cluster]'"
    ]
    assert not (tmp_path / "data").exists()  # nothing was begun


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int]]]:
    """One cluster for the tests of this file: the one that kills a worker leaves the other one."""
    with dask_cluster(tmp_path_factory.mktemp("dask"), workers=2) as started:
        yield started


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int) -> Iterator[tuple[str, dict[str, int]]]:
    """A Dask scheduler and ``workers`` workers (one thread each, no nanny to revive them), each a
    process of its own on 127.0.0.1 and started as `dask scheduler` and `dask worker` are; the
    scheduler's address and each worker's process id by its address. All are ended on leaving."""
    scheduler_file = folder / "scheduler.json"
    quiet = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only what is installed
    started: list[subprocess.Popen[bytes]] = []
    log = (folder / "dask.log").open("wb")
    try:
        started.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_scheduler",
                    "--scheduler-file",
                    str(scheduler_file),
                    *SCHEDULER,
                ],
                stdout=log,
                stderr=log,
                env=quiet,
            )
        )
        for number in range(workers):
            local = folder / f"worker-{number}"
            local.mkdir()
            started.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        "--scheduler-file",
                        str(scheduler_file),
                        *WORKER,
                        "--local-directory",
                        str(local),
                    ],
                    stdout=log,
                    stderr=log,
                    env=quiet,
                    cwd=local,
                )
            )
        deadline = time.monotonic() + WAIT
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with Client(scheduler_file=str(scheduler_file), set_as_default=False, timeout=30) as client:
            client.wait_for_workers(workers, timeout=WAIT)
            address = client.scheduler.address
            pids = client.run(os.getpid)
        yield address, pids
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait(timeout=WAIT)
        log.close()


class _TwoSets:
    """A test that is settled once ``count`` sets are over (as an SPRT's verdict settles it), and
    has sets to deal up to ``most`` (without end if None)."""

    def __init__(self, count: int = 2, most: int | None = None) -> None:
        self.over: list[int] = []
        self.count, self.most = count, most

    def plan(self, deal: int) -> DuplicateSet | None:
        if self.most is not None and deal >= self.most:
            return None
        return duplicate_set("spoil_five", ["a", "b"], 0, 0, deal, seed=1, secret=b"secret")

    def set_over(self, deal: int, matches: Sequence[FinishedMatch], replayed: bool = False) -> None:
        self.over.append(deal)

    def settled(self) -> bool:
        return len(self.over) >= self.count


class _BusyCluster(concurrent.futures.Executor):
    """Plays the first two sets handed to it at once; the others wait in its queue for good."""

    def __init__(self) -> None:
        self.handed = 0

    def submit(  # type: ignore[override]
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.handed += 1
        if self.handed <= 2:
            future.set_result(fn(*args, **kwargs))
        return future


@pytest.mark.timeout(60)  # without the cancelling, play_plan waits on the queue for ever
def test_the_sets_a_settled_test_no_longer_needs_are_cancelled(tmp_path: Path) -> None:
    with Store(tmp_path / "results.db") as store:
        tournament = store.open_tournament("sprt", "fp", {}, again=False, secret=b"secret")
        plan, busy = _TwoSets(), _BusyCluster()
        specs = {"a": "heuristic", "b": "heuristic"}
        assert play_plan(plan, store, tournament, specs, {}, {"players": 2}, processes=2, executor=busy)
        matches = store.matches(tournament.id).values()
    assert sorted(plan.over) == [0, 1] and busy.handed == 4  # twice the cluster's threads in flight
    assert sorted(m.key.deal for m in matches if m.status == "done") == [0, 0, 1, 1]
    waiting = [m for m in matches if m.status != "done"]
    assert {(m.key.deal, m.status) for m in waiting} == {(2, "scheduled"), (3, "scheduled")}


def test_a_set_failing_in_a_batch_is_the_one_named_and_those_before_it_are_kept(tmp_path: Path) -> None:
    """Two sets one a task, then one batch of the four others (60 s of play a task), whose second
    set fails: the run stops naming it, the set before it in the batch recorded."""
    calls = itertools.count(1)

    def player(job: SetJob) -> list[Played]:
        if next(calls) == 4:  # one thread: sets 0 and 1, then the batch's 2 and 3
            raise ValueError("a bot's bad day")
        return play_set(job)

    with Store(tmp_path / "results.db") as store, concurrent.futures.ThreadPoolExecutor(1) as one:
        tournament = store.open_tournament("sprt", "fp", {}, again=False, secret=b"secret")
        specs = {"a": "heuristic", "b": "heuristic"}
        with pytest.raises(SetFailed) as failed:
            play_plan(
                _TwoSets(6, most=6), store, tournament, specs, {}, {"players": 2},
                processes=1, executor=one, player=player, batch_seconds=60,
            )  # fmt: skip
        matches = store.matches(tournament.id).values()
    assert str(failed.value) == "set 3: ValueError: a bot's bad day"
    done = {m.key.deal for m in matches if m.status == "done"}
    assert {0, 2} <= done <= {0, 1, 2}  # set 1's result may be read after the batch's failure


def test_the_cluster_bench_plays_both_paths_in_turns(cluster: tuple[str, dict[str, int]]) -> None:
    """bench/cluster.py's measurement, on this machine's pool and the real cluster (its figures are
    the bench's to print: nothing here reads a timing)."""
    address, _ = cluster
    with pool(1) as local, Client(address, set_as_default=False, timeout=30) as client:
        paths = {"local": (local, 0.0), "dask": (Sets(client), 0.0), "batched": (Sets(client), 60.0)}
        rounds = list(side_by_side(paths, dealt("pair_battle", 3), rounds=2, in_flight=2))
    assert [sorted(rates) for rates in rounds] == [["batched", "dask", "local"]] * 2


def test_a_batch_seconds_that_is_no_duration_is_a_line_to_mend(tmp_path: Path) -> None:
    run = subprocess.run(
        croupier(
            "match", *GAME, "--bot", "heuristic", "--bot", "random", *SPRT, "--cluster", "tcp://127.0.0.1:1"
        ),
        cwd=tmp_path,
        env={**os.environ, "DASK_CROUPIER__BATCH_SECONDS": "-1"},
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.splitlines() == [
        "croupier match: --cluster: Dask's croupier.batch-seconds is -1: give seconds, 0 or more"
    ]
    assert not (tmp_path / "data").exists()  # nothing was begun


def test_cluster_without_in_process_is_a_command_line_to_mend(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            *croupier("match", *GAME, "--bot", "heuristic", "--bot", "random", "--sprt", "elo0=0", "elo1=10"),
            "--cluster",
            "tcp://127.0.0.1:1",
            "--data",
            "data",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.splitlines() == [
        "croupier match: --cluster plays Python SDK bots on a Dask cluster: give --in-process too"
    ]


def test_a_tournament_on_the_cluster_whose_worker_is_killed_gives_the_local_run_s_results(
    tmp_path: Path, cluster: tuple[str, dict[str, int]]
) -> None:
    """``croupier tournament --in-process --cluster``: a worker of its own joins the cluster and is
    SIGKILLed once it plays the run's sets; the results are this machine's pool's, set for set, on
    the same secret (the bot file shipped to the workers, a bundled bot beside it)."""
    from tests.clients.tournament.test_tournament_in_process import counts, play, results, seeded, tournament

    address, _ = cluster
    file = tournament(tmp_path, rounds=3, slow=0.002)
    secret = bytes(range(32))
    seeded(file, tmp_path / "local", secret)
    local = play(file, tmp_path / "local", "--in-process")
    assert local.returncode == 0, local.stdout + local.stderr
    seeded(file, tmp_path / "cluster", secret)
    with Client(address, set_as_default=False, timeout=30) as client:
        joined = len(client.nthreads()) + 1
        (tmp_path / "worker").mkdir()
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                *WORKER,
                "--local-directory",
                str(tmp_path / "worker"),
            ],
            cwd=tmp_path / "worker",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        try:
            client.wait_for_workers(joined, timeout=WAIT)
            ours = next(where for where, pid in client.run(os.getpid).items() if pid == worker.pid)
            run = subprocess.Popen(
                croupier("tournament", str(file), "--data", "cluster", "--in-process", "--cluster", address),
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline and run.poll() is None:
                if client.processing().get(ours) and sum(counts(tmp_path / "cluster")[0]) >= 4:
                    break
                time.sleep(0.01)
            assert run.poll() is None, "the run ended before its worker could be killed"
            worker.send_signal(signal.SIGKILL)
            output = run.communicate(timeout=WAIT)[0]
        finally:
            worker.kill()
            worker.wait(timeout=WAIT)
    assert run.returncode == 0, output
    assert counts(tmp_path / "cluster")[0] == [2] * 9
    assert results(tmp_path / "cluster") == results(tmp_path / "local")


def test_a_tournament_whose_bot_a_worker_cannot_load_fails_in_one_line_naming_the_set(
    tmp_path: Path, cluster: tuple[str, dict[str, int]]
) -> None:
    from tests.clients.tournament.test_tournament_in_process import tournament

    address, _ = cluster
    file = tournament(tmp_path)
    (tmp_path / "first.py").write_text(NEEDY)  # the file the tournament's bot "first" runs
    (tmp_path / "installed").mkdir()
    (tmp_path / "installed" / "croupier_test_dependency.py").write_text("")
    here = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}  # on this machine, not the workers
    run = subprocess.run(
        croupier("tournament", str(file), "--data", "data", "--in-process", "--cluster", address),
        cwd=tmp_path,
        env=here,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    (line,) = run.stderr.splitlines()
    assert re.fullmatch(
        r"croupier tournament --in-process: set \w+ round 0 group 0 deal \d+: ModuleNotFoundError: "
        r"No module named 'croupier_test_dependency' \(every worker needs the bots' dependencies\)",
        line,
    ), run.stderr
