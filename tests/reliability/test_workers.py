"""``croupier serve --workers 2``: one tournament given one worker's address spreads its matches
over both; a worker killed with SIGKILL mid-set is restarted by the parent and resumes its
matches; SIGTERM stops both cleanly. A bot registered through one worker is known to the other."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from croupier.server.journal import End, Resume, read_records
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc
from tests.reliability.test_referee_killed import ADMIN_TOKEN, WAIT, croupier, done_matches, rows
from tests.reliability.test_replica_killed import MATCHES, start_runner, wait_until_playing

SERVING = re.compile(r"worker (\d+) \(pid (\d+)\) serving on (\S+?)(,|$| again)", re.MULTILINE)
METADATA = (("croupier-token", ADMIN_TOKEN),)


class Workers:
    """A ``croupier serve --workers 2`` on loopback, its output in a file."""

    def __init__(self, data: Path, out: Path) -> None:
        self.out = out
        self.data = data
        argv = croupier(
            "serve", "--workers", "2", "--address", "127.0.0.1:0", "--data", str(data),
            "--metrics-address", "127.0.0.1:0", "--admin-token", ADMIN_TOKEN,
        )  # fmt: skip
        with out.open("ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self.wait_for(lambda text: "spreads over them" in text, "the workers did not start")

    def output(self) -> str:
        return self.out.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, ready: Callable[[str], bool], failure: str) -> str:
        deadline = time.monotonic() + WAIT
        while True:
            text = self.output()
            if ready(text):
                return text
            assert self.process.poll() is None, text
            assert time.monotonic() < deadline, f"{failure}:\n{text}"
            time.sleep(0.05)

    def serving(self) -> dict[int, tuple[int, str]]:
        """Each worker's latest (pid, address), as the parent printed them."""
        return {int(i): (int(pid), address) for i, pid, address, _ in SERVING.findall(self.output())}

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(WAIT)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"


@pytest.mark.timeout(300)
def test_a_tournament_spreads_over_two_workers_and_rides_out_one_killed(tmp_path: Path) -> None:
    data = tmp_path / "referee"
    workers = Workers(data, tmp_path / "serve.log")
    try:
        first = workers.serving()
        assert sorted(first) == [0, 1]
        runner, db = start_runner(tmp_path, first[0][1])  # one worker's address: it spreads over both
        try:
            wait_until_playing(runner, db, data / "worker-1")
            os.kill(first[1][0], signal.SIGKILL)
            assert done_matches(db) < MATCHES, "the tournament ended before the worker was killed"
            workers.wait_for(lambda text: " again" in text, "worker 1 was not restarted")
            output = runner.communicate(timeout=WAIT * 3)[0].decode()
        finally:
            runner.kill()
        restarted = workers.serving()
        log = workers.output()
    finally:
        code = workers.stop()

    assert runner.returncode == 0, output
    assert "worker 1 (pid" in log and "was killed by SIGKILL" in log and "restarting it in" in log
    assert restarted[1][1] == first[1][1], "worker 1 came back on another address"
    assert restarted[1][0] != first[1][0]
    # every match done once, spread over both workers, each in the journal of the worker recorded
    assert rows(db, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", MATCHES)]
    replicas = dict(rows(db, "SELECT replica, count(*) FROM matches GROUP BY replica"))
    assert set(replicas) == {first[0][1], first[1][1]}, replicas
    folders = {first[i][1]: data / f"worker-{i}" / "matches" for i in (0, 1)}
    for replica, match_id in rows(db, "SELECT replica, referee_match_id FROM matches"):
        records = read_records(folders[str(replica)] / f"{match_id}.jsonl")
        assert isinstance(records[-1], End), f"{match_id} did not end on {replica}"
    resumed = [
        p for p in folders[first[1][1]].glob("*.jsonl") if any(isinstance(r, Resume) for r in read_records(p))
    ]
    assert resumed, "no match was in progress on worker 1 when it was killed"
    # a clean stop: the parent says so, exits 0, and leaves no worker behind
    assert code == 0, workers.output()
    assert "stopped (2 workers)" in workers.output()
    assert not any(alive(pid) for pid, _ in restarted.values())


def test_a_bot_registered_through_one_worker_plays_on_the_other(tmp_path: Path) -> None:
    workers = Workers(tmp_path / "referee", tmp_path / "serve.log")
    try:
        addresses = [workers.serving()[i][1] for i in (0, 1)]
        with grpc.insecure_channel(addresses[1]) as one, grpc.insecure_channel(addresses[0]) as other:
            reply = admin_pb2_grpc.AdminServiceStub(one).RegisterBot(
                admin_pb2.RegisterBotRequest(name="shared"), metadata=METADATA
            )
            info = admin_pb2_grpc.AdminServiceStub(other).GetReferee(
                admin_pb2.GetRefereeRequest(), metadata=METADATA
            )
            assert list(info.workers) == addresses
            listed = admin_pb2_grpc.AdminServiceStub(other).ListBots(
                admin_pb2.ListBotsRequest(), metadata=METADATA
            )
            assert reply.bot_id in [bot.bot_id for bot in listed.bots]
            # its token opens a stream on the other worker: welcomed, as the bot it is
            hello = bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1, name="shared"))
            stream = bots_pb2_grpc.BotServiceStub(other).Play(
                iter([hello]), metadata=(("croupier-token", reply.token),)
            )
            welcome = next(stream)
            stream.cancel()
            assert welcome.WhichOneof("message") == "welcome", welcome
            # registering its id again with another token is refused on either worker
            again = admin_pb2.RegisterBotRequest(name="shared", bot_id=reply.bot_id, token="x" * 30)
            with pytest.raises(grpc.RpcError) as refused:
                admin_pb2_grpc.AdminServiceStub(other).RegisterBot(again, metadata=METADATA)
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    finally:
        assert workers.stop() == 0


