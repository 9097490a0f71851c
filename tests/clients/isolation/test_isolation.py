"""Command bots run isolated: a hostile bot reads none of the referee's or the runner's secrets,
and gets out of its jail by none of the ways out of issue #41.

The hostile bot (hostile_bot.py) plays in a tournament on a referee with a Unix socket and tries
every attack it knows; isolated, each fails, and with ``isolation = "off"`` each succeeds (which
shows the attacks work, so the test can fail). Isolation needs root: this machine and CI are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from croupier.clients.isolation import policy as isolation
from croupier.clients.isolation import syscalls
from croupier.clients.tournament.launch import BotProcess
from croupier.server.app import Croupier, create_server
from tests.clients.isolation.hostile_bot import ATTACKS, ESCAPES, TWIN_CHANNELS
from tests.toolchains import missing

FILE = """
name = "hostile"
isolation = "{isolation}"

[clock]
decision_ms = 10000
bank_ms = 30000

[[games]]
game = "platinum_fish"
seats = 2

[[bots]]
name = "hostile"
command = "python hostile_bot.py referee data pids.json sock/referee.sock"

[[bots]]
name = "random"
command = "croupier bot --strategy random"
"""
ARGV_ATTACK = "a token on a command line"
"""Fails either way: no bot's token is ever on a command line (ps shows every one)."""

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="isolating bots needs root (CI runs as root)")


@pytest.fixture(autouse=True)
def libseccomp() -> None:
    """The jail's seccomp filter needs Debian's libseccomp2 (.ci/toolchains installs it)."""
    if os.geteuid() == 0:
        try:
            syscalls.Filter()
        except OSError as exc:
            missing(f"{exc}: the jail's seccomp filter cannot be built")


@pytest.fixture
async def referee(tmp_path: Path) -> AsyncIterator[Croupier]:
    """A referee of its own data (its admin token in its admin-token file), with a Unix socket
    that any local process may connect to, as bots in containers reach it."""
    tmp_path.chmod(0o755)  # the runner's working directory: the bot's own files are here
    (tmp_path / "sock").mkdir(mode=0o755)
    shutil.copy(Path(__file__).with_name("hostile_bot.py"), tmp_path)
    croupier = await create_server(
        "127.0.0.1:0", tmp_path / "referee", unix_socket=tmp_path / "sock/referee.sock"
    )
    yield croupier
    await croupier.stop(grace=None)


LEFT_IN = ("/var/tmp", "/run/lock")
"""Where the bot leaves a file beside the runner's marker."""
RUNNER_ONLY = "CROUPIER_TEST_RUNNER_ONLY"
"""A variable of the runner's environment that no bot is given."""


async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"hello from the machine")
    await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def local_services() -> AsyncIterator[dict[str, object]]:
    """What the hostile bot tries to reach: another TCP service on loopback, an abstract Unix
    socket, a marker file in each folder of LEFT_IN (the bot's files beside it removed after), a
    world-writable folder of the machine's."""
    marker = f"croupier-marker-{secrets.token_hex(8)}"
    service = await asyncio.start_server(hello, "127.0.0.1", 0)
    abstract = await asyncio.start_unix_server(hello, "\0" + marker)
    for folder in LEFT_IN:
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, marker).write_text("the runner's")
    shared = Path("/var/cache", marker)  # a world-writable folder, as a machine may have
    shared.mkdir()
    shared.chmod(0o1777)
    try:
        yield {
            "service": service.sockets[0].getsockname()[1],
            "abstract": marker,
            "marker": marker,
            "shared": str(shared),
        }
    finally:
        shutil.rmtree(shared)
        service.close()
        abstract.close()
        for folder in LEFT_IN:
            Path(folder, marker).unlink(missing_ok=True)
            Path(folder, marker + ".bot").unlink(missing_ok=True)
        for folder in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm"):  # what twins left for each other
            for left in Path(folder).glob(f"croupier-twins-{marker}.*"):
                left.unlink()


def left_behind(marker: str) -> list[str]:
    """The hostile bot's files that outlived it on the machine."""
    return [folder for folder in LEFT_IN if Path(folder, marker + ".bot").exists()]


