"""structlog, configured once at start as its docs say: context first, JSON off a terminal."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import structlog

_configured = False


class _Sink:
    """Where every log line goes: the file an embedded referee logs to while it runs (``to_file``),
    else whatever ``sys.stderr`` is when the line is written. Loggers cache their file on first
    use: a file closed under them, or a stream a harness swapped out and closed (pytest's
    capture), would fail every later line of the process."""

    file: TextIO | None = None

    def write(self, text: str) -> int:
        return (self.file or sys.stderr).write(text)

    def flush(self) -> None:
        (self.file or sys.stderr).flush()


SINK = _Sink()


@contextlib.contextmanager
def to_file(path: Path) -> Iterator[None]:
    """Log lines go to ``path`` (appended) while this lasts, then back to stderr."""
    with path.open("a", encoding="utf-8") as file:
        SINK.file = file
        try:
            yield
        finally:
            SINK.file = None


def configure(json: bool | None = None, level: int = logging.INFO) -> None:
    """Configure structlog for the process (later calls do nothing).

    ``json`` None: JSON lines when stderr is not a terminal, readable lines when it is.
    """
    global _configured
    if _configured:
        return
    _configured = True
    if json is None:
        json = not sys.stderr.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(SINK),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
