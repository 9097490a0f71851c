"""Run a bot's command as a user of its own, in namespaces of its own: it reaches its referee and
nothing else, and takes no more of the machine than its share.

Usage (as root): ``python -m croupier.clients.isolation.jail --uid N [--hide PATH]...
[--socket PATH] [--pids N --memory BYTES --cpus N [--cgroup FOLDER]] -- COMMAND...``

The tournament runner (as root) launches every command bot through this (policy.py decides
when). The bot runs with uid and gid N, no supplementary groups, no capabilities and no privilege
gain, so it reads only what every user of the machine may read; and in namespaces of its own:

- a network namespace with no interface up: no TCP or UDP to anywhere, loopback included, and
  no abstract Unix socket of anyone else's; it reaches the referee through the referee's Unix
  socket (``--socket``), whose folder is shown at /run/croupier as in a bot's container;
- a pid namespace, and a fresh /proc showing only its own processes (``hidepid``): no other
  process's ``cmdline`` or ``environ``, no process to signal;
- a mount namespace: every filesystem read-only, but empty tmpfs's of its own at /tmp, /var/tmp,
  /dev/shm and /run (with /run/lock): no folder it writes to is anyone else's, and nothing it
  writes outlives it; a fresh /sys (its network's); every ``--hide`` path (the data directory:
  results.db, the referee's journals and ``*.secret``, admin-token, the bots' logs) covered, even
  where its permissions would let it through;
- an IPC namespace: no System V or POSIX message queue or shared memory with anyone.

Its system calls pass a seccomp filter (syscalls.py: no namespaces, so no user namespace's root,
no mounts, ptrace, keyrings, bpf, ...); its processes, memory and CPU are limited (quotas.py:
by cgroup v2 where ``--cgroup`` names the groups' folder, by rlimits otherwise); its environment
is built from an allow-list (``KEPT``).

It starts in the runner's working directory, entered before the uid changes (a bot's folder
under a private home works if the folder itself is readable by others); that folder, and the
folder of every file named on the command line (the bot's own), when under a folder the jail
covers (/tmp, a private home), is carried into it read-only. Only the standard library is
imported.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import FrameType

from croupier.clients.isolation import quotas, syscalls

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
TMP_SIZE = "64m"
"""The private /tmp's size, a container's default (limits.py): it is memory."""
SHARED = ("/tmp", "/var/tmp", "/dev/shm")
"""Folders every user writes to: each bot gets empty ones of its own (and a /run, with /run/lock)."""
RUN, LOCKS, REFEREE = "/run", "/run/lock", "/run/croupier"
"""The bot's /run, its /run/lock (every user's) and where the referee's socket folder is shown."""
RUN_SIZE = "1m"
KEPT = (
    "CROUPIER_SERVER", "CROUPIER_TOKEN", "CROUPIER_BOT_NAME", "CROUPIER_PACE_MS", "CROUPIER_PURE",
    "CROUPIER_BOSS_BUDGET",
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
)  # fmt: skip
"""The runner's environment a bot is given (and the locale's LC_*): the bot's settings, and what
finds and runs its program; nothing of the runner's own (its tokens, its sessions, its cloud keys)."""
GROUP_REMOVALS = 100
"""Tries at removing a bot's cgroup while its last processes are being reaped, 10 ms apart."""
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


def bot_files(command: Sequence[str], workdir: str) -> set[str]:
    """What the bot's command names on this machine (its program, its script): each one's folder,
    or the file itself where its folder is one the jail covers whole (/tmp)."""
    found = set()
    for part in command:
        path = os.path.join(workdir, part) if "/" in part else shutil.which(part) or ""
        if not path or not os.path.exists(path):
            continue
        path = os.path.realpath(path)
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        found.add(path if folder in (*SHARED, RUN) else folder)
    return found


def _bind_kept(path: str, descriptor: int) -> None:
    """Bind what ``descriptor`` holds at ``path`` (in a tmpfs: created there) read-only."""
    if os.path.isdir(f"/proc/self/fd/{descriptor}"):
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        open(path, "x").close()
    _read_only_bind(f"/proc/self/fd/{descriptor}", path)
    os.close(descriptor)


def _mount_points() -> list[tuple[str, int]]:
    """Every mount point this namespace sees, outermost first, with its flags (statvfs's
    ST_* are the MS_* of the same names)."""
    points = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            point = line.split()[4]
            point = point.encode().decode("unicode_escape")  # \040 for a space
            with contextlib.suppress(OSError):  # a point covered by a later mount
                points.append((point, os.statvfs(point).f_flag))
    return points


def _all_read_only(writable: Iterable[str]) -> None:
    """Remount every mount point read-only but the ``writable`` ones (each bot's own tmpfs's)."""
    keep = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096  # and the atime settings
    for point, flags in _mount_points():
        if flags & MS_RDONLY or any(_under(point, folder) for folder in writable):
            continue  # under a bot's own tmpfs: covered, or bound read-only already
        _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | (flags & keep))


