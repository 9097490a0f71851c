"""What the workers of one ``croupier serve --workers N`` share, through files under its --data.

Each worker is a whole referee with a data directory of its own, ``DATA/worker-I``: its journals,
seed files and ``bots.jsonl`` are written by it alone (no two processes ever write one file). They
share, read-only:

- ``DATA/admin-token``, made by the parent before any worker starts;
- each other's ``bots.jsonl``: a bot registered through any worker is known to all, because a
  worker that meets a token or bot id it does not know reads what its siblings appended since it
  last looked. Registrations take ``DATA/bots.lock`` (``flock``) so that two workers never hand
  out one bot id with two tokens. ``DATA/bots.jsonl``, of a referee once run on DATA without
  --workers, is read too: its bots keep their tokens;
- ``DATA/workers.json``, written by the parent once every worker listens: the address of each,
  which ``GetReferee`` reports so that a tournament runner given one of them spreads over all.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from croupier.server.datafiles import open_private, replace_file
from croupier.wire.errors import Unavailable

READY = "croupier: worker ready: "
"""How a worker tells its parent where it listens: this, then JSON, one line on its stdout."""
WORKER_FOLDER = "worker-"
ADDRESSES = "workers.json"
BOTS = "bots.jsonl"
LOCK_SECONDS = 2.0
"""How long a registration waits for another worker's: the lock is held for one append and fsync,
and a worker frozen while holding it must not freeze its siblings' event loops for good."""


def worker_data(root: Path, index: int) -> Path:
    """Where worker ``index`` of the group under ``root`` keeps its data."""
    return root / f"{WORKER_FOLDER}{index}"


def write_addresses(root: Path, addresses: list[str]) -> None:
    """Say where each worker listens (the parent, once all do)."""
    replace_file(root / ADDRESSES, (json.dumps({"workers": addresses}) + "\n").encode())


def read_addresses(root: Path) -> list[str]:
    """Every worker's address, in worker order; empty until the parent has written them."""
    try:
        addresses = json.loads((root / ADDRESSES).read_bytes())["workers"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [a for a in addresses if isinstance(a, str)] if isinstance(addresses, list) else []


class Siblings:
    """The other workers of a group, seen from one of them: their registered bots, read as they grow."""

    def __init__(self, root: Path, own: Path) -> None:
        self.root = root
        self.own = own.resolve()
        self._read: dict[Path, tuple[int, int]] = {}
        """Per sibling's bots file: (inode, bytes read). Only whole lines are ever counted as read."""

    def new_bot_lines(self) -> list[bytes]:
        """The whole lines the siblings' ``bots.jsonl`` files gained since the last call. A file
        set aside and rewritten by its worker (a damaged tail) is read again from its start."""
        lines: list[bytes] = []
        folders = [self.root, *sorted(self.root.glob(f"{WORKER_FOLDER}*"))]
        for path in [folder / BOTS for folder in folders if folder.resolve() != self.own]:
            try:
                seen = os.stat(path)
                if self._read.get(path) == (seen.st_ino, seen.st_size):
                    continue  # unchanged since read: a stat, not an open and a read (unknown tokens ask)
                with path.open("rb") as file:
                    inode = os.fstat(file.fileno()).st_ino
                    known_inode, offset = self._read.get(path, (inode, 0))
                    if known_inode != inode:
                        offset = 0
                    file.seek(offset)
                    grown = file.read()
            except OSError:
                continue  # not there yet, or unreadable: nothing registered there that we can use
            whole = grown[: grown.rfind(b"\n") + 1]  # a line being appended is read next time
            self._read[path] = (inode, offset + len(whole))
            lines.extend(whole.splitlines(keepends=True))
        return lines

    @contextlib.contextmanager
    def registering(self) -> Iterator[None]:
        """Held while a worker registers a bot: one registration in the group at a time."""
        fd = open_private(self.root / "bots.lock", os.O_RDWR)
        try:
            give_up = time.monotonic() + LOCK_SECONDS
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= give_up:
                        raise Unavailable(
                            f"another worker has been registering a bot for {LOCK_SECONDS:g} s: "
                            "nothing was registered; try again"
                        ) from None
                    time.sleep(0.005)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock
