"""How big GetRecord's one message gets: whole matches of every game, against gRPC's 4 MB default.

Usage: python -m bench.record_size [--matches N] [--players N] [--refusals N]

Plays matches with random legal actions (the game's default options: Chinese
Ten to 1000 points, Pair Battle in real time with a play every 0.2 s of
referee time and its countdowns and windows as they fall due), journals them
as the referee does, builds the MatchRecord GetRecord sends (every frame,
every hand shown) and prints its size: frames, bytes, bytes per frame.
``--refusals N`` adds N refused moves spread over each match (a bot flooding the
referee with bad moves: each is a frame with a view, up to the clocks' max_refusals,
100 by default, and without bound in a match created with max_refusals 0).
"""

from __future__ import annotations

import argparse
import random
import statistics
from typing import Any

from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng
from croupier.server.clocks import Clocks
from croupier.server.journal import Act, Clock, End, Header, Record, Refuse, Seated, Start, seed_sha256
from croupier.server.messages import replay_frames
from croupier.v1 import spectator_pb2

GRPC_DEFAULT = 4 * 1024 * 1024
STEP = 0.2
"""Referee seconds between two plays."""


def play(game: str, players: int, seed: int, refusals: int) -> list[Record]:
    spec = get_game(game)
    options = spec.options({"players": players})
    state = spec.new_game(options, Rng(seed))
    choose = random.Random(seed)
    header = Header(
        match_id=f"{game}-{seed}",
        game=game,
        options={"players": players},
        players=tuple(Seated(f"p{seat}", f"b{seat}") for seat in range(players)),
        clocks=Clocks(),
        seed_sha256=seed_sha256(seed),
        created_ms=0,
    )
    records: list[Record] = [header, Start(0.0)]
    now = 0.0
    while not state.is_over():
        now += STEP
        wake = state.wake_at()
        if wake is not None and wake <= now:
            now = wake
            state.advance(now)
            records.append(Clock(now))
            continue
        seats = sorted(seat for seat in state.to_act() if state.legal_actions(seat))
        if not seats:
            continue
        seat = choose.choice(seats)
        action = choose.choice(state.legal_actions(seat))
        state.apply(seat, action, now)
        records.append(Act(now, seat, str(action), 0, 0.0, 0.0))
    outcome, nobody = state.outcome(), ("",) * players
    zeros = (0,) * players
    records.append(End(now, seed, outcome.scores, outcome.places, outcome.places, zeros, zeros, nobody))
    return with_refusals(records, refusals)


def with_refusals(records: list[Record], count: int) -> list[Record]:
    """``count`` refused moves spread evenly after the plays (seat 0's: "not your turn")."""
    plays = [i for i, record in enumerate(records) if isinstance(record, Act)]
    after: dict[int, int] = {}
    for n in range(count):
        where = plays[n * len(plays) // count]
        after[where] = after.get(where, 0) + 1
    spread: list[Record] = []
    for i, record in enumerate(records):
        spread.append(record)
        spread.extend(Refuse(record.at, 0, "not your turn", "?") for _ in range(after.get(i, 0)))
    return spread


def measure(game: str, players: int, seed: int, refusals: int) -> tuple[int, int]:
    spec = get_game(game)
    records = play(game, players, seed, refusals)
    frames = list(replay_frames(spec, spec.options({"players": players}), seed, records, reveal=True))
    return len(frames), spectator_pb2.MatchRecord(frames=frames).ByteSize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--refusals", type=int, default=0, help="refused moves per match")
    args = parser.parse_args()
    print(
        f"GetRecord's MatchRecord, {args.matches} random {args.players}-player matches per game "
        f"(default options), {args.refusals} refusals each"
    )
    print(f"{'game':15} {'frames':>14} {'bytes (median / max)':>24} {'per frame':>10} {'of 4 MB':>8}")
    for game in sorted(GAMES):
        sizes: list[Any] = [
            measure(game, args.players, seed, args.refusals) for seed in range(1, args.matches + 1)
        ]
        frames = [f for f, _ in sizes]
        size = [b for _, b in sizes]
        median, most = statistics.median(size), max(size)
        print(
            f"{game:15} {min(frames):>6}-{max(frames):<7} {median:>11,.0f} / {most:<10,}"
            f" {most // max(frames):>9,} {most / GRPC_DEFAULT:>8.0%}"
        )


if __name__ == "__main__":
    main()
