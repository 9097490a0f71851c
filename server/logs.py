"""structlog, configured once at start as its docs say: context first, JSON off a terminal."""

from __future__ import annotations

import logging
import sys

import structlog

_configured = False


class _Stderr:
    """Whatever ``sys.stderr`` is when a line is written: a logger caches its file, and a harness
    that swaps stderr (pytest's capture, a viewer's terminal) closes the one it swapped out."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


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
        logger_factory=structlog.PrintLoggerFactory(_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
