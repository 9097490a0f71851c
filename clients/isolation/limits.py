"""A bot's container limits (``Sandbox``) and how their sizes read: what a tournament file's
[sandbox] tables give, below both the config that reads them and the launcher (containers.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SIZE = re.compile(r"([1-9][0-9]*)([kmg]?)b?", re.IGNORECASE)
MIN_MEMORY = 16 << 20
"""Below this not even Python starts."""


@dataclass(frozen=True)
class Sandbox:
    """The limits of a bot's container; the defaults suit one Python bot playing a few matches."""

    memory: str = "512m"
    """Memory, with /tmp's files and without swap; over it the kernel kills the bot."""
    cpus: float = 1.0
    """Cores' worth of CPU time."""
    pids: int = 128
    """Processes and threads (grpc starts a dozen): a fork bomb stops here."""
    tmp: str = "64m"
    """The size of the tmpfs at /tmp, the one place it can write."""


def size_bytes(size: str) -> int | None:
    """A size as Docker reads it ("512m", "1g", "65536"), in bytes; None if it is not one."""
    found = SIZE.fullmatch(size)
    if found is None:
        return None
    return int(found.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[found.group(2).lower()]