async def attacks(
    tmp_path: Path, referee: Croupier, mode: str, left: list[str] | None = None, file: str = FILE
) -> dict[str, dict[str, str | None]]:
    """Play the tournament with ``isolation = mode``; what each of the hostile bot's attacks got
    (and in ``left`` the folders where its files outlived it)."""
    (tmp_path / "t.toml").write_text(file.format(isolation=mode))
    async with local_services() as services:
        runner = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "croupier.clients.cli", "tournament", "t.toml", "--plain"),
            *("--samples", "20", "--server", f"127.0.0.1:{referee.port}", "--data", "data"),
            *("--unix-socket", "sock/referee.sock"),
            cwd=tmp_path,
            env={**os.environ, "CROUPIER_ADMIN_TOKEN": referee.admin_token, RUNNER_ONLY: "the runner's"},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        known = {"runner": runner.pid, "referee": os.getpid(), "port": referee.port, "variable": RUNNER_ONLY}
        known["twins"] = file == TWINS
        (tmp_path / "pids.json").write_text(json.dumps({**known, **services}) + "\n")
        out, _ = await asyncio.wait_for(runner.communicate(), 300)
        if left is not None:
            left.extend(left_behind(str(services["marker"])))
    assert runner.returncode == 0, out.decode()
    tried = {}
    for log in sorted((tmp_path / "data" / "logs").glob("hostile-*/hostile*.log")):
        for line in log.read_text().splitlines():
            if line.startswith("ATTACK "):
                attack = json.loads(line.removeprefix("ATTACK "))
                name = f"{log.stem}: {attack['attack']}" if "#" in log.stem else attack["attack"]
                if name not in tried or attack["got"] is not None:  # a restarted bot tries again:
                    tried[name] = attack  # what got through, by any of its processes
    return tried


@root_only
async def test_an_isolated_bot_reads_no_secret_and_makes_no_admin_call(
    tmp_path: Path, referee: Croupier
) -> None:
    left: list[str] = []
    tried = await attacks(tmp_path, referee, "required", left)
    assert sorted(tried) == sorted(ATTACKS + ESCAPES)
    got = {name: line["got"] for name, line in tried.items() if line["got"] is not None}
    assert got == {}, got
    assert left == []
    # the admin call reached the referee and was refused: no admin token in reach, only its own
    assert "PERMISSION_DENIED" in str(tried["admin call on the Unix socket"]["error"])
    # each limit was met, not missed: the children and the memory stopped at the share's size
    assert "Resource temporarily unavailable" in str(tried["400 children"]["error"])
    assert "Network is unreachable" in str(tried["TCP to another local service"]["error"])


async def test_with_isolation_off_every_attack_but_the_command_line_succeeds(
    tmp_path: Path, referee: Croupier
) -> None:
    left: list[str] = []
    tried = await attacks(tmp_path, referee, "off", left)
    failed = {name: line["error"] for name, line in tried.items() if line["got"] is None}
    assert failed.keys() == {ARGV_ATTACK}, failed
    assert left == list(LEFT_IN)
    assert referee.admin_token in str(tried["admin-token"]["got"])
    assert "hostile" in str(tried["admin call on the Unix socket"]["got"])  # it listed the bots


