"""A jailed bot's limits: by a cgroup v2 group where the runner can make one, else by rlimits; the
run says which (quotas.py). The limits themselves are met by the hostile bot (test_isolation.py)."""

from __future__ import annotations

from pathlib import Path

from croupier.clients.isolation import quotas as limits
from croupier.clients.isolation.quotas import Limits


def fake_cgroup_root(tmp_path: Path, controllers: str) -> Path:
    """A folder laid out as a cgroup v2 root with ``controllers`` available."""
    (tmp_path / "cgroup.controllers").write_text(controllers + "\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    return tmp_path


def test_no_cgroup_v2_hierarchy_means_rlimits_and_the_run_says_why(tmp_path: Path) -> None:
    parent, why = limits.cgroup_v2(tmp_path)
    assert parent is None and why == f"{tmp_path} is not a cgroup v2 hierarchy"
    line = limits.describe(Limits(), parent, why)
    assert line == (
        "bots' limits: 128 processes, 512 MiB per process, 1 core at nice 19 each, "
        f"by rlimits (no cgroup: {tmp_path} is not a cgroup v2 hierarchy)"
    )


def test_a_cgroup_v2_without_the_controllers_means_rlimits(tmp_path: Path) -> None:
    parent, why = limits.cgroup_v2(fake_cgroup_root(tmp_path, "hugetlb"))  # a hybrid host's
    assert parent is None and why == f"cgroup v2 at {tmp_path} has no cpu, memory, pids controller"


def test_a_bots_group_holds_its_limits_and_the_run_says_so(tmp_path: Path) -> None:
    root = fake_cgroup_root(tmp_path, "cpuset cpu io memory pids")
    (root / "croupier").mkdir()  # in a real hierarchy the kernel makes a group's files
    (root / "croupier" / "cgroup.subtree_control").write_text("")
    parent, why = limits.cgroup_v2(root)
    assert parent == root / "croupier" and why == ""
    assert (root / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (parent / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    group = limits.join_cgroup(parent, "bot-1", Limits(pids=64, memory=256 << 20, cpus=1.5))
    assert {name: (group / name).read_text() for name in ("pids.max", "memory.max", "cpu.max")} == {
        "pids.max": "64",
        "memory.max": str(256 << 20),
        "cpu.max": "150000 100000",
    }
    assert limits.describe(Limits(), parent, why) == (
        f"bots' limits: 128 processes, 512 MiB, 1 CPU each, by cgroup v2 ({parent})"
    )
