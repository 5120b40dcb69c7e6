"""Standalone measurements outside `benches.run`: the recall service under load, memory over time, one engine's
warm latency, and what the embedder and reranker models cost. Each is one command (see benches/README.md)."""
