"""In-process play on a Dask cluster: ``croupier match ... --in-process --cluster ADDRESS``.

The duplicate sets inprocess_run.play_sets deals are handed to a Dask scheduler instead of the local
pool of processes; its workers play them with inprocess.play_set, exactly as a local worker would,
and the results come back into the same store and the same sequential test (docs/operations.md
says why Dask, and how to run one). The bots' code goes to the workers Dask's way: each bot file
(FILE.py) and each bot module or package of yours (module:Class found outside site-packages) is
uploaded (``Client.upload_file``), to every worker that joins later too. Croupier itself and the
bots' dependencies must be installed on the workers: a set that cannot load its bot there fails the
run in one line.

Short sets go several to a task (batches.py), each task carrying about ``croupier.batch-seconds``
of play (Dask's configuration: 0.2 s unless set, 0 for one set a task): Dask's cost of a task is
milliseconds, as much as a set of fast bots. Worker loss is the scheduler's to handle: the batches a
dead worker held are played again elsewhere (``distributed.scheduler.allowed-failures`` times), and
each batch, submitted once, gives one result, each of its sets its own.
Dask is an optional extra, imported only here: without it ``--cluster`` says how to install it.
The workers must run the very Croupier this side runs (the same rules, the same bots): a worker whose
code differs (``code_identity``) is refused at connection, and a worker joining later plays no set.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.util
import logging
import shutil
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.author.inprocess import Played, SetJob, play_set

if TYPE_CHECKING:
    from distributed import Client

INSTALL = "pip install 'croupier[cluster]'"
CONNECT_SECONDS = 10.0
"""How long to wait for the scheduler to answer."""
BATCH_SECONDS = 0.2
"""Play a task carries unless Dask's configuration says (``croupier.batch-seconds``): against Dask's
few milliseconds a task, a tenth of the sets' time or less."""
WORKERS_SECONDS = 30.0
"""How long to wait for a first worker: a cluster without any would hold the sets forever."""
SHIPPED = "shipped:"
"""A bot spec whose file was uploaded: its name in the worker's local directory follows."""
CODE = "croupier_code_"
"""The name of an uploaded zip of a bot's package begins so: the workers import from it."""


class ClusterError(Exception):
    """The cluster cannot play: one line saying why."""


@dataclasses.dataclass(frozen=True, slots=True)
class Cluster:
    """A connected cluster: where to submit sets, each bot's spec as the workers find it, how many
    sets the workers play at once (their threads), and the seconds of play a task is to carry."""

    executor: concurrent.futures.Executor
    specs: dict[str, str]
    threads: int
    batch_seconds: float


def require() -> None:
    """Raise ClusterError, saying how to install it, where Dask's distributed is not installed."""
    if importlib.util.find_spec("distributed") is None:
        raise ClusterError(f"Dask's distributed is not installed here: {INSTALL}")


def _client(address: str) -> Client:
    require()
    from distributed import Client

    # Dask's own notes (an event loop slow on a loaded machine, a worker gone) go to stderr, where
    # they would bury the test's lines: its errors alone, and the sets' failures in one line.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"no Dask scheduler answers at {address}: {exc}") from None


@contextlib.contextmanager
def connect(address: str, specs: dict[str, str], code: Sequence[str] = ()) -> Iterator[Cluster]:
    """The Dask scheduler at ``address`` with the bots of ``specs`` (bot name: SDK strategy)
    shipped to its workers, and the packages named in ``code`` (a bench's own: imported there as
    they arrive); closed (its outstanding sets cancelled) on leaving."""
    client = _client(address)
    with client, tempfile.TemporaryDirectory(prefix="croupier-ship-") as folder:
        try:
            client.wait_for_workers(1, timeout=WORKERS_SECONDS)
        except TimeoutError:
            raise ClusterError(
                f"the Dask scheduler at {address} has no worker after {WORKERS_SECONDS:g} s: start some "
                f"(dask worker {address})"
            ) from None
        _check_code(client, address)
        shipped = {bot: ship(client, spec, Path(folder)) for bot, spec in specs.items()}
        for name in code:
            package = _own_code(name)
            if package is None:
                raise ClusterError(f"{name} is installed here, not code to ship: install it on the workers")
            client.upload_file(str(_zipped(package, Path(folder))), load=True)
        threads = sum(client.nthreads().values())
        yield Cluster(Sets(client), shipped, threads, batch_seconds())


def batch_seconds() -> float:
    """The seconds of play a task carries: ``croupier.batch-seconds`` in Dask's configuration (its
    YAML files, or DASK_CROUPIER__BATCH_SECONDS), else BATCH_SECONDS."""
    import dask.config

    value = dask.config.get("croupier.batch-seconds", BATCH_SECONDS)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        raise ClusterError(f"Dask's croupier.batch-seconds is {value!r}: give seconds, 0 or more")
    return float(value)


