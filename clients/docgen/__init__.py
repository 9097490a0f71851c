"""For maintainers: the sections of docs/ generated from the code (a bot's types, the error
reasons), each rewritten by its command and held current by a test."""
