"""The audit trail, for anyone checking a tournament: the deals' commitment and reveal, the
run's archive (``croupier export``) and its check (``croupier verify``)."""
