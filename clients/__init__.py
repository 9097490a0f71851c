"""What users run against a referee: the bot SDK and bundled bots, the spectator, the CLI."""
