"""Word lists and sentence templates of the synthetic histories (data only): `en` (the operations history),
`ko` and `mixed` (its Korean and mixed Korean/English variants), `reworded` (reworded questions and
out-of-domain negatives for it), `household` (the held-out household history)."""
