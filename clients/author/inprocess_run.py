"""The loop that plays a plan's sets of Python bots in worker processes, this machine's or a Dask
cluster's, without a referee: ``croupier match --sprt --in-process`` and ``croupier tournament
--in-process`` (tournament_cli.py) both run on it.

Results are written to the results database as the tournament runner writes them (store.py): each
match is scheduled under its stable key, marked started before its set is handed out, and a set's
matches become done with their results in one transaction, so a set is counted whole and once. Sets
are known by their keys (game, round, group, deal): a resumed run finds the sets done already and
plays the rest; a set an interrupted run left started is dealt again (store.redeal), as the runner
does (with fresh deals only its started matches: no twin has seen their cards).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from croupier.clients.author.batches import Batch, Sizes, play_batch
from croupier.clients.author.inprocess import REFEREE, Played, SetJob, play_set, pool, seat_results, workers
from croupier.clients.results.luck import Evaluator
from croupier.clients.results.schedule import Deals, MatchKey, set_seed
from croupier.clients.results.store import FinishedMatch, MatchRecord, SeatResult, Store, Tournament
from croupier.clients.tournament.adaptive import Plan

SetKey = tuple[str, int, int, int]
Running = dict[concurrent.futures.Future[Batch[list[Played]]], list[list[MatchRecord]]]


def play_sets(
    plan: Plan,
    store: Store,
    tournament: Tournament,
    job: Callable[[Sequence[MatchRecord]], SetJob],
    results: Callable[[MatchRecord, Played], list[SeatResult]],
    *,
    deals: Deals = Deals.DUPLICATE,
    processes: int | None = None,
    stopping: Callable[[], bool] = lambda: False,
    executor: concurrent.futures.Executor | None = None,
    player: Callable[[SetJob], list[Played]] = play_set,
    batch_seconds: float = 0.0,
    named: Callable[[MatchKey], str] = lambda key: str(key.deal),
) -> bool:
    """Play ``plan``'s sets (set number n is ``plan.plan(n)``) in worker processes until it is
    settled (True) or ``stopping`` (False), every result in the store: ``job`` makes a set's matches
    still to play into what a worker plays, ``results`` a played match into its seats' lines.
    ``executor`` (a cluster's, ``processes`` sets at once) plays them with ``player`` instead of a
    local pool, ``batch_seconds`` of play a task (batches.py); the batches it has not begun when the
    plan is settled are cancelled, their sets to be dealt again if ever needed. A set that fails
    raises SetFailed, naming the set as ``named`` names a match's (its deal number unless told)."""
    assert tournament.secret is not None
    stored: dict[SetKey, list[MatchRecord]] = {}
    for record in redeal_abandoned(store, tournament, deals).values():
        stored.setdefault(record.key.set_key, []).append(record)
    finished: dict[SetKey, list[FinishedMatch]] = {}
    for match in store.finished(tournament.id):
        finished.setdefault(match.record.key.set_key, []).append(match)
    members: dict[SetKey, list[MatchRecord]] = {}
    number: dict[SetKey, int] = {}
    todo: list[SetKey] = []
    dealt = 0
    while (duplicate := plan.plan(dealt)) is not None and duplicate.key in stored:
        key = duplicate.key  # a set an earlier run scheduled: over, or still to play
        members[key], number[key] = stored[key], dealt
        dealt += 1
        if len(finished.get(key, ())) == len(members[key]):
            plan.set_over(number[key], finished[key], replayed=True)
        else:
            todo.append(key)

    def begun() -> list[MatchRecord] | None:
        """The next set's matches to play, marked started; None past the plan's last set."""
        nonlocal dealt
        if not todo:
            duplicate = plan.plan(dealt)
            if duplicate is None:
                return None
            store.schedule(tournament.id, duplicate.matches)
            known = store.matches(tournament.id)
            members[duplicate.key] = [known[m.key] for m in duplicate.matches]
            number[duplicate.key] = dealt
            todo.append(duplicate.key)
            dealt += 1
        pending = [r for r in members[todo.pop(0)] if r.status != "done"]
        for record in pending:
            store.mark_started(record.id, f"{REFEREE}-{record.id}", None, REFEREE)
        return pending

    def over(pending: list[MatchRecord], played_set: list[Played]) -> None:
        """A set played: its matches done with their results in one transaction, and the set to the
        plan once all of it is (with fresh deals, an earlier run may have played some)."""
        lines = [results(record, played) for record, played in zip(pending, played_set, strict=True)]
        store.record_set([(record.id, seats) for record, seats in zip(pending, lines, strict=True)])
        key = pending[0].key.set_key
        done = finished.setdefault(key, [])
        done += [FinishedMatch(record, tuple(seats)) for record, seats in zip(pending, lines, strict=True)]
        if len(done) == len(members[key]):
            plan.set_over(number[key], done)

    cores = processes or workers()
    sizes = Sizes(batch_seconds)
    running: Running = {}
    with contextlib.nullcontext(executor) if executor is not None else pool(cores) as runner:
        try:
            while True:
                while not stopping() and not plan.settled() and len(running) < 2 * cores:
                    batch = list(itertools.islice(iter(begun, None), sizes.next()))
                    if not batch:
                        break
                    running[runner.submit(play_batch, player, [job(pending) for pending in batch])] = batch
                if plan.settled():
                    _cancel_unneeded(running, store)
                if not running:
                    break
                done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    batch = running.pop(future)
                    try:
                        outcome = future.result()
                    except Exception as exc:  # the batch, not one of its sets: lost with its workers
                        raise SetFailed([named(pending[0].key) for pending in batch], exc) from exc
                    for pending, played_set in zip(batch[: len(outcome.played)], outcome.played, strict=True):
                        over(pending, played_set)
                    if outcome.failure is not None:
                        failed = named(batch[len(outcome.played)][0].key)
                        raise SetFailed([failed], outcome.failure) from outcome.failure
                    sizes.measured(outcome)
        finally:
            for future in running:
                future.cancel()
    return plan.settled()


def play_plan(
    plan: Plan,
    store: Store,
    tournament: Tournament,
    specs: dict[str, str],
    versions: dict[str, str],
    options: dict[str, Any],
    *,
    luck: tuple[str, str, Evaluator] | None = None,
    **playing: Any,
) -> bool:
    """``play_sets`` for a plan of one game (``croupier match --sprt``): every set of ``options``,
    each bot's strategy in ``specs``; ``luck``: NEW, OLD and the V to measure NEW's luck against OLD
    with (kept with each seat's result)."""

    def job(pending: Sequence[MatchRecord]) -> SetJob:
        return SetJob(
            pending[0].key.game, options, tuple((r.id, r.seed, r.seats) for r in pending), specs, luck
        )

    return play_sets(
        plan, store, tournament, job, lambda record, played: seat_results(record, played, versions), **playing
    )


class SetFailed(Exception):
    """A set could not be played: its bot's code failed to load, or the workers running it died (its
    batch's, which may be any of them)."""

    def __init__(self, sets: Sequence[str], cause: BaseException) -> None:
        where = f"set {sets[0]}" if len(sets) == 1 else f"one of sets {', '.join(sets)}"
        super().__init__(f"{where}: {type(cause).__name__}: {str(cause).partition(chr(10))[0]}")
        self.sets = tuple(sets)
        self.cause = cause


def failure(command: str, error: Exception) -> str:
    """The one line ``command`` (``croupier match``, ``croupier tournament``) ends on when its sets
    could not be played: a set that failed (``SetFailed``), or the cluster's own refusal."""
    if not isinstance(error, SetFailed):
        return f"{command} --cluster: {error}"
    hint = " (every worker needs the bots' dependencies)" if isinstance(error.cause, ImportError) else ""
    return f"{command} --in-process: {error}{hint}"


def _cancel_unneeded(running: Running, store: Store) -> None:
    """The test has decided: the batches not yet begun are not needed (a cluster's queue may hold
    many); their matches are scheduled again, as never played, and no longer waited for (a cancelled
    future is done for ``wait`` only once its executor notices)."""
    for future in [future for future in running if future.cancel()]:
        for pending in running.pop(future):
            for record in pending:
                store.mark_failed(record.id, "not needed: the test had decided")


def redeal_abandoned(store: Store, tournament: Tournament, deals: Deals) -> dict[MatchKey, MatchRecord]:
    """Deal again the sets an interrupted run left started: their bots may have seen the cards (with
    fresh deals, the started matches alone: each has a deal of its own)."""
    assert tournament.secret is not None
    records = store.matches(tournament.id)
    sets: dict[SetKey, list[MatchRecord]] = {}
    for record in records.values():
        sets.setdefault(record.key.set_key, []).append(record)
    for members in sets.values():
        if any(record.status == "started" for record in members):
            again = [r for r in members if deals is Deals.DUPLICATE or r.status == "started"]
            redeal = max(record.redeal for record in again) + 1
            seeds = [set_seed(tournament.secret, r.key, deals, redeal) for r in again]
            store.redeal(again, redeal, seeds)
    return store.matches(tournament.id)
