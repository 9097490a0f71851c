"""What the load benchmarks share: the machine's description, latency figures, server subprocesses,
the referee's command line and its admin calls.

Servers run in their own process, so the load generator and the server each
have a core (on a two-core machine they share both with whatever else runs:
``machine()`` reports the load average seen before the run, to read the
figures by).
"""

from __future__ import annotations

import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import grpc
from google.protobuf.internal import api_implementation

from croupier.engine.games import get_game
from croupier.v1 import admin_pb2
from croupier.wire import convert

LISTENING = re.compile(r"serving on [^\s:]+:(\d+)")
ADMIN_TOKEN = "bench-admin-token"
TOKEN = "croupier-token"
ADMIN = [(TOKEN, ADMIN_TOKEN)]
"""The admin calls' metadata."""


def machine() -> str:
    """One line: the processor, cores, Python, grpcio and protobuf backend, and the load right now."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{model}, {os.cpu_count()} cores, python {platform.python_version()}, grpcio {grpc.__version__}, "
        f"protobuf {api_implementation.Type()}; load average {load}"
    )


@dataclass
class Latencies:
    """Round-trip times in seconds; figures in microseconds."""

    samples: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        self.samples.append(seconds)

    @classmethod
    def merged(cls, many: Sequence[Latencies]) -> Latencies:
        return cls([sample for each in many for sample in each.samples])

    def percentile(self, p: float) -> float:
        """The p-th percentile in microseconds (0 with no samples)."""
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1e6

    def __len__(self) -> int:
        return len(self.samples)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no VmRSS for process {pid}")


class Server:
    """A server subprocess, ready once it prints a line matching ``ready`` (by default ``serving on
    HOST:PORT``, whose port is kept); the lines it printed until then in ``output``. Stopped on exit."""

    def __init__(
        self,
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        stderr: IO[str] | None = None,
        ready: re.Pattern[str] = LISTENING,
        stop_seconds: float = 10,
    ) -> None:
        self.argv = list(argv)
        self.env = env
        self.stderr = stderr
        self.ready = ready
        self.stop_seconds = stop_seconds
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.output: list[str] = []

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def __enter__(self) -> Server:
        self.process = subprocess.Popen(
            self.argv,
            preexec_fn=_die_with_parent,
            stdout=subprocess.PIPE,
            stderr=self.stderr if self.stderr is not None else subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                self.__exit__()
                raise RuntimeError(f"{self.argv[:4]} exited before listening ({self.process.wait()})")
            self.output.append(line)
            if listening := LISTENING.search(line):
                self.port = self.port or int(listening.group(1))
            if self.ready.search(line):
                return self
        self.__exit__()
        raise RuntimeError(f"{self.argv[:4]} did not listen within 60 s")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.terminate()
        try:
            self.process.wait(self.stop_seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM it when this process dies, however it dies (no stray servers)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def python(*args: str) -> list[str]:
    """argv running this Python on ``args``."""
    return [sys.executable, *args]


def referee_argv(data: Path, *extra: str) -> list[str]:
    """``croupier serve`` on a port of its choosing, journals in ``data``, metrics off."""
    return python(
        "-m", "croupier.server.cli", "--address", "127.0.0.1:0", "--data", str(data),
        "--admin-token", ADMIN_TOKEN, "--metrics-address", "off", *extra,
    )  # fmt: skip


def create_request(
    game: str, seats: list[admin_pb2.SeatSpec], seed: int, **options: object
) -> admin_pb2.CreateMatchRequest:
    """A match of ``game`` for ``seats``: ``options`` over the defaults, the referee's clocks."""
    values = get_game(game).options({"players": len(seats), **options})
    return admin_pb2.CreateMatchRequest(options=convert.codec(game).options(values), seats=seats, seed=seed)


def spread(values: Sequence[float]) -> str:
    """``median (min-max)`` of repeated measurements."""
    if len(values) == 1:
        return f"{values[0]:,.0f}"
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"
