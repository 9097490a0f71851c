"""Sections of the docs generated from the code (docs/bots.md's types, docs/protocol.md's error
reasons): each lies between a BEGIN and an END comment, and its generator's command line prints
it or, with ``--write``, rewrites it in place. A test compares each with what its code says."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def cell(text: str) -> str:
    """A markdown table cell's text: a pipe (``Seat | None``) would end the cell."""
    return text.replace("|", "\\|")


def section(document: str, begin: str, end: str) -> str:
    """The generated section of ``document`` as it stands, its BEGIN and END comments included."""
    start, stop = document.index(begin), document.index(end) + len(end)
    return document[start:stop]


def main(
    argv: list[str] | None,
    description: str,
    document: Path,
    markdown: Callable[[], str],
    begin: str,
    end: str,
) -> int:
    """Print the section, or rewrite it in ``document`` (``--write [FILE]``)."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", type=Path, nargs="?", const=document, help="rewrite this file's section")
    args = parser.parse_args(argv)
    if args.write is None:
        print(markdown())
        return 0
    text = args.write.read_text(encoding="utf-8")
    args.write.write_text(text.replace(section(text, begin, end), markdown()), encoding="utf-8")
    return 0
