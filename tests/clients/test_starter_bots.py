"""The C++ and Go starter bots (clients/cpp, clients/go), each built once per session from Debian's
packages by its make target, play a whole match of every game against the bundled bots, pass every
check of croupier check-bot, and stop with exit code 2 when the referee does not know their token.
Skipped, saying which packages are missing, only where they are (under CI, .ci/toolchains installs
them)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from croupier.server.app import Croupier
from tests.clients.foreign import (
    built,
    lets_a_taken_over_seat_go,
    passes_check_bot,
    plays_every_game,
    resends_what_the_referee_could_not_journal,
    says_why_it_was_refused,
)
from tests.server.botclient import Admin

STARTERS = {"cpp": ("cpp-bot", "the C++ starter bot"), "go": ("go-bot", "the Go starter bot")}


@pytest.fixture(scope="session", params=sorted(STARTERS))
def starter(request: pytest.FixtureRequest) -> Path:
    target, what = STARTERS[request.param]
    return built(target, what)


async def test_the_starter_bot_plays_a_full_match_of_every_game_against_the_bundled_bots(
    starter: Path, referee: Croupier, admin: Admin
) -> None:
    log = await plays_every_game([str(starter)], referee, admin)
    assert "resumed" not in log and "refused" not in log


async def test_the_starter_bot_exits_2_when_the_referee_does_not_know_its_token(
    starter: Path, referee: Croupier
) -> None:
    await says_why_it_was_refused([str(starter)], referee)


def test_the_starter_bot_passes_every_check_of_croupier_check_bot(starter: Path) -> None:
    passes_check_bot([str(starter)])


async def test_the_starter_bot_lets_a_taken_over_seat_go_and_counts_it_done(
    starter: Path, referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    await lets_a_taken_over_seat_go([str(starter)], referee, channel, admin)


async def test_the_starter_bot_sends_an_answer_the_referee_could_not_journal_again(
    starter: Path, referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    await resends_what_the_referee_could_not_journal([str(starter)], referee, channel, admin, monkeypatch)