class Sets(concurrent.futures.Executor):
    """The scheduler as an executor of sets: each call a task of its own key (``pure=False``: the
    same set submitted twice is two tasks), its result handed over once and then let go (Dask's own
    ``Client.get_executor`` keeps every future, and so every result on the workers, to its end).
    Cancelling a future cancels its task; a task the cluster lost, cancelled by no one here, fails
    its future with ClusterError."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        task = self.client.submit(fn, *args, pure=False, **kwargs)
        handed: concurrent.futures.Future[Any] = concurrent.futures.Future()
        handed.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)
        task.add_done_callback(functools.partial(_hand_over, handed))
        return handed


def _hand_over(handed: concurrent.futures.Future[Any], task: Any) -> None:
    """A task done, failed or lost: its future's result (unless this side cancelled it first)."""
    if not handed.set_running_or_notify_cancel():
        return
    try:  # fetching the result can itself fail: the run closing its client after another set failed
        if task.status == "finished":
            handed.set_result(task.result())
        elif task.status == "error":
            handed.set_exception(task.exception())
        else:
            handed.set_exception(ClusterError(f"the cluster lost the task ({task.status})"))
    except Exception as error:  # Dask calls this back and only logs what escapes
        handed.set_exception(ClusterError(f"the cluster lost the task's result: {error}"))


def ship(client: Client, spec: str, folder: Path) -> str:
    """Upload the code of a bot given as ``spec`` to the workers; the spec they find it by."""
    module, colon, attribute = spec.partition(":")
    if module.endswith(".py"):
        source = Path(module)
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
        copy = folder / f"croupier_bot_{source.stem.replace('-', '_')}_{digest}.py"  # NEW and OLD may
        shutil.copyfile(source, copy)  # both be bot.py: named by content, they never collide
        client.upload_file(str(copy), load=False)
        return f"{SHIPPED}{copy.name}{colon}{attribute}"
    if colon:
        package = _own_code(module.partition(".")[0])
        if package is not None:
            client.upload_file(str(_zipped(package, folder)), load=False)
    return spec  # a bundled strategy, or a module installed on the workers as here


def _own_code(top: str) -> Path | None:
    """The file or package folder of a top-level module that is the author's own, not installed
    (outside site-packages and Croupier): None for anything else."""
    found = importlib.util.find_spec(top)
    if found is None or found.origin is None or top == "croupier":
        return None
    origin = Path(found.origin)
    installed = {Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib", "stdlib", "platstdlib")}
    if any(origin.is_relative_to(root) for root in installed):
        return None
    return origin.parent if origin.name == "__init__.py" else origin


def _zipped(code: Path, folder: Path) -> Path:
    """A module file or package folder as a zip the workers import from (on their sys.path)."""
    archive = folder / f"{CODE}{code.stem}.zip"
    with zipfile.ZipFile(archive, "w") as out:
        files = [code] if code.is_file() else sorted(code.rglob("*.py"))
        for path in files:
            out.write(path, path.relative_to(code.parent))
    return archive


def play_shipped_set(job: SetJob) -> list[Played]:
    """On a worker: play the set, its shipped bots found where the upload put them (unless this
    worker runs another Croupier than the client that sent it: then the set fails, saying so)."""
    from distributed import get_worker

    worker = get_worker()
    wanted = getattr(worker, CODE_ATTRIBUTE, None)
    if wanted is not None and wanted != code_identity():
        raise ClusterError(_differs(worker.address, code_identity(), wanted))
    here = Path(worker.local_directory)
    for archive in sorted(here.glob(f"{CODE}*.zip")):  # the authors' packages (module:Class)
        if str(archive) not in sys.path:
            sys.path.insert(0, str(archive))
    specs = {
        bot: str(here / spec.removeprefix(SHIPPED)) if spec.startswith(SHIPPED) else spec
        for bot, spec in job.specs.items()
    }
    return play_set(dataclasses.replace(job, specs=specs))


CODE_ATTRIBUTE = "croupier_code"
"""The attribute a worker keeps the client's ``code_identity`` in (set by the ``croupier-code`` plugin)."""
CODE_PARTS = ("engine", "wire", "server", "clients")


@functools.cache
def code_identity() -> str:
    """This Croupier's version and a digest of its Python sources (the rules, the referee, the bots):
    equal on two machines when both run the same code, installed from the wheel or from a checkout."""
    import croupier

    root = Path(croupier.__file__).resolve().parent
    digest = hashlib.sha256()
    for part in CODE_PARTS:
        folder = (root / part).resolve()  # a checkout's namespace links each part to its folder
        for path in sorted(folder.rglob("*.py"), key=lambda p: p.relative_to(folder).as_posix()):
            digest.update(f"{part}/{path.relative_to(folder).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    try:
        version = importlib.metadata.version("croupier")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return f"{version}+{digest.hexdigest()[:12]}"


def _differs(worker: str, theirs: object, ours: object) -> str:
    return (
        f"the Dask worker at {worker} runs Croupier {theirs}, this side {ours}: "
        "install the same Croupier on the workers as here (croupier --version names it)"
    )


def _check_code(client: Client, address: str) -> None:
    """Refuse a cluster whose workers run another Croupier, and have workers that join later refuse
    this run's sets if theirs differs (a plugin each worker runs as it joins)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    ours = code_identity()
    try:
        found = client.run(code_identity)
    except Exception as error:  # a worker without Croupier at all: its import fails there
        raise ClusterError(f"the Dask workers at {address} cannot run Croupier: {error}") from None
    for worker, theirs in sorted(found.items()):
        if theirs != ours:
            raise ClusterError(_differs(worker, theirs, ours))

    class SameCode(WorkerPlugin):
        name = "croupier-code"

        def setup(self, worker: Any) -> None:
            setattr(worker, CODE_ATTRIBUTE, ours)

    client.register_plugin(SameCode())
