"""``croupier serve --workers N``: N referee processes, one per core, each on an address of its own.

Why N addresses and not N processes behind one SO_REUSEPORT port: a match lives in the process
that created it, and a bot's stream must reach the process holding its matches. Behind one shared
port the kernel hands each new connection to any of the N, and neither a bot nor the runner can
say which. With N addresses each worker is a replica like any other (docs/operations.md, "Scaling
out"): the tournament runner already launches each bot once per replica, creates each duplicate
set on one replica and follows its matches there; given any one worker's address it learns the
others from ``GetReferee``.

This parent starts the workers, prints where each listens, restarts one that dies (after a pause
that doubles while it keeps dying, one line each time), and passes SIGTERM and SIGINT on to every
worker for a graceful stop of all. What the workers share is in ``server/group.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from croupier.server.app import CannotStart, bind_error, cannot_use, checked_admin_token, kept_admin_token
from croupier.server.datafiles import private_folder
from croupier.server.group import ADDRESSES, READY, WORKER_FOLDER, worker_data, write_addresses

MAX_WORKERS = 256
FIRST_PAUSE, LONGEST_PAUSE = 1.0, 30.0
"""Seconds before a worker that died is started again: doubled while it keeps dying."""
STABLE_SECONDS = 60.0
"""A worker that ran this long before dying is restarted after the first pause again."""
STOP_SECONDS = 30.0
"""How long past its drain a worker may take to stop before it is killed."""
PASSED_ON = (
    "drain_seconds", "spectators", "feeds_per_client", "anonymous_feeds", "tls_cert", "tls_key",
    "tls_client_ca", "decision_ms", "bank_ms", "max_timeouts", "max_refusals", "grace_ms",
    "open_registration",
)  # fmt: skip
"""``croupier serve`` flags every worker is given as the parent was."""


def serve_workers(args: argparse.Namespace) -> int:
    """Run the workers until SIGTERM or SIGINT; the exit status. ``CannotStart`` says why not."""
    return asyncio.run(_Parent(args).run())


def worker_count(text: str) -> int:
    cores = len(os.sched_getaffinity(0))
    if text == "auto":
        return cores
    if not text.isdigit() or not 1 <= int(text) <= MAX_WORKERS:
        raise CannotStart(
            f"--workers {text!r}: give 1 to {MAX_WORKERS} workers, or auto (one per core: {cores} here)"
        )
    return int(text)


def _split(address: str, flag: str, count: int) -> tuple[str, int]:
    """HOST and PORT of ``address``; PORT + I must be a port for every worker I."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or (int(port) and int(port) + count - 1 > 65535):
        raise CannotStart(
            f"{flag} {address!r}: give HOST:PORT with room for {count} ports from PORT up (port 0: "
            "each worker picks one)"
        )
    return host, int(port)


class _Worker:
    """One worker process, started again on the same ports whenever it is restarted."""

    def __init__(self, index: int, argv: list[str], env: dict[str, str]) -> None:
        self.index = index
        self.argv = argv
        """Its command; the ports in it are fixed once it first listens (port 0 picks only once)."""
        self.env = env
        self.process: asyncio.subprocess.Process | None = None
        self.started = 0.0
        self.address = ""
        self.advertised = ""
        self.metrics_port: int | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> bool:
        """Start the process and wait until it listens: False if it ended first (its reason is on
        stderr, which it shares with the parent)."""
        self.started = time.monotonic()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,  # never written: its end of file tells the worker we are gone
                stdout=asyncio.subprocess.PIPE,
                env=self.env,
                start_new_session=True,  # a terminal's Ctrl-C reaches the parent alone, which passes it on
            )
        except OSError as exc:  # no process to be had (EAGAIN, ENOMEM): its last run stands for it
            _say(f"worker {self.index} cannot be started ({exc.strerror})")
            return False
        ready = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read(self.process, ready))
        found: dict[str, object] | None = await ready
        if found is None:
            return False
        port, metrics_port = found["port"], found["metrics_port"]
        assert isinstance(port, int) and (metrics_port is None or isinstance(metrics_port, int))
        self._fix("--address", port)
        if metrics_port is not None:
            self._fix("--metrics-address", metrics_port)
        self.address = self._value("--address")
        self.advertised = str(found["advertise"])
        self.metrics_port = metrics_port
        return True

    async def _read(
        self, process: asyncio.subprocess.Process, ready: asyncio.Future[dict[str, object] | None]
    ) -> None:
        """Pass the worker's lines on, named, and catch the one saying where it listens."""
        assert process.stdout is not None
        while True:
            try:
                raw = await process.stdout.readline()
            except ValueError:
                continue  # a line over the reader's limit is dropped, not the parent
            if not raw:
                break
            line = raw.decode(errors="replace").rstrip("\n")
            if line.startswith(READY) and not ready.done():
                ready.set_result(json.loads(line.removeprefix(READY)))
            else:
                _say(f"worker {self.index}: {line.removeprefix('croupier: ')}")
        if not ready.done():
            ready.set_result(None)

    async def wait(self) -> int:
        assert self.process is not None and self._reader is not None
        code = await self.process.wait()
        await self._reader
        return code

    def signal(self, signum: int) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signum)

    def _value(self, flag: str) -> str:
        return self.argv[self.argv.index(flag) + 1]

    def _fix(self, flag: str, port: int) -> None:
        at = self.argv.index(flag) + 1
        self.argv[at] = f"{self.argv[at].rpartition(':')[0]}:{port}"


