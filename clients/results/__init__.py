"""What play leaves behind, for every way of playing it (a tournament, ``croupier match``, and
whatever schedules duplicate sets): the schedule of sets and their secret deals (schedule), the
results database (store), the ratings fitted from it (ratings) and its tables (report,
``croupier ratings``). The runner writes it, the web viewer and the CLI read it; it imports neither.
"""