def test_required_isolation_without_root_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from croupier.clients.cli import main

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    (tmp_path / "t.toml").write_text(FILE.format(isolation="required"))
    code = main(["tournament", str(tmp_path / "t.toml"), "--data", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f'{tmp_path / "t.toml"}: isolation = "required", but bots cannot be isolated here: '
        "the runner is not root\n"
    )


def test_auto_without_root_says_so_in_one_line_and_off_says_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert isolation.choose("auto", []) == (None, isolation.AS_YOU)
    assert isolation.choose("off", []) == (None, None)


@root_only
def test_a_bot_folder_others_cannot_read_is_why_isolation_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path.chmod(0o700)  # the bot's own user cannot list it
    monkeypatch.chdir(tmp_path)
    jail, line = isolation.choose("auto", [])
    assert jail is None
    assert line is not None and line.startswith("bots run as you (isolating them failed: ")
    assert "Permission denied" in line


def running(marker: str) -> list[int]:
    """The processes whose command line holds ``marker`` (root sees every pid namespace's)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


@root_only
@pytest.mark.parametrize("ignores_sigterm", [False, True])
async def test_a_jailed_bot_is_stopped_with_its_launcher_and_its_log_is_kept(
    tmp_path: Path, ignores_sigterm: bool
) -> None:
    marker = f"jailed-{secrets.token_hex(8)}"  # this run's alone: never another run's leftovers
    stubborn = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " if ignores_sigterm else ""
    # the bot's own line, not the log's line of the jail's command (its --uid N)
    script = f"{stubborn}import os, time; print('bot' + '-uid', os.getuid(), flush=True); time.sleep(600)"
    argv = isolation.Jail([tmp_path]).wrap([sys.executable, "-c", script, marker])
    log = tmp_path / "ann.log"
    bot = BotProcess("ann", argv, os.environ, log, lambda note: None)
    bot.start()
    while not log.exists() or "bot-uid " not in log.read_text():
        await asyncio.sleep(0.05)
    assert int(log.read_text().split("bot-uid ")[1].split()[0]) >= isolation.FIRST_UID  # not root's
    assert running(marker)  # the watchdog, the jail, its process 1 and the bot
    await bot.stop()
    for _ in range(1200):  # a minute: the watchdog kills 3 s after asking, on a loaded machine later
        if not running(marker):
            break
        await asyncio.sleep(0.05)
    assert not running(marker)


@root_only
async def test_a_jailed_bot_that_ignores_sigterm_dies_with_its_watchdog_when_that_is_killed(
    tmp_path: Path,
) -> None:
    """The runner kills a watchdog that does not end in time (BotProcess.stop): on a loaded machine its
    own kill may not have come yet, and nothing else would end the jail and the bot."""
    marker = f"jailed-{secrets.token_hex(8)}"
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    script += "print('u' + 'p!', flush=True); time.sleep(600)"
    argv = isolation.Jail([tmp_path]).wrap([sys.executable, "-c", script, marker])
    log = tmp_path / "ann.log"
    bot = BotProcess("ann", argv, os.environ, log, lambda note: None)
    bot.start()
    while not log.exists() or "up!" not in log.read_text():  # not the log's line of the command
        await asyncio.sleep(0.05)
    assert len(running(marker)) == 4  # the watchdog, the jail, its process 1 and the bot
    assert bot._process is not None
    os.kill(bot._process.pid, signal.SIGKILL)
    for _ in range(600):
        if not running(marker):
            break
        await asyncio.sleep(0.05)
    assert not running(marker)
    await bot.stop()


TWINS = FILE.replace('isolation = "{isolation}"', 'isolation = "{isolation}"\nprocesses = "per_rotation"')
"""Two instances of the hostile bot (two rotations of a two-seat set), each its own process."""


def twin_channels(tried: dict[str, dict[str, str | None]]) -> dict[str, str | None]:
    """What each instance got through each channel to its twin, by "INSTANCE: CHANNEL"."""
    return {name: line["got"] for name, line in tried.items() if name.partition(": ")[2] in TWIN_CHANNELS}


@root_only
async def test_two_jailed_instances_of_one_bot_find_no_way_to_each_other(
    tmp_path: Path, referee: Croupier
) -> None:
    channels = twin_channels(await attacks(tmp_path, referee, "required", file=TWINS))
    assert len(channels) == 2 * len(TWIN_CHANNELS)  # both instances tried every channel
    assert {name: got for name, got in channels.items() if got is not None} == {}


async def test_two_instances_of_one_bot_talk_with_isolation_off(tmp_path: Path, referee: Croupier) -> None:
    """The channels work: without the jail, every one but watching the twin's sealed match."""
    channels = twin_channels(await attacks(tmp_path, referee, "off", file=TWINS))
    assert len(channels) == 2 * len(TWIN_CHANNELS)
    through = {name.partition(": ")[2] for name, got in channels.items() if got is not None}
    assert through == set(TWIN_CHANNELS) - {"its twin's live match watched"}, channels


WRITES_ITS_FOLDER = (
    "import pathlib, runpy, sys; pathlib.Path('state.txt').write_text('x'); "
    "sys.argv = ['croupier', 'bot', '--strategy', 'random']; "
    "runpy.run_module('croupier.clients.cli', run_name='__main__')"
)
"""A bot that keeps its state in its working directory: nothing a jailed bot may do."""


@root_only
async def test_check_bot_jails_the_bot_as_a_match_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot that passes check-bot runs in a match: check-bot runs it in the same jail (here a bot
    that cannot run in one fails it, and passes with isolation off)."""
    from croupier.clients.checkbot.cli import check

    tmp_path.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    plain = await check(
        [sys.executable, "-m", "croupier.clients.cli", "bot"], ["hello"], 120, isolation="required"
    )
    assert [verdict.passed for verdict in plain] == [True]
    assert "bots' limits: 128 processes" in capsys.readouterr().out  # it said how it jails
    writer = [sys.executable, "-c", WRITES_ITS_FOLDER]
    jailed = await check(writer, ["hello"], 60, isolation="required")
    assert [verdict.passed for verdict in jailed] == [False]
    assert "Read-only file system" in jailed[0].detail
    assert [verdict.passed for verdict in await check(writer, ["hello"], 120, isolation="off")] == [True]


@root_only
def test_a_bot_kept_in_a_folder_the_jail_covers_is_carried_into_it_read_only(tmp_path: Path) -> None:
    """A bot under /tmp, outside the working directory (which the jail's own /tmp covers): its
    folder is shown in the jail as it is, its files beside it too, and none can be written."""
    import subprocess

    folder = Path(tempfile.mkdtemp(prefix="croupier-bot-"))  # /tmp, not tmp_path's folder
    try:
        folder.chmod(0o755)
        (folder / "book.txt").write_text("an opening book")
        script = "import pathlib, sys; here = pathlib.Path(sys.argv[0]).parent; "
        script += "print((here / 'book.txt').read_text()); (here / 'book.txt').write_text('mine')"
        (folder / "bot.py").write_text(script)
        work = tmp_path / "work"
        work.mkdir(mode=0o755)
        tmp_path.chmod(0o755)
        argv = isolation.Jail([]).wrap([sys.executable, str(folder / "bot.py")])
        done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=120, check=False)
        assert done.stdout == "an opening book\n", done.stderr
        assert "Read-only file system" in done.stderr
        assert (folder / "book.txt").read_text() == "an opening book"
    finally:
        shutil.rmtree(folder)
