"""The organiser's tournaments: the tournament file, the runner of its duplicate round robin, its
bots' processes and its referee client (results, the ladder, isolation and the audit trail are
rooms of their own)."""
