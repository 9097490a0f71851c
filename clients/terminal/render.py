"""Drawing a match as a spectator sees it: pure functions from engine views to rich renderables.

Nothing here talks to a referee: ``watch`` and ``replay`` feed it scenes. A
hand the view does not show (``None``) is drawn as card backs and a count, so
what is hidden stays hidden on the screen as it is in the view.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from croupier.clients.results.sets import luck_and_skill
from croupier.clients.scenes import EVENT_LINES, Header, Scene
from croupier.engine.cards import Card, Color
from croupier.engine.games import chinese_ten, pair_battle, platinum_fish, spoil_five

BACK = "▮"
"""One face-down card."""
MAX_BACKS = 20
# --- cards --------------------------------------------------------------------------------------


def card_text(card: Card) -> Text:
    style = "bold red" if card.suit.color is Color.RED else "bold"
    return Text(f"{card.rank}{card.suit.symbol}", style=style)


def cards_text(cards: Sequence[Card], empty: str = "—") -> Text:
    if not cards:
        return Text(empty, style="dim")
    return Text(" ").join(card_text(c) for c in cards)


CARD_IN_WORDS = re.compile(r"(?<![\w])(10|[2-9JQKA])([cdhs])(?![\w])")
"""A card's text form inside an event's words ("seat 1 plays 7h")."""


def words_text(words: str) -> Text:
    """Words with each card in them drawn as a card (suit symbol and colour)."""
    text = Text()
    end = 0
    for found in CARD_IN_WORDS.finditer(words):
        text.append(words[end : found.start()])
        text.append_text(card_text(Card.parse(found.group(0))))
        end = found.end()
    text.append(words[end:])
    return text


def backs(count: int) -> Text:
    """``count`` face-down cards: the backs (capped) and the number."""
    shown = BACK * min(count, MAX_BACKS) + ("…" if count > MAX_BACKS else "")
    return Text.assemble((shown, "blue"), (f" {count}", "dim")) if count else Text("—", style="dim")


def hand_text(hand: Sequence[Card] | None, size: int) -> Text:
    return backs(size) if hand is None else cards_text(hand)


def clock(ms: int) -> str:
    minutes, rest = divmod(max(ms, 0), 60_000)
    return f"{minutes:02d}:{rest / 1000:04.1f}"


# --- the whole screen ------------------------------------------------------------------------------


def render(header: Header, scene: Scene, *, clock_ms: int | None = None, footer: str = "") -> RenderableType:
    """The screen: header, the game's table, the seats, the last events, the result once over."""
    table, seats = GAMES[header.game](scene.view, header)
    parts: list[RenderableType] = [table, seats, events_panel(scene)]
    if scene.comment:
        parts.append(comment_text(scene))
    if header.note:
        parts.insert(0, Text(header.note, style="bold red" if header.note.startswith("✗") else "dim"))
    if header.result is not None:
        parts.append(result_panel(header))
    if footer:
        parts.append(Text(footer, style="dim"))
    elapsed = clock(scene.time_ms if clock_ms is None else clock_ms)
    title = Text.assemble(
        (header.title, "bold"),
        f" · {header.match_id} · ",
        (header.status, "bold green" if header.status == "running" else "bold"),
        f" · clock {elapsed}",
    )
    return Panel(Group(*parts), title=title, border_style="cyan")


def events_panel(scene: Scene) -> Panel:
    lines = [*scene.events_before, *scene.events][-EVENT_LINES:]
    body = Text("\n").join(words_text(line) for line in lines) if lines else Text("(none yet)", style="dim")
    title = Text.assemble("last events · ", words_text(scene.step))
    return Panel(body, title=title, title_align="left", border_style="dim")


def comment_text(scene: Scene) -> Text:
    """The bot's comment on the move of this step (a finished match's record only)."""
    return Text.assemble(("its bot said: ", "bold magenta"), (scene.comment, "italic"))


LUCK_TITLE = "result · luck: chance after the deal · skill: points less luck"
"""A seat's luck is measured by this croupier's value function (docs/spectator.md); its points are
1 for each seat it is ahead of, ½ level, 0 behind, averaged, as the matches view counts them."""


