"""A newcomer's first steps, as the README tells them: a referee, a bot token, the README's bot
connected with it; and the one line each command says when no referee answers."""

from __future__ import annotations

import os
import re
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients.terminal import REPO, croupier
from tests.e2e.test_wheel import readme_bot

WAIT = 60


def free_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def no_referee(address: str) -> str:
    return (
        f"no referee answers at {address}: is `croupier serve` running there? "
        "(start one, or give the right --server HOST:PORT)"
    )


def read_until(process: subprocess.Popen[str], stream: str, wanted: str) -> str:
    """The line of the process's stdout or stderr that holds ``wanted`` (a failure after WAIT s)."""
    pipe = getattr(process, stream)
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        deadline = time.monotonic() + WAIT
        seen = []
        while time.monotonic() < deadline:
            if selector.select(timeout=1.0):
                line = pipe.readline()
                if not line:
                    break
                seen.append(line)
                if wanted in line:
                    return line.rstrip("\n")
    raise AssertionError(f"no {wanted!r} in {stream}: {''.join(seen)}")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``croupier serve`` run in tmp_path on a free port (its data in ./croupier-data, the
    default): its address and data directory."""
    process = subprocess.Popen(
        croupier("serve", "--address", "127.0.0.1:0", "--metrics-address", "off"),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = read_until(process, "stdout", "serving on")
        yield line.rpartition(" ")[2], tmp_path / "croupier-data"
    finally:
        stop(process)


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(croupier(*args), capture_output=True, text=True, timeout=WAIT, cwd=cwd)


def readme_steps() -> list[list[str]]:
    """The README's commands after ``make serve``: register the bot, run it with its token."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```sh\nmake serve .*?\n(.*?)```", readme, re.S)
    assert block, "the README shows make serve, then how to get a token and run the bot"
    return [shlex.split(line.partition("#")[0]) for line in block.group(1).splitlines()]


def test_the_readme_path_a_referee_a_token_and_the_readme_bot(
    serve: tuple[str, Path], tmp_path: Path
) -> None:
    address, _ = serve
    register, play = readme_steps()
    assert register == [".venv/bin/croupier", "register", "mybot"]
    # the README's referee listens on the default address; this one on a free port
    env = {**os.environ, "CROUPIER_SERVER": address}
    registered = subprocess.run(
        croupier(*register[1:]), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert registered.returncode == 0, registered.stderr
    [token] = registered.stdout.splitlines()
    assert token.startswith("bot_")
    [told] = registered.stderr.splitlines()
    assert re.fullmatch(rf"registered mybot as b-\w+; play with: --server {address} --token {token}", told), (
        told
    )
    (tmp_path / "mybot.py").write_text(readme_bot())
    assert play == [".venv/bin/python", "mybot.py", "--server", "127.0.0.1:50051", "--token", "TOKEN"]
    bot = subprocess.Popen(
        [sys.executable, "mybot.py", "--server", address, "--token", token],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        connected = read_until(bot, "stderr", "connected to")
        assert connected.endswith(
            f"connected to {address} as mybot, stream options: quiet acceptance, deferred updates, batches"
        )
    finally:
        stop(bot)


def test_register_says_in_one_line_what_is_missing_or_wrong(serve: tuple[str, Path], tmp_path: Path) -> None:
    address, _ = serve
    refused = run("register", "mybot", "--server", address, "--admin-token", "not-the-token")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"croupier register: the referee at {address} refused the admin token from "
        "--admin-token or $CROUPIER_ADMIN_TOKEN: is it that referee's?"
    ]
    elsewhere = run("register", "mybot", "--server", "referee.example:50051")
    assert elsewhere.stderr.splitlines() == [
        "croupier register: give the admin token of the referee at referee.example:50051: "
        "--admin-token or $CROUPIER_ADMIN_TOKEN"
    ]
    no_file = run("register", "mybot", "--server", address, "--data", str(tmp_path / "nowhere"))
    assert no_file.stderr.splitlines() == [
        f"croupier register: no admin token at {tmp_path / 'nowhere' / 'admin-token'}: give the --data of "
        "`croupier serve` (or --admin-token)"
    ]
    assert (elsewhere.returncode, no_file.returncode) == (2, 2)


def test_watch_follow_says_it_is_waiting(serve: tuple[str, Path]) -> None:
    address, _ = serve
    watch = subprocess.Popen(
        croupier("watch", "--follow", "--server", address),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = read_until(watch, "stdout", "waiting")
        assert line == f"waiting for a match to start on {address} (Ctrl-C to stop)"
    finally:
        stop(watch)


def test_every_command_says_in_one_line_that_no_referee_answers(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    register = run("register", "mybot", "--server", address, "--admin-token", "x")
    assert (register.returncode, register.stderr.splitlines()) == (
        1,
        [f"croupier register: {no_referee(address)}"],
    )
    watch = run("watch", "--server", address)
    assert (watch.returncode, watch.stderr.splitlines()) == (1, [f"croupier watch: {no_referee(address)}"])
    (tmp_path / "t.toml").write_text(
        'name = "t"\ndeals = "fresh"\n[[games]]\ngame = "platinum_fish"\nseats = 2\n'
        '[[bots]]\nname = "a"\nexternal = true\n[[bots]]\nname = "b"\nexternal = true\n'
    )
    runner = run(
        "tournament", str(tmp_path / "t.toml"), "--server", address, "--admin-token", "x",
        "--data", str(tmp_path / "data"),
    )  # fmt: skip
    assert (runner.returncode, runner.stderr.splitlines()) == (1, [no_referee(address)])
    (tmp_path / "mybot.py").write_text(readme_bot())
    bot = subprocess.Popen(
        [sys.executable, "mybot.py", "--server", address, "--token", "bot_x"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        line = read_until(bot, "stderr", "no referee")
        assert line.split(" WARNING croupier.bot: ")[1] == f"{no_referee(address)}; retrying until one does"
    finally:
        stop(bot)


FORK_WITH_GRPC_RUNNING = """
import os
import croupier.clients.cli  # what every croupier command imports first, before grpc
import grpc
channel = grpc.insecure_channel("127.0.0.1:1")
try:
    grpc.channel_ready_future(channel).result(timeout=0.5)
except grpc.FutureTimeoutError:
    pass
pid = os.fork()  # a command that starts a process while grpc's threads run
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_grpc_adds_no_line_of_its_own_to_a_commands_errors() -> None:
    """grpc's core logs INFO lines to stderr by default ("Other threads are currently calling into
    gRPC, skipping fork() handlers"): beside a command's one-line error, a second line."""
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    run = subprocess.run(
        [sys.executable, "-c", FORK_WITH_GRPC_RUNNING], capture_output=True, text=True, env=env, timeout=60
    )
    assert (run.returncode, run.stderr) == (0, "")
