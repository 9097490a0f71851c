"""How the referee writes its data files: private, and whole or a valid prefix after any failure.

- Only the referee's user may read them: folders 0700, files 0600 (journals hold discards
  and lockstep answers; seed files, token hashes and the admin token are secrets).
- A file written whole (a token file, a seed file) is replaced by an atomic rename: a
  temporary file beside it, fsync'ed, renamed over it, the folder fsync'ed. A crash or a
  full disk leaves the old file or the new one, never an empty or a torn one.
- A file appended to (journals, ``bots.jsonl``) goes through ``Appender``: a line that cannot
  be written whole (a full disk) is cut off again, so the file still ends with a whole line.
- A file found damaged at start is moved aside (``set_aside``) and its valid prefix kept
  under its own name.

Every byte reaches a data file through ``write_bytes``: the one seam where tests make the
disk full.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700

OUT_OF_ROOM = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.EDQUOT})
"""File errors that mean the referee is full, not broken: callers answer RESOURCE_EXHAUSTED."""


def write_bytes(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write part of it)."""
    written = os.write(fd, data)
    while written < len(data):  # rare: a signal, or a disk filling up mid-write
        written += os.write(fd, memoryview(data)[written:])


def private_folder(path: Path) -> list[str]:
    """Make ``path`` (and its parents) if missing, readable by its owner only; returns a warning
    for a folder others may read that could not be closed to them."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        try:
            path.chmod(FOLDER_MODE)
        except OSError as exc:
            return [f"{path} is mode {mode:o}, not 700, and cannot be made so ({exc.strerror})"]
    return []


def open_private(path: Path, flags: int) -> int:
    """A descriptor on ``path``, created 0600 if missing."""
    return os.open(path, flags | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)


def replace_file(path: Path, data: bytes) -> None:
    """Make ``path`` hold exactly ``data`` (mode 0600), whole or not at all, on disk when this returns."""
    temporary = path.with_name(f".{path.name}.tmp")
    fd = open_private(temporary, os.O_WRONLY | os.O_TRUNC)
    try:
        write_bytes(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temporary.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(temporary, path)
    sync_folder(path.parent)


def sync_folder(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Appender:
    """Appends to a file (0600); each ``append`` is whole in the OS's hands when it returns, or
    cut off again and raised (``OSError``), so the file ends with what was appended whole."""

    def __init__(self, path: Path, *, sync_each: bool = False) -> None:
        self.path = path
        self._sync_each = sync_each
        self._fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        self._size = os.fstat(self._fd).st_size
        self._broken: OSError | None = None
        """Why the file cannot be appended to any more: a failed append could not be cut off."""

    def append(self, data: bytes) -> None:
        if self._broken is not None:
            why = self._broken.strerror
            raise OSError(self._broken.errno, f"an earlier append could not be cut off: {why}")
        try:
            write_bytes(self._fd, data)
            if self._sync_each:
                os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError as cut:
                self._broken = cut  # a torn tail stays: the next start sets it aside
            raise
        self._size += len(data)

    def sync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd < 0


def set_aside(path: Path, keep: bytes) -> Path:
    """Move a damaged file aside as ``NAME.damaged`` (``NAME.damaged-2``... if taken) and put its
    valid prefix ``keep`` back under its own name; returns where the damaged file went."""
    aside = path.with_name(path.name + ".damaged")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.damaged-{number}")
    os.replace(path, aside)
    replace_file(path, keep)
    return aside
