"""The finished matches of a data directory, listed from their journals while no referee answers
(``croupier web --data croupier-data`` after ``make run`` has stopped its embedded referee).

Each journal's first and last records say the match as a referee would list it; one that shares
its seed with a journal that is not over stays sealed (no seed, no result), as the referee would
keep it (``Referee.sealed``). Journals are re-read only when they change.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

from croupier.clients.scenes import JOURNAL_FOLDERS
from croupier.v1 import match_pb2


@dataclass(frozen=True)
class _Entry:
    stamp: tuple[int, int]
    """The file's modification time and size when read."""
    digest: str
    """Its seed_sha256."""
    info: match_pb2.MatchInfo | None
    """As listed, if it is over (finished or cancelled)."""


class JournalList:
    """The journals of one data directory, kept between polls."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self._entries: dict[Path, _Entry] = {}

    def finished(self) -> list[match_pb2.MatchInfo]:
        """Every finished or cancelled match on disk, oldest first, sealed ones withheld."""
        from croupier.server.messages import withheld

        seen: dict[Path, _Entry] = {}
        for folder in JOURNAL_FOLDERS:
            for path in sorted((self.data / folder).glob("*.jsonl")):
                with contextlib.suppress(OSError):
                    status = path.stat()
                    stamp = (status.st_mtime_ns, status.st_size)
                    entry = self._entries.get(path)
                    seen[path] = entry if entry is not None and entry.stamp == stamp else _read(path, stamp)
        self._entries = seen
        unfinished = {entry.digest for entry in seen.values() if entry.info is None}
        listed = []
        for entry in seen.values():
            if entry.info is None:
                continue
            if entry.digest in unfinished:
                sealed = withheld(entry.info)
                sealed.sealed = True
                listed.append(sealed)
            else:
                listed.append(entry.info)
        return sorted(listed, key=lambda info: (info.created_unix_ms, info.match_id))


def _read(path: Path, stamp: tuple[int, int]) -> _Entry:
    """One journal as listed; a torn or damaged one counts as unfinished (a referee may resume it)."""
    from croupier.server.journal import CLOSING, Cancel, End, header_and_last
    from croupier.server.referee import info_from_journal

    ends = header_and_last(path)
    if ends is None:
        digest = ""
        with contextlib.suppress(OSError, ValueError, AttributeError), path.open("rb") as file:
            digest = str(json.loads(file.readline()).get("seed_sha256", ""))
        return _Entry(stamp, digest, None)
    header, last = ends
    if not isinstance(last, CLOSING):
        return _Entry(stamp, header.seed_sha256, None)
    assert isinstance(last, End | Cancel)
    try:
        return _Entry(stamp, header.seed_sha256, info_from_journal(header, last))
    except (ValueError, KeyError):
        return _Entry(stamp, header.seed_sha256, None)