def private_mounts(hide: Sequence[str], expose: Iterable[str], socket: str | None = None) -> None:
    """The bot's view of the filesystem (in the namespaces unshared already): a tmpfs at /tmp,
    /var/tmp, /dev/shm, /run and every folder others cannot pass on the way to an ``expose``
    path, with those paths bound into it read-only; the folder of the referee's ``socket`` at
    /run/croupier; every ``hide`` path covered; a /proc and /sys of its own; the rest read-only."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the host
    shown = sorted({os.path.realpath(path) for path in expose if os.path.exists(path)})
    shown = [path for path in shown if not any(_under(path, p) and path != p for p in shown)]
    private = {folder for path in shown if (folder := _private_ancestor(path))}
    covers = sorted({*SHARED, RUN} | private)
    covers = [c for c in covers if os.path.isdir(c) and not any(_under(c, o) and c != o for o in covers)]
    carried = [path for path in shown if any(_under(path, c) and path != c for c in covers)]
    kept = {path: os.open(path, os.O_PATH) for path in carried}
    referee = os.open(os.path.dirname(os.path.abspath(socket)), os.O_PATH) if socket else None
    for cover in covers:
        mode, size = ("1777", TMP_SIZE) if cover in SHARED else ("755", RUN_SIZE)
        _mount("tmpfs", cover, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={size}")
    os.mkdir(LOCKS)
    os.chmod(LOCKS, 0o1777)
    for path, descriptor in kept.items():  # the originals are covered: bound from descriptors
        _bind_kept(path, descriptor)
    if referee is not None:
        _bind_kept(REFEREE, referee)
    for path in hide:
        if os.path.isdir(path):
            flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
            _mount("tmpfs", path, "tmpfs", flags, "mode=000,size=4k")
        elif os.path.lexists(path):
            _read_only_bind("/dev/null", path)
    # last: the binds above went through the old /proc's /proc/self
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    if os.path.isdir("/sys"):  # the host's shows the host's network interfaces
        _mount("sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _all_read_only({*SHARED, RUN})


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


def kept_environment(environ: dict[str, str]) -> dict[str, str]:
    """The bot's environment: ``KEPT`` and the locale's of ``environ``, its home the private /tmp."""
    env = {key: value for key, value in environ.items() if key in KEPT or key.startswith("LC_")}
    return {**env, "HOME": "/tmp"}


def _in_the_bot(share: quotas.Limits, core: int, rlimits: bool, seccomp: syscalls.Filter) -> None:
    """In the bot's process, as its own user, before its command starts: its cores and priority,
    its rlimits (where no cgroup limits it), no privilege gain (no setuid program gives it
    more), the filter."""
    quotas.apply(share, core, rlimits)
    _checked(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")
    seccomp.load()


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


def _init(args: argparse.Namespace, hide: Sequence[str], workdir: str, group: str | None) -> int:
    """Process 1 of the bot's pid namespace: join its cgroup (``group``), set up its mounts, start
    the bot, reap every process of the namespace until the bot has ended. When this ends the
    kernel ends them all."""
    share = quotas.Limits(args.pids, args.memory, args.cpus)
    try:
        if group is not None:  # first: the fresh /sys covers the cgroup hierarchy
            quotas.join_cgroup(Path(args.cgroup), group, share)
        seccomp = syscalls.Filter()
        private_mounts(hide, {workdir, *python_paths(), *bot_files(args.command, workdir)}, args.socket)
        os.chdir(workdir)
    except OSError as exc:
        print(f"cannot isolate the bot: {exc}", file=sys.stderr, flush=True)
        return CANNOT
    try:
        bot = subprocess.Popen(
            args.command,
            env=kept_environment(dict(os.environ)),
            user=args.uid,
            group=args.uid,
            extra_groups=[],
            # uids are consecutive: bots spread over the cores
            preexec_fn=lambda: _in_the_bot(share, args.uid, group is None, seccomp),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"cannot start {args.command[0]!r}: {exc}", file=sys.stderr, flush=True)
        return 127
    while True:
        pid, status = os.wait()
        if pid == bot.pid:
            return _exit_code(status)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m croupier.clients.isolation.jail")
    parser.add_argument("--uid", type=int, required=True, help="the bot's user and group id")
    parser.add_argument("--hide", action="append", default=[], metavar="PATH", help="cover this path")
    parser.add_argument("--socket", metavar="PATH", help="the referee's Unix socket, shown in /run/croupier")
    defaults = quotas.Limits()
    parser.add_argument("--pids", type=int, default=defaults.pids, help="processes and threads")
    parser.add_argument("--memory", type=int, default=defaults.memory, help="bytes")
    parser.add_argument("--cpus", type=float, default=defaults.cpus, help="cores' worth of CPU time")
    parser.add_argument("--cgroup", metavar="FOLDER", help="the cgroup v2 folder of bots' groups")
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
        _checked(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET), "unshare")
    except OSError as exc:
        print(f"cannot isolate the bot: {exc} (isolation needs root)", file=sys.stderr, flush=True)
        return CANNOT
    sys.stdout.flush()
    alive, held = os.pipe()  # held open by this process alone: end of file once it is gone
    group = f"bot-{args.uid}-{os.getpid()}" if args.cgroup else None
    child = os.fork()  # the first child is process 1 of the new pid namespace
    if child == 0:
        os.close(held)
        _die_with(alive)
        os._exit(_init(args, [os.path.abspath(p) for p in args.hide], workdir, group))
    os.close(alive)
    _, status = os.waitpid(child, 0)
    if group is not None:
        _remove_group(Path(args.cgroup) / group)
    return _exit_code(status)


def _remove_group(group: Path) -> None:
    """Remove a bot's cgroup once the kernel has reaped the processes its namespace's end killed."""
    for _ in range(GROUP_REMOVALS):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # still busy
            time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
