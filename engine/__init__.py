"""The rules of Croupier's games: pure Python, no I/O, no clock, no logging."""
