"""The offline ranking lab: the engine's legs and ranking re-done in Python on cached pools, so a fusion formula,
a floor or a lever is a pure function of numbers and can be tried on every question set in seconds, tuned on the
tuning sets and read on the held-out ones (see benches/README.md, "The ranking lab")."""