def luck_text(header: Header, seat: int) -> str:
    luck = header.luck[seat] if seat < len(header.luck) else None
    if luck is None or header.result is None:
        return ""
    return f" · {luck_and_skill([place for place, _ in header.result], seat, luck)}"


def result_panel(header: Header) -> Panel:
    assert header.result is not None
    ranking = sorted(range(len(header.result)), key=lambda seat: header.result[seat][0])  # type: ignore[index]
    lines = [
        Text.assemble(
            (f"{header.result[seat][0]}. ", "bold"),
            f"seat {seat} {header.players[seat]}: ",
            (str(header.result[seat][1]), "bold"),
            forfeit_text(header, seat),
            luck_text(header, seat),
        )
        for seat in ranking
    ]
    title = "result" if all(luck is None for luck in header.luck) else LUCK_TITLE
    return Panel(Text("\n").join(lines), title=title, title_align="left", border_style="green")


def forfeit_text(header: Header, seat: int) -> Text:
    """ " (forfeited: timeouts)" after a seat that forfeited: why its place is last."""
    why = header.forfeited[seat] if seat < len(header.forfeited) else ""
    return Text(f" (forfeited: {why})", style="bold red") if why else Text("")


def seats_table(columns: Sequence[str]) -> Table:
    table = Table(expand=True, box=None, pad_edge=False, header_style="bold dim")
    table.add_column("", width=1)
    table.add_column("seat", no_wrap=True)
    for name in columns:
        table.add_column(name, overflow="fold")
    return table


def add_seat(table: Table, header: Header, seat: int, to_act: Sequence[int], *cells: RenderableType) -> None:
    marker = Text("▶", style="bold yellow") if seat in to_act else Text(" ")
    table.add_row(marker, Text(f"{seat} {header.players[seat]}"), *cells)


def facts(*pairs: tuple[str, Text | str]) -> Text:
    """``label value`` pairs on one line."""
    parts: list[Text] = []
    for label, value in pairs:
        parts.append(Text.assemble((f"{label} ", "dim"), value if isinstance(value, Text) else Text(value)))
    return Text("   ").join(parts)


# --- the games ----------------------------------------------------------------------------------


def draw_chinese_ten(view: chinese_ten.ChineseTenView, header: Header) -> tuple[RenderableType, Table]:
    lines = [
        facts(("table", cards_text(view.table)), ("stock", str(view.stock_size))),
        facts(
            ("deal", str(view.deal)),
            ("dealer", f"seat {view.dealer}"),
            ("scoring", view.scoring.value),
            ("target", str(view.target)),
        ),
    ]
    if view.turned is not None:
        lines.append(facts(("turned up", card_text(view.turned)), ("", f"seat {view.to_act} picks a target")))
    to_act = [] if view.to_act is None else [view.to_act]
    seats = seats_table(["hand", "captured", "deal points", "total"])
    for seat, hand in enumerate(view.hands):
        add_seat(
            seats,
            header,
            seat,
            to_act,
            hand_text(hand, view.hand_sizes[seat]),
            Text(f"{len(view.captured[seat])} cards"),
            Text(str(view.deal_points[seat])),
            Text(str(view.totals[seat]), style="bold"),
        )
    return Text("\n").join(lines), seats


