"""Open files: each live match keeps its journal open, and every connection (health checks
included) needs a descriptor too. The referee raises its soft limit at start where the OS allows,
and stops creating matches while a reserve is left, so that it never runs out of descriptors for
the connections that would let an operator see what is wrong."""

from __future__ import annotations

import os

try:
    import resource
except ImportError:  # not on Windows: no limit to read or raise
    resource = None  # type: ignore[assignment]

FD_DIRS = ("/proc/self/fd", "/dev/fd")


def raise_soft_limit() -> tuple[int, int] | None:
    """Raise the soft RLIMIT_NOFILE to the hard one (capped: an unlimited hard limit is not a
    number the kernel takes); the (soft, hard) limits then in force, None where there are none."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 1 << 20) if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass  # the OS says no (macOS caps it at OPEN_MAX): keep what we have
    return soft, hard


def reserve(soft: int) -> int:
    """Descriptors kept free of matches: a tenth of the limit, 64 to 1024."""
    return max(64, min(1024, soft // 10))


def room_for_a_match() -> str | None:
    """None if one more match leaves the reserve free, else why not (for RESOURCE_EXHAUSTED)."""
    if resource is None:
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    used = open_files()
    if soft == resource.RLIM_INFINITY or used is None:
        return None
    kept = reserve(soft)
    if used + 2 + kept <= soft:  # a match opens its journal, and its seed file for a moment
        return None
    return (
        f"{used} of the referee's {soft} open files are in use, and {kept} are kept for connections "
        "and health checks"
    )


def open_files() -> int | None:
    """Descriptors this process has open, where the OS lists them."""
    for folder in FD_DIRS:
        try:
            return len(os.listdir(folder)) - 1  # less the one listing the folder
        except OSError:
            continue
    return None
