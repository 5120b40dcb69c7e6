"""Benchmarks for funes_py: the harness (`run`, `results`, `registry`) with its parts and synthetic histories, the
ranking lab (`lab/`), standalone probes (`probes/`), the proxy's and the source adapters' benchmarks (`proxy/`,
`sources/`) and the histories' word lists (`vocab/`). See README.md; figures in RESULTS.md."""
