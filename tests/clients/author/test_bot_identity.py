"""One bot, one identity: the same bot file is rated under one version wherever it plays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from croupier.clients.author import match_run as match
from croupier.clients.author import sprt_run as sprt
from croupier.clients.tournament.config import parse

BOT = """\
from croupier.clients.bots import RandomBot


class MyBot(RandomBot):
    pass
"""


def identities(spec: str) -> set[str]:
    """The identity of the bot ``spec`` under croupier match on a referee, under --sprt on a referee
    and in-process (the same settings), and as a tournament file's command."""
    on_referee = parse(match.settings("platinum_fish", [spec, "random"], 1, {}, 0))
    tested = parse(sprt._settings("platinum_fish", ["mybot", "random"], [spec, "random"], {}, 0, 100, True))
    filed = parse(
        {
            "name": "t",
            "games": [{"game": "platinum_fish", "seats": 2}],
            "bots": [
                {"name": "mybot", "command": f"python {spec.removeprefix('python ')}"},
                {"name": "other", "command": "croupier bot --strategy random"},
            ],
        }
    )
    return {config.bots[0].version for config in (on_referee, tested, filed)}


def test_a_bot_file_is_one_identity_however_it_is_launched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("mybot.py").write_text(BOT)
    found = (
        identities("mybot.py") | identities("python mybot.py") | identities(f"python {os.getcwd()}/mybot.py")
    )
    assert len(found) == 1, found
    Path("mybot.py").write_text(BOT + "# changed\n")
    assert identities("mybot.py").isdisjoint(found)  # a changed bot is a new version
    random = parse(match.settings("platinum_fish", ["random", "heuristic"], 1, {}, 0)).bots[0].version
    assert (
        random
        == parse(sprt._settings("platinum_fish", ["r", "h"], ["random", "heuristic"], {}, 0, 10, False))
        .bots[0]
        .version
    )
