"""The seccomp filter of a jailed bot: the system calls a bot never needs are refused (EPERM).

A bot plays over a socket it is given; it has no use for namespaces (the way to a user namespace's
root), mounts, another process's memory (ptrace, process_vm_*), the kernel's keyrings, eBPF,
perf events, kernel modules, io_uring (its calls pass no filter), or moving itself onto other
cores (quotas.py pins it). ``clone`` is refused only with a namespace flag, and ``clone3``, whose
flags a filter cannot read, says ENOSYS so the C library falls back to ``clone``. Calls of another
architecture (32-bit calls on x86-64) kill the process, libseccomp's default.

The filter is built by libseccomp (Debian's libseccomp2, on every Debian and Ubuntu: apt and
systemd need it) through ctypes: it knows each architecture's numbers and writes the BPF, which
by hand is where filters go wrong. Only the standard library is imported: the jail runs this.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os

REFUSED = (
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot",
    "fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "lookup_dcookie", "syslog",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "open_by_handle_at", "name_to_handle_at", "quotactl", "acct", "swapon", "swapoff", "reboot",
    "iopl", "ioperm", "sched_setaffinity",
)  # fmt: skip
NAMESPACES = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}
ALLOW = 0x7FFF0000
"""SCMP_ACT_ALLOW."""
MASKED_EQ = 7
"""SCMP_CMP_MASKED_EQ: (argument & a) == b."""


def _errno(number: int) -> int:
    """SCMP_ACT_ERRNO(number)."""
    return 0x00050000 | (number & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    """struct scmp_arg_cmp."""

    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


class Filter:
    """A filter built (not yet loaded): build it before forking, ``load`` in the bot's process."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
        try:
            self._lib = ctypes.CDLL(name, use_errno=True)
        except OSError as exc:
            raise OSError(f"no libseccomp (Debian's libseccomp2): {exc}") from None
        self._lib.seccomp_init.restype = ctypes.c_void_p
        self._lib.seccomp_init.argtypes = (ctypes.c_uint32,)
        self._lib.seccomp_rule_add_array.argtypes = (
            ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp),
        )  # fmt: skip
        self._lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
        self._lib.seccomp_load.argtypes = (ctypes.c_void_p,)
        self._context = self._lib.seccomp_init(ALLOW)
        if not self._context:
            raise OSError("seccomp_init failed")
        for call in REFUSED:
            self._rule(_errno(errno.EPERM), call)
        for flag in NAMESPACES.values():
            self._rule(_errno(errno.EPERM), "clone", _ArgCmp(0, MASKED_EQ, flag, flag))
        self._rule(_errno(errno.ENOSYS), "clone3")

    def _rule(self, action: int, call: str, *compare: _ArgCmp) -> None:
        number = self._lib.seccomp_syscall_resolve_name(call.encode())
        if number < 0:
            return  # not a call of this architecture (iopl on arm64)
        array = (_ArgCmp * len(compare))(*compare) if compare else None
        result = self._lib.seccomp_rule_add_array(self._context, action, number, len(compare), array)
        if result < 0:
            raise OSError(-result, f"seccomp rule for {call}: {os.strerror(-result)}")

    def load(self) -> None:
        """Apply the filter to this process and all it will start (no_new_privs must be set)."""
        result = self._lib.seccomp_load(self._context)
        if result < 0:
            raise OSError(-result, f"seccomp_load: {os.strerror(-result)}")
