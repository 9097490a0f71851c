"""The C++ and Go starter bots (clients/cpp, clients/go), each built once per session from Debian's
packages by its make target, play a whole match of every game against the bundled bots, pass every
check of croupier check-bot, and stop with exit code 2 when the referee does not know their token.
Skipped, saying which packages are missing, only where they are (under CI, .ci/toolchains installs
them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from croupier.server.app import Croupier
from tests.clients.foreign import built, passes_check_bot, plays_every_game, says_why_it_was_refused
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
