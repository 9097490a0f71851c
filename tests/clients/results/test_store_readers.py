"""The results database under a running writer, with real reader processes: ``croupier matches``
and ``croupier ratings`` beside a runner whose viewer opens the same file must not delete the
writer's WAL (each commit since the last checkpoint lives only there), and a kill -9 of the writer
afterwards loses no result it had committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from croupier.clients.results.store import Store

WRITER = Path(__file__).with_name("store_writer.py")


def committed(writer: subprocess.Popen[str], count: int) -> list[int]:
    assert writer.stdout is not None
    ids = []
    while len(ids) < count:
        line = writer.stdout.readline()
        assert line, "the writer ended early"
        ids.append(int(line))
    return ids


def deleted_files(pid: int, folder: Path) -> list[str]:
    """The files of ``folder`` that ``pid`` holds open although they were deleted."""
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            continue  # closed meanwhile
    return [target for target in targets if target.startswith(str(folder)) and target.endswith("(deleted)")]


def test_readers_beside_a_running_writer_keep_its_wal_and_a_kill_loses_no_result(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(db)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        done = committed(writer, 10)
        for command in ("matches", "ratings", "matches"):
            reader = subprocess.run(
                [sys.executable, "-m", "croupier.clients.cli", command, "--db", str(db)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert reader.returncode == 0, reader.stderr
            done += committed(writer, 5)
        deleted = deleted_files(writer.pid, tmp_path)
        wal_kept = (tmp_path / "results.db-wal").exists()
        done += committed(writer, 10)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    with Store(db) as store:
        finished = {match.record.id for match in store.finished()}
    lost = sorted(set(done) - finished)
    assert not lost, f"{len(lost)} of {len(done)} committed results lost after kill -9: {lost[:10]}"
    assert wal_kept and not deleted, f"a reader deleted the writer's WAL under it: {deleted}"
