"""How much of the machine a jailed bot may take: its processes, memory and CPU (jail.py applies it).

Two ways, the first the runner can have:

- cgroup v2: a group of the bot's own under ``/sys/fs/cgroup/croupier`` with ``pids.max``,
  ``memory.max`` (no swap) and ``cpu.max``: the limits hold for all of its processes together,
  as Docker's do;
- rlimits, where no cgroup v2 with those controllers can be made (a cgroup v1 or hybrid host, a
  container without its cgroup delegated): ``RLIMIT_NPROC`` counts every process and thread of
  the bot's own user id, ``RLIMIT_DATA`` bounds each process's memory (a bot in several processes
  may take more in all).

Either way its CPU is ``ceil(cpus)`` cores of its own (the seccomp filter keeps it from moving:
syscalls.py) at the lowest priority (nice 19), so it takes no time a referee wants; cpu.max
bounds it to ``cpus`` within them.

Only the standard library is imported: the jail runs this.
"""

from __future__ import annotations

import math
import os
import resource
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("cpu", "memory", "pids")
GROUP = "croupier"
"""The folder under the cgroup v2 root that holds every jailed bot's group."""
PERIOD_US = 100_000
"""cpu.max's period: the default, as Docker's --cpus sets it."""
NICEST = 19


@dataclass(frozen=True)
class Limits:
    """A bot's share of the machine (from its tournament's [sandbox], sandbox.py)."""

    pids: int = 128
    memory: int = 512 << 20
    """Bytes."""
    cpus: float = 1.0

    def argv(self) -> list[str]:
        """The jail's options that carry these limits."""
        return ["--pids", str(self.pids), "--memory", str(self.memory), "--cpus", f"{self.cpus:g}"]


def cgroup_v2(root: Path = CGROUP_ROOT) -> tuple[Path | None, str]:
    """The folder jailed bots' groups are made in (None: there is none) and why not."""
    if not (root / "cgroup.controllers").exists():
        return None, f"{root} is not a cgroup v2 hierarchy"
    available = (root / "cgroup.controllers").read_text().split()
    missing = [name for name in CONTROLLERS if name not in available]
    if missing:
        return None, f"cgroup v2 at {root} has no {', '.join(missing)} controller"
    parent = root / GROUP
    try:
        _enable(root)
        parent.mkdir(exist_ok=True)
        _enable(parent)
    except OSError as exc:
        return None, f"cannot make a cgroup v2 group under {root}: {exc.strerror or exc}"
    return parent, ""


def _enable(group: Path) -> None:
    """Let ``group``'s children have the controllers (a no-op where they have them)."""
    enabled = (group / "cgroup.subtree_control").read_text().split()
    wanted = [name for name in CONTROLLERS if name not in enabled]
    if wanted:
        (group / "cgroup.subtree_control").write_text(" ".join(f"+{name}" for name in wanted))


def describe(limits: Limits, parent: Path | None, why_not: str) -> str:
    """What the run says about its bots' limits, in one line."""
    shares = f"{limits.pids} processes, {limits.memory >> 20} MiB, {limits.cpus:g} CPU"
    if parent is not None:
        return f"bots' limits: {shares} each, by cgroup v2 ({parent})"
    cores = math.ceil(limits.cpus)
    return (
        f"bots' limits: {limits.pids} processes, {limits.memory >> 20} MiB per process, "
        f"{cores} core{'s' * (cores > 1)} at nice {NICEST} each, by rlimits (no cgroup: {why_not})"
    )


def join_cgroup(parent: Path, name: str, limits: Limits) -> Path:
    """Make the bot's group, set its limits and move this process into it (as root, before the
    bot starts: its processes are born in it); the group, to remove when they have ended."""
    group = parent / name
    group.mkdir()
    (group / "pids.max").write_text(str(limits.pids))
    (group / "memory.max").write_text(str(limits.memory))
    if (group / "memory.swap.max").exists():
        (group / "memory.swap.max").write_text("0")
    (group / "cpu.max").write_text(f"{round(limits.cpus * PERIOD_US)} {PERIOD_US}")
    (group / "cgroup.procs").write_text("0")  # this process
    return group


def apply(limits: Limits, first_core: int, rlimits: bool) -> None:
    """In the bot's process, as its own user, before its command starts: ``ceil(cpus)`` cores
    from ``first_core`` on at the lowest priority, and with ``rlimits`` (no cgroup) its processes
    and memory as hard limits it cannot raise."""
    kept = [(resource.RLIMIT_NICE, 0), (resource.RLIMIT_CORE, 0)]  # no way back up from nice 19
    if rlimits:
        kept += [(resource.RLIMIT_NPROC, limits.pids), (resource.RLIMIT_DATA, limits.memory)]
    for which, value in kept:
        resource.setrlimit(which, (value, value))
    cores = sorted(os.sched_getaffinity(0))
    count = min(len(cores), math.ceil(limits.cpus))
    os.sched_setaffinity(0, [cores[(first_core + step) % len(cores)] for step in range(count)])
    os.setpriority(os.PRIO_PROCESS, 0, NICEST)
