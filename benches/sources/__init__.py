"""The source adapters' benchmark: a large generated ChatGPT export, and the memory and time of reading and
indexing it (`python -m benches.sources.bench`)."""
