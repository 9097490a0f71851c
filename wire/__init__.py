"""The wire, shared by the referee and its clients: the codec between engine objects and proto
messages (convert), a decision's messages as bytes (framing), refusal reasons and the domain
errors' status codes (reasons, errors), and which build of the engine runs (native: both sides
load it first).

It imports the engine and the generated stubs, never ``croupier.server`` or ``croupier.clients``,
so a bot's install (the SDK) needs only the engine, the wire and the stubs.
"""