def draw_spoil_five(view: spoil_five.SpoilFiveView, header: Header) -> tuple[RenderableType, Table]:
    trumps = Text.assemble(
        (view.trumps.symbol, "bold red" if view.trumps.color is Color.RED else "bold"),
        " (turn-up ",
        card_text(view.turn_up),
        f", robbed by seat {view.robbed_by})" if view.robbed_by is not None else ")",
    )
    trick = Text("  ").join(Text.assemble(f"{seat}:", card_text(card)) for seat, card in view.trick)
    lines = [
        facts(
            ("trumps", trumps),
            ("pool", str(view.pool)),
            ("ante", str(view.ante)),
            ("stock", str(view.stock_size)),
        ),
        facts(
            ("deal", f"{view.deal} of {view.deals}"),
            ("dealer", f"seat {view.dealer}"),
            ("phase", view.phase.value.replace("_", " ")),
            ("ranking", view.ranking.value),
        ),
        facts(
            ("trick", trick if view.trick else Text("—", style="dim")),
            ("tricks played", str(len(view.tricks))),
        ),
    ]
    if view.last_deal is not None:
        last = view.last_deal
        who = f"seat {last.seat}" if last.seat is not None else "nobody"
        lines.append(
            facts(
                (
                    "last deal",
                    f"{last.deal}: {last.result.value.replace('_', ' ')} ({who}, {last.chips} chips)",
                )
            )
        )
    to_act = [] if view.to_act is None else [view.to_act]
    seats = seats_table(["hand", "tricks", "chips", "notes"])
    for seat, hand in enumerate(view.hands):
        notes = [
            note
            for note, applies in (
                ("trump Ace announced", view.ace_announced_by == seat),
                ("robbed", view.robbed_by == seat),
                ("jinxing", view.jinxer == seat),
                ("dealer", view.dealer == seat),
            )
            if applies
        ]
        add_seat(
            seats,
            header,
            seat,
            to_act,
            hand_text(hand, view.hand_sizes[seat]),
            Text(str(view.tricks_won[seat]) if view.tricks_won else "0"),
            Text(str(view.banks[seat]), style="bold"),
            Text(", ".join(notes), style="dim"),
        )
    return Text("\n").join(lines), seats


def draw_platinum_fish(view: platinum_fish.PlatinumFishView, header: Header) -> tuple[RenderableType, Table]:
    top = card_text(view.discard[-1]) if view.discard else Text("—", style="dim")
    lines = [
        facts(
            ("discard", Text.assemble(top, (f" ({len(view.discard)} in the pile)", "dim"))),
            ("stock", str(view.stock_size)),
            ("phase", view.phase.value),
        )
    ]
    if view.dice is not None:
        looks = " or ".join(map(str, view.targets))
        lines.append(facts(("dice", f"{view.dice[0]} + {view.dice[1]}: looking for {looks}")))
    to_act = [] if view.to_act is None else [view.to_act]
    seats = seats_table(["hand", "matches", "laid"])
    for seat, hand in enumerate(view.hands):
        ranks = Text(" ").join(card_text(pair[1]) for pair in view.matches[seat][-8:])
        add_seat(
            seats,
            header,
            seat,
            to_act,
            hand_text(hand, view.hand_sizes[seat]),
            Text(str(view.scores[seat]), style="bold"),
            ranks if view.matches[seat] else Text("—", style="dim"),
        )
    return Text("\n").join(lines), seats


def draw_pair_battle(view: pair_battle.PairBattleView, header: Header) -> tuple[RenderableType, Table]:
    by_rank: dict[Any, list[Card]] = {}
    for card in (card for laid in view.laid for card in laid):
        by_rank.setdefault(card.rank, []).append(card)
    on_table = Text("  ").join(cards_text(by_rank[rank]) for rank in sorted(by_rank, reverse=True))
    phase = view.phase.value
    if view.timing is pair_battle.Timing.LOCKSTEP and view.phase is pair_battle.Phase.PLAY:
        phase += f" · tick {view.tick}"
    if view.end is not None:
        phase += f" ({view.end.value})"
    lines = [
        facts(("phase", phase), ("timing", view.timing.value)),
        facts(("laid by rank", on_table if by_rank else Text("—", style="dim"))),
    ]
    seats = seats_table(["hand", "reserve", "laid", "score", "penalties"])  # no turns: no marker
    for seat, hand in enumerate(view.hands):
        laid = view.laid[seat]
        status = " finished" if seat in view.finishers else ""
        add_seat(
            seats,
            header,
            seat,
            [],
            hand_text(hand, view.hand_sizes[seat]),
            Text(str(view.reserve_sizes[seat])),
            Text(f"{len(laid)} cards{status}"),
            Text(str(view.scores[seat]), style="bold"),
            Text(str(view.penalties[seat])),
        )
    return Text("\n").join(lines), seats


GAMES: dict[str, Callable[[Any, Header], tuple[RenderableType, Table]]] = {
    "chinese_ten": draw_chinese_ten,
    "spoil_five": draw_spoil_five,
    "platinum_fish": draw_platinum_fish,
    "pair_battle": draw_pair_battle,
}
