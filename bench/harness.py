"""What the load benchmarks share: the machine's description, latency figures, server subprocesses.

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
from typing import IO

import grpc
from google.protobuf.internal import api_implementation

LISTENING = re.compile(r"serving on [^\s:]+:(\d+)")


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

    def extend(self, other: Latencies) -> None:
        self.samples.extend(other.samples)

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
    """A server subprocess that prints ``serving on HOST:PORT`` once it listens; stopped on exit."""

    def __init__(
        self, argv: Sequence[str], env: dict[str, str] | None = None, stderr: IO[str] | None = None
    ) -> None:
        self.argv = list(argv)
        self.env = env
        self.stderr = stderr
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

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
                raise RuntimeError(f"{self.argv[:4]} exited before listening ({self.process.wait()})")
            found = LISTENING.search(line)
            if found:
                self.port = int(found.group(1))
                return self
        raise RuntimeError(f"{self.argv[:4]} did not listen within 60 s")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.terminate()
        try:
            self.process.wait(10)
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


def spread(values: Sequence[float]) -> str:
    """``median (min-max)`` of repeated measurements."""
    if len(values) == 1:
        return f"{values[0]:,.0f}"
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"
