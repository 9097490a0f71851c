"""Run a bot's command as a user of its own, unable to read the runner's or the referee's files.

Usage (as root): ``python -m croupier.clients.isolation.jail --uid N [--hide PATH]... -- COMMAND...``

The tournament runner (as root) launches every command bot through this (policy.py decides
when). The bot runs with uid and gid N, no supplementary groups, no capabilities and no privilege
gain, so it reads only what every user of the machine may read; and in namespaces of its own:

- a pid namespace, and a fresh /proc showing only its own processes (``hidepid``): no other
  process's ``cmdline`` or ``environ``;
- a mount namespace: an empty tmpfs at /tmp and /dev/shm, and every ``--hide`` path (the data
  directory: results.db, the referee's journals and ``*.secret``, admin-token, the bots' logs)
  covered, even where its permissions would let it through;
- an IPC namespace: no System V shared memory with anyone.

It starts in the runner's working directory, entered before the uid changes (a bot's folder
under a private home works if the folder itself is readable by others); one under /tmp is
carried into the private /tmp, read-only. Only the standard library is imported.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterable, Sequence
from types import FrameType

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x00020000, 0x08000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
TMP_SIZE = "64m"
"""The private /tmp's size, a container's default (limits.py): it is memory."""
SHARED = ("/tmp", "/dev/shm")
"""Folders every user writes to: each bot gets empty ones of its own."""
PACKAGES = (
    "croupier",
    "croupier.engine",
    "croupier.wire",
    "croupier.clients",
    "croupier.v1",
)
"""Shown to a bot read-only, wherever they are (under /tmp too): code, none of it secret, and not
croupier.server, which no bot runs (cli.py imports only the command asked for)."""
CANNOT = 126
"""The exit code when the bot could not be isolated (as a shell says a command cannot run)."""

_libc = ctypes.CDLL(None, use_errno=True)


def _checked(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    encoded = [None if text is None else os.fsencode(text) for text in (source, target, fstype)]
    result = _libc.mount(*encoded, ctypes.c_ulong(flags), data.encode() or None)
    _checked(result, f"mount {target}")


def _read_only_bind(source: str, target: str) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _private_ancestor(path: str) -> str | None:
    """The outermost folder on the way to ``path`` that other users cannot pass (a 0700 home)."""
    parts = path.strip("/").split("/")
    for end in range(1, len(parts)):
        folder = "/" + "/".join(parts[:end])
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def python_paths() -> set[str]:
    """Where this Python and croupier's packages are read from: what a bundled bot needs."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(path for path in sys.path if path)
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            paths.update(spec.submodule_search_locations)
    return paths


def private_mounts(hide: Sequence[str], expose: Iterable[str]) -> None:
    """The bot's view of the filesystem (in the namespace unshared already): a tmpfs at /tmp,
    /dev/shm and every folder others cannot pass on the way to an ``expose`` path, with those
    paths bound into it read-only; every ``hide`` path covered; a /proc of its own."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the host
    shown = sorted({os.path.realpath(path) for path in expose if os.path.exists(path)})
    shown = [path for path in shown if not any(_under(path, p) and path != p for p in shown)]
    private = {folder for path in shown if (folder := _private_ancestor(path))}
    covers = sorted(set(SHARED) | private)
    covers = [c for c in covers if os.path.isdir(c) and not any(_under(c, o) and c != o for o in covers)]
    carried = [path for path in shown if any(_under(path, c) and path != c for c in covers)]
    kept = {path: os.open(path, os.O_PATH) for path in carried}
    for cover in covers:
        mode, size = ("1777", TMP_SIZE) if cover in SHARED else ("755", "1m")
        _mount("tmpfs", cover, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={size}")
    for path, descriptor in kept.items():  # the originals are covered: bound from descriptors
        if os.path.isdir(f"/proc/self/fd/{descriptor}"):
            os.makedirs(path, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            open(path, "x").close()
        _read_only_bind(f"/proc/self/fd/{descriptor}", path)
        os.close(descriptor)
    for cover in covers:
        if cover not in SHARED:
            _mount(None, cover, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for path in hide:
        if os.path.isdir(path):
            flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
            _mount("tmpfs", path, "tmpfs", flags, "mode=000,size=4k")
        elif os.path.lexists(path):
            _read_only_bind("/dev/null", path)
    # last: the binds above went through the old /proc's /proc/self
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")


def _die_with(alive: int) -> None:
    """Process 1 (and with it every process of the namespace) is killed when this process dies,
    even by SIGKILL (the watchdog's own death kills this one: watchdog.py); ``alive``'s end of
    file says it died before the request was made."""
    _checked(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    os.set_blocking(alive, False)
    try:
        if os.read(alive, 1) == b"":
            os._exit(CANNOT)
    except BlockingIOError:
        pass  # still running
    os.close(alive)


def _no_new_privileges() -> None:
    """In the bot's process before its command starts: no setuid program gives it more."""
    _checked(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


def _init(uid: int, hide: Sequence[str], workdir: str, command: Sequence[str]) -> int:
    """Process 1 of the bot's pid namespace: set up its mounts, start the bot, reap every process
    of the namespace until the bot has ended. When this ends the kernel ends them all."""
    try:
        private_mounts(hide, {workdir, *python_paths()})
        os.chdir(workdir)
    except OSError as exc:
        print(f"cannot isolate the bot: {exc}", file=sys.stderr, flush=True)
        return CANNOT
    env = dict(os.environ, HOME="/tmp")
    env.pop("XDG_RUNTIME_DIR", None)  # the runner's, which the bot cannot use
    try:
        bot = subprocess.Popen(
            command, env=env, user=uid, group=uid, extra_groups=[], preexec_fn=_no_new_privileges
        )
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"cannot start {command[0]!r}: {exc}", file=sys.stderr, flush=True)
        return 127
    while True:
        pid, status = os.wait()
        if pid == bot.pid:
            return _exit_code(status)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m croupier.clients.isolation.jail")
    parser.add_argument("--uid", type=int, required=True, help="the bot's user and group id")
    parser.add_argument("--hide", action="append", default=[], metavar="PATH", help="cover this path")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    if args.uid <= 0:
        parser.error("--uid: an unprivileged user id, above 0")
    workdir = os.getcwd()

    def passed_on(signum: int, frame: FrameType | None) -> None:
        """The watchdog signals the whole process group, the bot included: this process and
        process 1 wait for the bot to end. A handler, not SIG_IGN: exec resets it for the bot."""

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, passed_on)
    try:
        _checked(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC), "unshare")
    except OSError as exc:
        print(f"cannot isolate the bot: {exc} (isolation needs root)", file=sys.stderr, flush=True)
        return CANNOT
    sys.stdout.flush()
    alive, held = os.pipe()  # held open by this process alone: end of file once it is gone
    child = os.fork()  # the first child is process 1 of the new pid namespace
    if child == 0:
        os.close(held)
        _die_with(alive)
        os._exit(_init(args.uid, [os.path.abspath(p) for p in args.hide], workdir, args.command))
    os.close(alive)
    _, status = os.waitpid(child, 0)
    return _exit_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
