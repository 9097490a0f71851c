"""The referee: grpc.aio services, match actors, clocks, journals (engine <-> proto only in convert)."""
