"""A runner's share of the results database, as a process of its own for the readers' test: it
plays nothing, but records a result a moment, and opens and closes a second ``Store`` on the same
file once, after the first result, as a page of ``--web``'s viewer does in the runner's process.
Each committed match's id goes to stdout once ``record_result`` has returned."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from croupier.clients.results.schedule import game_schedule
from croupier.clients.results.store import SeatResult, Store


def main(path: Path) -> None:
    store = Store(path)
    store.lock_for_running()
    tournament = store.open_tournament("readers", "fp", {}, again=False)
    sets = game_schedule("platinum_fish", ["a", "b"], 2, rounds=200, deals=1, seed=1, secret=bytes(32))
    store.schedule(tournament.id, [match for duplicate in sets for match in duplicate.matches])
    for index, record in enumerate(store.matches(tournament.id).values()):
        store.mark_started(record.id, f"m-{record.id}", None)
        seats = record.seats
        store.record_result(record.id, [SeatResult(0, seats[0], 1, 1), SeatResult(1, seats[1], 0, 2)], None)
        print(record.id, flush=True)
        if index == 0:
            with Store(path) as page:  # a page of the viewer beside the runner
                page.finished(tournament.id)
        time.sleep(0.02)
    time.sleep(3600)  # killed by the test


if __name__ == "__main__":
    main(Path(sys.argv[1]))
