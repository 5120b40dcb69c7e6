"""The one-person mode: one memory on one machine, kept indexed from the agents' own history files.

``config`` (``personal.toml``: sources, exclusions, the skip marker, the private tag), ``privacy`` (what is
cut from a turn before it is stored), ``cursors`` (where each growing file was read to, written after the
engine committed), ``sync`` (one pass over the sources), ``watch`` (the watcher: one per memory, a file lock
says which process), ``stdio`` (``funes-py mcp``: the MCP server over stdio), ``clients`` (``funes-py setup``:
an agent's MCP configuration), ``ui`` (``funes-py ui``: the local page)."""