def test_workers_whose_parent_is_killed_stop_by_themselves(tmp_path: Path) -> None:
    workers = Workers(tmp_path / "referee", tmp_path / "serve.log")
    pids = [pid for pid, _ in workers.serving().values()]
    workers.process.kill()
    workers.process.wait(WAIT)
    deadline = time.monotonic() + WAIT
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"workers left behind: {workers.output()}"
        time.sleep(0.05)


def run_serve(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        croupier("serve", "--data", str(tmp_path / "data"), "--metrics-address", "off", *flags),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


@pytest.mark.parametrize("count", ["0", "-1", "lots", "100000"])
def test_a_worker_count_that_is_not_one_to_256_or_auto_is_one_line(tmp_path: Path, count: str) -> None:
    done = run_serve(tmp_path, "--address", "127.0.0.1:0", f"--workers={count}")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"croupier serve: --workers {count!r}: give 1 to 256 workers, or auto (one per core: "
        f"{len(os.sched_getaffinity(0))} here)"
    ]
    assert not (tmp_path / "data").exists()


def taken_above_a_free_port() -> socket.socket:
    """A listening socket on a port P whose P - 1 is free: worker 0's port free, worker 1's taken."""
    while True:
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with socket.socket() as below:
            try:
                below.bind(("127.0.0.1", taken.getsockname()[1] - 1))
                return taken
            except OSError:
                taken.close()


def test_a_port_in_use_for_any_worker_is_one_line_naming_it(tmp_path: Path) -> None:
    with taken_above_a_free_port() as taken:
        port = taken.getsockname()[1]
        done = run_serve(tmp_path, "--address", f"127.0.0.1:{port - 1}", "--workers", "2")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1
    assert len(lines) == 1 and lines[0].startswith(
        f"croupier serve: cannot listen on 127.0.0.1:{port} for worker 1 (Address already in use)"
    ), done.stderr


def test_a_worker_folder_that_cannot_be_made_is_one_line_before_any_worker_starts(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "worker-1").write_text("not a folder")
    done = run_serve(tmp_path, "--address", "127.0.0.1:0", "--workers", "2")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"croupier serve: cannot use {tmp_path / 'data' / 'worker-1'} (File exists): give the referee's user "
        "the data directory and its files"
    ]
    assert done.stdout == ""
