"""A Python bot leaves its author a comment by returning ``Commented(choice, "why")`` from
``choose`` (or passing one to ``play``): the referee journals it with the move, and the finished
match's replay shows it next to that move."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.bots import HeuristicBot
from croupier.clients.scenes import from_journal
from croupier.clients.sdk import Bot, Client, Commented, play_offline
from croupier.engine.games import get_game
from croupier.server.app import Croupier
from croupier.server.journal import Act, read_records
from tests.clients.terminal.test_spectator_terminal import replay
from tests.server.botclient import WAIT, Admin


class Explaining(Bot):
    """Answers with each kind of choice in turn, each with a comment naming it."""

    def choose(self, view: Any, legal: list[Any]) -> Commented[Any]:
        kinds = [0, legal[-1], str(legal[0])]
        choice = kinds[self.match.seat % 3] if len(legal) > 1 else 0
        return Commented(choice, f"seat {self.match.seat} picks {choice} of {len(legal)}")


class RealTimeExplaining(Bot):
    """Pair Battle: a play without a request, commented, and silence for the request itself."""

    def choose(self, view: Any, legal: list[Any]) -> None:
        self.play(Commented(legal[0], f"played {legal[0]} at once"))


@pytest.mark.parametrize("game", ["chinese_ten", "pair_battle"])
async def test_a_commented_choice_is_journaled_with_its_move_and_shown_in_the_replay(
    referee: Croupier, admin: Admin, game: str
) -> None:
    options = {"players": 2, "target": 50} if game == "chinese_ten" else {"players": 2, "countdown_tick": 0.0}
    created = await admin.create(game, 2, options, seed=3)
    ours = Explaining if game == "chinese_ten" else RealTimeExplaining
    clients = [
        Client(ours if seat == 0 else HeuristicBot, f"127.0.0.1:{referee.port}", [token], stop_after=1)
        for seat, token in enumerate(created.seat_tokens)
    ]
    assert await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), WAIT) == [0, 0]
    path = referee.referee.matches_dir / f"{created.match.match_id}.jsonl"
    acts = [r for r in read_records(path) if isinstance(r, Act)]
    ours_acts = [a for a in acts if a.seat == 0]
    assert ours_acts and all(a.comment for a in ours_acts)
    assert not any(a.comment for a in acts if a.seat == 1)  # the heuristic bot says nothing
    if game == "chinese_ten":
        assert ours_acts[0].comment.startswith("seat 0 picks 0 of ")
    else:
        assert all(a.comment == f"played {a.action} at once" for a in ours_acts)
    replay = from_journal(path)
    commented = [s for s in replay.scenes if s.comment]
    assert [s.comment for s in commented] == [a.comment for a in ours_acts]
    assert all(s.step.startswith("seat 0 plays ") for s in commented)


def test_offline_play_takes_a_commented_choice_as_the_choice_itself() -> None:
    spec = get_game("chinese_ten")
    options = spec.options({"players": 2, "target": 50})

    class First(Bot):
        def choose(self, view: Any, legal: list[Any]) -> int:
            return 0

    class FirstCommented(Bot):
        def choose(self, view: Any, legal: list[Any]) -> Commented[Any]:
            return Commented(0, "the first")

    assert play_offline(spec, options, [FirstCommented, First], seed=1) == play_offline(
        spec, options, [First, First], seed=1
    )


class EvilComments(Bot):
    """Comments that would end the HTML export's data script, or drive a terminal, if kept as sent."""

    def choose(self, view: Any, legal: list[Any]) -> Commented[Any]:
        return Commented(0, "</script><script>alert(1)</script>\x1b[31mred\x1b[0m")


async def test_the_terminal_replay_and_the_html_export_show_each_comment_beside_its_move(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 50}, seed=4)
    clients = [
        Client(bot, f"127.0.0.1:{referee.port}", [token], stop_after=1)
        for bot, token in zip([EvilComments, HeuristicBot], created.seat_tokens, strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), WAIT)
    journal = referee.referee.matches_dir / f"{created.match.match_id}.jsonl"
    scenes = from_journal(journal).scenes
    step = next(i for i, s in enumerate(scenes, 1) if s.comment)
    kept = "</script><script>alert(1)</script> [31mred [0m"
    assert scenes[step - 1].comment == kept and "\x1b" not in journal.read_text()
    shown = await asyncio.to_thread(replay, str(journal), "--at", str(step))
    assert shown.returncode == 0 and f"its bot said: {kept}" in shown.stdout.replace("\n", "")
    assert "its bot said" not in (await asyncio.to_thread(replay, str(journal), "--at", "1")).stdout

    page = tmp_path / "match.html"
    assert (await asyncio.to_thread(replay, str(journal), "--html", str(page))).returncode == 0
    html = page.read_text()
    assert html.count("<script") == 4, "a comment cannot close the data's script"
    data = html.split('<script id="replay-data" type="application/json">')[1].split("</script>")[0]
    comments = [s["comment"] for s in json.loads(data)["scenes"] if s["comment"]]
    assert comments and set(comments) == {kept}
