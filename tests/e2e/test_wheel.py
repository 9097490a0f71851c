"""The wheel, installed in a fresh venv outside the repository, plays the README's bot, also from
an install with the referee's modules (croupier.server) taken out: a bot needs only the SDK.

The wheel is built from a copy of the tracked files (a fresh clone: no gen/, no .venv), without
build isolation (the stubs are built with this venv's grpcio-tools), so nothing is fetched; pure
Python (CROUPIER_PURE=1), since what is checked here is the install, not the compiler: the compiled
wheel is built by .ci/newcomer and in the image (tests/docker).
The fresh venv gets the wheel alone (--no-deps); its runtime dependencies come from this
venv's site-packages through a .pth line (which imports no croupier of this tree: the editable
install is itself a .pth, and .pth files are only read in a venv's own site-packages).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV_TOOLS = ("pytest", "mypy", "ruff", "hypothesis", "hadolint", "grpcio-tools", "mypy-protobuf")


def readme_bot() -> str:
    """The README's "A bot in 15 lines", exactly as printed there."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## A bot in 15 lines", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_wheel_runs_the_readme_bot_in_a_match_from_any_folder(tmp_path: Path) -> None:
    source = tmp_path / "clone"
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_symlink():  # the namespace's links (gen/croupier/engine -> ../../engine)
            (source / name).symlink_to(os.readlink(ROOT / name))
        elif (ROOT / name).is_file():
            (source / name).write_bytes((ROOT / name).read_bytes())
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(source)],
        check=True,
        timeout=300,
        env={**os.environ, "CROUPIER_PURE": "1"},
    )
    (wheel,) = (tmp_path / "dist").glob("croupier-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "croupier/v1/bots_pb2.py" in names and "croupier/clients/sdk/bot.py" in names
    runtime = [
        line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert runtime and not [line for line in runtime if any(tool in line for tool in DEV_TOOLS)], runtime

    env_dir, python = installed(tmp_path / "venv", wheel)
    # a bot's own install, the referee's modules taken out: the SDK must not need them
    _, bot_python = installed(tmp_path / "bot-venv", wheel)
    shutil.rmtree(Path(site_packages(bot_python)) / "croupier" / "server")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mybot.py").write_text(readme_bot())
    run = subprocess.run(
        [
            env_dir / "bin" / "croupier", "match", "platinum_fish",
            "--bot", "python mybot.py", "--bot", "heuristic", "--games", "1", "--seed", "3",
        ],
        cwd=elsewhere, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"│ mybot +│ +2 │", run.stdout), run.stdout  # two matches: the deal, both ways round
    (elsewhere / "serverless.py").write_text(readme_bot())
    run = subprocess.run(
        [
            env_dir / "bin" / "croupier", "match", "platinum_fish",
            "--bot", f"{bot_python} serverless.py", "--bot", "heuristic", "--games", "1", "--seed", "4",
            # its interpreter is under the test's /tmp, which a jailed bot (as root) has a private one of
            "--isolation", "off",
        ],
        cwd=elsewhere, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"│ serverless +│ +2 │", run.stdout), run.stdout  # played with no croupier.server
    where = subprocess.run(
        [python, "-c", "import croupier.clients.sdk as s; print(s.__file__)"],
        cwd=elsewhere, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert where.startswith(str(env_dir)), where


def site_packages(python: Path) -> str:
    return subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def installed(env_dir: Path, wheel: Path) -> tuple[Path, Path]:
    """A new venv holding the wheel alone; its runtime dependencies from this venv (a .pth line)."""
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site_packages(python)) / "runtime-deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=120,
    )
    return env_dir, python
