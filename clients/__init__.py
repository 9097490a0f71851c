"""What users run against a referee, a package (room) per user: the bot author's SDK, loop and check-bot,
the organiser's tournaments, ladder and isolation, the audit trail, results, the spectators, research
bridges, the docs generators; at the top only the CLI and what several rooms share."""
