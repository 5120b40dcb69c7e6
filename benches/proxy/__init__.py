"""The agent-archive proxy's benchmark: the 9-turn experiment, the model-free probe and the performance targets
(`python -m benches.proxy.bench`)."""
