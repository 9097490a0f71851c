"""A bot's version when a tournament file gives none: one bot, one identity, wherever it plays."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
from collections.abc import Sequence
from pathlib import Path

LAUNCH_OPTIONS = ("--max-matches", "--server", "--token")
"""Options of a bot's command that say how it is run, not which bot it is."""


def command_digest(command: Sequence[str]) -> str:
    """A bot's version when the file gives none: a digest of what it runs, not of how it is
    launched, so that one bot is one identity wherever it plays (``croupier match --bot mybot.py``
    on a referee and ``--in-process``, ``python mybot.py``, a tournament file's command). A Python
    bot's file (``FILE.py``, ``--strategy FILE.py[:Class]``) is read: a changed file is a new
    version; any other command is its words, without the options that connect it."""
    return hashlib.sha256(json.dumps(_what_runs(command)).encode()).hexdigest()[:8]


def _what_runs(command: Sequence[str]) -> list[str]:
    words = list(command)
    if len(words) == 3 and words[:2] == ["/bin/sh", "-c"]:  # croupier match's SPEC, as a shell runs it
        with contextlib.suppress(ValueError):
            words = shlex.split(words[2])
    kept: list[str] = []
    skip = False
    for word, after in zip(words, [*words[1:], ""], strict=True):
        if skip:
            skip = False
        elif word in LAUNCH_OPTIONS:  # how many matches at once, where: not the bot
            skip = True
        elif not word.startswith(tuple(f"{option}=" for option in LAUNCH_OPTIONS)):
            kept.append(word)
        if word == "--strategy" or word.startswith("--strategy="):
            return _strategy(word.partition("=")[2] or after)
    python = [word for word in kept if word.endswith(".py") or ".py:" in word]
    if python:
        return _strategy(python[0])
    return kept


def _strategy(spec: str) -> list[str]:
    """An SDK strategy: a bundled one or module:Class by name, a file by its contents."""
    path, _, attribute = spec.partition(".py:") if ".py:" in spec else (spec, "", "")
    file = Path(path + ".py" if attribute else path)
    if file.suffix == ".py" and file.is_file():
        return ["python", hashlib.sha256(file.read_bytes()).hexdigest(), attribute]
    return ["strategy", spec]
