"""Every match option and clock has a range: CreateMatch refuses a value outside it with
INVALID_ARGUMENT naming the range, and creates nothing."""

from __future__ import annotations

import grpc
import pytest

from croupier.server.app import Croupier
from croupier.v1 import admin_pb2, chinese_ten_pb2, games_pb2, match_pb2, pair_battle_pb2, spoil_five_pb2
from tests.server.botclient import ADMIN, Admin

PAIR = games_pb2.GameOptions(pair_battle=pair_battle_pb2.PairBattleOptions(players=2))


@pytest.mark.parametrize(
    ("options", "clocks", "details"),
    [
        (
            games_pb2.GameOptions(pair_battle=pair_battle_pb2.PairBattleOptions(countdown_tick=1e300)),
            None,
            "countdown_tick must be 0.0 to 60.0 seconds, not 1e+300",
        ),
        (
            games_pb2.GameOptions(pair_battle=pair_battle_pb2.PairBattleOptions(window=-0.5)),
            None,
            "window must be 0.0 to 10.0 seconds, not -0.5",
        ),
        (
            games_pb2.GameOptions(chinese_ten=chinese_ten_pb2.ChineseTenOptions(players=2, target=2**31 - 1)),
            None,
            "target must be 1 to 10000 points, not 2147483647",
        ),
        (
            games_pb2.GameOptions(spoil_five=spoil_five_pb2.SpoilFiveOptions(players=2, bank=2**31 - 1)),
            None,
            "bank must be 1 to 10000 chips, not 2147483647",
        ),
        (
            games_pb2.GameOptions(spoil_five=spoil_five_pb2.SpoilFiveOptions(players=2, deals=0)),
            None,
            "deals must be 1 to 1000 deals (or unset: each player deals twice), not 0",
        ),
        (PAIR, match_pb2.Clocks(max_timeouts=2**32 - 1), "max_timeouts must be 1 to 1000, not 4294967295"),
        (PAIR, match_pb2.Clocks(max_refusals=10**6), "max_refusals must be 0 (never) to 100000, not 1000000"),
        (PAIR, match_pb2.Clocks(decision_ms=2**32 - 1), "clock decision must be 0 to 86400 s"),
    ],
)
async def test_an_option_out_of_its_range_is_invalid_argument_stating_the_range(
    referee: Croupier,
    admin: Admin,
    options: games_pb2.GameOptions,
    clocks: match_pb2.Clocks | None,
    details: str,
) -> None:
    seats = [admin_pb2.SeatSpec(name="a"), admin_pb2.SeatSpec(name="b")]
    request = admin_pb2.CreateMatchRequest(options=options, seats=seats, clocks=clocks)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await admin.stub.CreateMatch(request, metadata=ADMIN)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith(details)
    assert not referee.referee.matches
