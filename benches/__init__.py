"""Benchmarks for funes_py: a synthetic history generator, metrics and the LoCoMo loader (see README.md)."""
