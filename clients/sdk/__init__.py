"""The bot author's room: what a Python bot imports, and nothing of the referee (tests/test_imports.py
and the wheel's test hold it). The SDK is bot.py, what it says on the stream protocol.py; their
public names are passed on here: ``from croupier.clients.sdk import Bot, main``."""

from croupier.clients.sdk.bot import (
    MAX_RETRIES,
    PROTOCOL_VERSION,
    RESEND_SECONDS,
    ActionT,
    Bot,
    BotFactory,
    Choice,
    Client,
    Commented,
    Match,
    Result,
    ViewT,
    default_options,
    main,
    play_offline,
    run_client,
)

__all__ = [
    "MAX_RETRIES",
    "PROTOCOL_VERSION",
    "RESEND_SECONDS",
    "ActionT",
    "Bot",
    "BotFactory",
    "Choice",
    "Client",
    "Commented",
    "Match",
    "Result",
    "ViewT",
    "default_options",
    "main",
    "play_offline",
    "run_client",
]
