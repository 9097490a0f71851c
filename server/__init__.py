"""The referee: grpc.aio services, match actors, clocks, journals; the only place engine objects become proto."""