class _Parent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stopping = asyncio.Event()
        self.workers: list[_Worker] = []

    async def run(self) -> int:
        count = worker_count(self.args.workers)
        self.workers = self._plan(count)
        self._note_leftovers(count)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self._on_signal, signum)
        started = await asyncio.gather(*(worker.start() for worker in self.workers))
        if self.stopping.is_set():  # a signal while they started
            await self._stop_all(signal.SIGTERM)
            _say(f"stopped ({count} workers)")
            return 0
        if not all(started):
            failed = started.index(False)
            await self._stop_all(signal.SIGTERM)
            raise CannotStart(f"worker {failed} could not start: its reason is above; no worker is running")
        write_addresses(self.args.data, [worker.advertised for worker in self.workers])
        self._say_where()
        codes = await asyncio.gather(*(self._supervise(worker) for worker in self.workers))
        _say(f"stopped ({count} workers)")
        # a worker the passed-on signal ended before it could take it up stopped as asked too
        return 0 if all(code in (0, -signal.SIGTERM, -signal.SIGINT) for code in codes) else 1

    def _plan(self, count: int) -> list[_Worker]:
        """Each worker's command and environment, once every port it is to have is free."""
        args = self.args
        if args.unix_socket is not None:
            raise CannotStart("--unix-socket serves one referee: run it without --workers")
        host, port = _split(args.address, "--address", count)
        metrics = None
        if args.metrics_address != "off":
            metrics = _split(args.metrics_address, "--metrics-address", count)
        advertise = _split(args.advertise, "--advertise", count) if args.advertise else None
        if advertise is not None and not advertise[1]:
            raise CannotStart(f"--advertise {args.advertise!r}: give the port worker 0 is reached at")
        ports = [port + i if port else 0 for i in range(count)]
        metrics_ports = [metrics[1] + i if metrics and metrics[1] else 0 for i in range(count)]
        for i in range(count):
            self._check_free(f"{host}:{ports[i]}", i, "--address")
            if metrics is not None:
                self._check_free(f"{metrics[0]}:{metrics_ports[i]}", i, "--metrics-address")
        try:
            for folder in [args.data, *(worker_data(args.data, i) for i in range(count))]:
                private_folder(folder)
        except OSError as exc:
            raise cannot_use(args.data, exc) from None
        token = checked_admin_token(args.admin_token) if args.admin_token else kept_admin_token(args.data)
        (args.data / ADDRESSES).unlink(missing_ok=True)  # an earlier run's: no worker may report it
        env = {**os.environ, "CROUPIER_ADMIN_TOKEN": token}  # not in argv, which every user can read
        env.pop("CROUPIER_ADVERTISE", None)  # each worker is told its own
        workers = []
        for i in range(count):
            argv = [
                sys.executable, "-m", "croupier.server.cli", "--worker", str(i),
                "--address", f"{host}:{ports[i]}", "--data", str(worker_data(args.data, i)),
                "--metrics-address", "off" if metrics is None else f"{metrics[0]}:{metrics_ports[i]}",
            ]  # fmt: skip
            if advertise is not None:
                argv += ["--advertise", f"{advertise[0]}:{advertise[1] + i}"]
            for name in PASSED_ON:
                value = getattr(args, name)
                if value is not None:
                    argv += [f"--{name.replace('_', '-')}", str(value)]
            workers.append(_Worker(i, argv, env))
        return workers

    def _check_free(self, address: str, index: int, flag: str) -> None:
        busy = bind_error(address)
        if busy is not None:
            raise CannotStart(
                f"cannot listen on {address} for worker {index} ({busy}): stop what uses it, or pass "
                f"another {flag} (port 0: each worker picks one)"
            )

    def _note_leftovers(self, count: int) -> None:
        """Unfinished matches no worker will resume, said before anyone wonders where they went."""
        data: Path = self.args.data
        if any((data / "matches").glob("*.secret")):
            _say(f"note: {data / 'matches'} holds unfinished matches of a referee run without --workers; "
                 "no worker resumes them (serve that --data without --workers to)")  # fmt: skip
        for folder in sorted(data.glob(f"{WORKER_FOLDER}*")):
            index = folder.name.removeprefix(WORKER_FOLDER)
            if index.isdigit() and int(index) >= count and any((folder / "matches").glob("*.secret")):
                _say(f"note: {folder} holds unfinished matches; start with --workers {int(index) + 1} "
                     "or more to resume them")  # fmt: skip

    def _say_where(self) -> None:
        for worker in self.workers:
            assert worker.process is not None
            where = f"worker {worker.index} (pid {worker.process.pid}) serving on {worker.address}"
            if worker.advertised != worker.address:
                where += f", advertised as {worker.advertised}"
            if worker.metrics_port is not None:
                metrics_host = self.args.metrics_address.rpartition(":")[0] or "127.0.0.1"
                where += f", metrics on http://{metrics_host}:{worker.metrics_port}/metrics"
            _say(where)
        first = self.workers[0].address
        _say(f"{len(self.workers)} workers; a tournament spreads over them: croupier tournament FILE "
             f"--server {first}")  # fmt: skip
        if self.args.admin_token is None:
            _say(f"admin token in {self.args.data / 'admin-token'}")

    async def _supervise(self, worker: _Worker) -> int:
        """Restart the worker whenever it ends, until the parent stops; its last exit status."""
        pause = FIRST_PAUSE
        while True:
            assert worker.process is not None
            pid = worker.process.pid
            code = await worker.wait()
            if self.stopping.is_set():
                return code
            lived = time.monotonic() - worker.started
            if lived > STABLE_SECONDS:
                pause = FIRST_PAUSE
            ended = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
            _say(
                f"worker {worker.index} (pid {pid}) {ended} after {lived:.0f} s; restarting it in {pause:g} s"
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), pause)
                return code
            pause = min(LONGEST_PAUSE, pause * 2)
            if await worker.start():
                assert worker.process is not None
                _say(f"worker {worker.index} (pid {worker.process.pid}) serving on {worker.address} again")

    def _on_signal(self, signum: int) -> None:
        """Pass the signal on (a second one cuts the workers' drain short, as for one referee)."""
        if not self.stopping.is_set():
            self.stopping.set()
            drain = float(self.args.drain_seconds)
            _say(f"stopping {len(self.workers)} workers: NOT_SERVING, draining for {drain:g} s")
            asyncio.get_running_loop().call_later(drain + STOP_SECONDS, self._kill_stragglers)
        for worker in self.workers:
            worker.signal(signum)

    def _kill_stragglers(self) -> None:
        for worker in self.workers:
            if worker.process is not None and worker.process.returncode is None:
                _say(f"worker {worker.index} did not stop within {STOP_SECONDS:g} s of its drain: killed")
                worker.signal(signal.SIGKILL)

    async def _stop_all(self, signum: int) -> None:
        self.stopping.set()
        for worker in self.workers:
            worker.signal(signum)
        await asyncio.gather(*(worker.wait() for worker in self.workers if worker.process is not None))


def _say(line: str) -> None:
    print(f"croupier: {line}", flush=True)
