"""The one rule for names: what a bot, a tournament or a registration may be called.

Names end up in tables, logs, file names (``DATA/logs/NAME-RUN/BOT.log``) and web pages, so they
are plain: a letter or digit, then letters, digits, '.', '_' or '-', up to 40. A tournament file
and ``croupier register`` check it before anything starts; the referee's RegisterBot holds every
caller to it (a runner registers the instances of a bot run a process per rotation as NAME#R).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
REGISTERED = re.compile(rf"(?:{NAME.pattern})(?:#[0-9]{{1,4}})?")
"""A name the referee registers: a bot's, or one instance of it (NAME#ROTATION)."""
RULE = "use letters, digits, '.', '_' or '-', starting with a letter or digit (up to 40)"


def name_problem(name: str, *, instance: bool = False) -> str | None:
    """Why ``name`` is not a name (``instance``: or NAME#R), in words to follow ``name: ``; None
    if it is one."""
    if (REGISTERED if instance else NAME).fullmatch(name):
        return None
    return f"{name!r}: {RULE}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean X?)' for the choice closest to a misspelt ``word``, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
