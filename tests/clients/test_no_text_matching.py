"""No client tells the referee's Errors or refusals apart by their words: they switch on
``Error.reason`` and ``ActionResult.refusal_reason`` (the words are for people and may change)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLIENTS = [
    *sorted((REPO / "clients").rglob("*.py")),
    REPO / "clients" / "node" / "bot.js",
    REPO / "clients" / "cpp" / "bot.cc",
    REPO / "clients" / "go" / "bot.go",
]
TEXT = r"(?:[\w.()\[\]]*\.(?:message|reason|Message|Reason)\b(?:\(\))?)"
"""An Error's or ActionResult's words: ``error.message``, ``m.Error.Message``, ``r.reason``..."""
ENUM = r"(?:REASON|REFUSAL)_[A-Z_]+[\"']"
"""A reason's name as a string (the Node bot reads enums as their names)."""
MATCHING = [
    re.compile(rf"""["'][^"']*["']\s+(?:not\s+)?in\s+{TEXT}"""),  # "is not open" in error.message
    re.compile(
        rf"{TEXT}\s*\.\s*(?:startswith|endswith|find|rfind|includes|startsWith|endsWith|indexOf|match|search)\("
    ),
    re.compile(rf"{TEXT}\s*(?:==|!=|===|!==)\s*[\"'](?!{ENUM})"),  # an enum's name is no text
    re.compile(rf"[\"'](?!{ENUM})[^\"']*[\"']\s*(?:==|!=|===|!==)\s*{TEXT}"),
    re.compile(rf"strings\.\w+\(\s*{TEXT}"),  # Go: strings.Contains(m.Error.Message, ...)
    re.compile(rf"re\.\w+\([^)]*{TEXT}"),
]


def matches_on_text(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if any(p.search(line) for p in MATCHING)]


def test_no_client_tells_errors_or_refusals_apart_by_their_words() -> None:
    assert all(path.is_file() for path in CLIENTS)
    found = {
        str(p.relative_to(REPO)): hits for p in CLIENTS if (hits := matches_on_text(p.read_text("utf-8")))
    }
    assert found == {}, "switch on Error.reason / ActionResult.refusal_reason instead"


def test_the_check_catches_each_way_the_clients_once_did_it() -> None:
    before = [
        'level = logging.DEBUG if "is not open" in error.message else logging.WARNING',
        'if (!message.error.message.includes("is not open")) {',
        'if (message.error().message().find("is not open") == std::string::npos) {',
        'if !strings.Contains(m.Error.Message, "is not open") {',
        'if refused.reason == "not your turn":',
        "if r.reason.startswith('not your turn'):",
        'if ("not your turn" == r.reason) {',
    ]
    assert matches_on_text("\n".join(before)) == before
    after = [
        'log.log(level, "referee: %s: %s", Reason.Name(reason), error.message)',
        "if (!ROUTINE.has(e.reason)) log(`referee: ${e.reason}: ${e.message}`);",
        'log.Printf("referee: %s: %s", e.Reason, e.Message)',
        'if (e.reason === "REASON_JOURNAL_FULL") {',
        'f"after SeatForfeited ({forfeited[0].reason}): {failed}"',
    ]
    assert matches_on_text("\n".join(after)) == []
