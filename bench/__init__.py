"""Benchmark scripts: they print figures; nothing here is asserted by a test."""
