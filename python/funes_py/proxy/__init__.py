"""The agent-archive proxy (`funes-py proxy`): long memory for a local agent without a bigger window.

It sits between an agent and an OpenAI-compatible engine (llama-server). Every message is archived verbatim
into the tenant's funes_py memory; past a share of the window old tool outputs are replaced by one-line
receipts; a `recall` tool, run by the proxy itself, searches and reads the archive; when even that does not
fit, a new segment starts with handoff notes. Every decision is stored by message id and replayed, so the
engine's prefix cache stays valid.

    request -> app -> turn: identify (identity) -> archive (archive, records) -> plan (planner: replay,
               receipts, segments, auto-recall, window) -> rounds (recall_tool, sse) -> answer
    background: memory (debounced index runs into the engine), slots (llama-server KV saves)

Modules: `config` (every setting), `identity` (ids, hash chain), `messages` (message facts), `archive`
(the .funes.jsonl source and its index), `records` (message -> archive record), `decisions` (stored
decisions), `replay` (the engine's view), `receipts` (mask batches and receipts), `segments` (switches),
`window` (token estimates, the guard), `recall_tool`, `planner`, `rounds`, `sse`, `engines` (llama.cpp
detection, counts, slot calls), `slots` (what the slot holds; saves and restores), `memory` (engines per
tenant, indexing), `tenant`, `service` (lifetimes), `turn` (one request), `errors`, `upstream`, `app`, `cli`.
"""
