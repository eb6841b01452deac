"""Benchmarks. Run each from the repository root as `python -m bench.NAME` (the root's packages, fakes/
included, are then the ones measured, as with every `python -m` command of the project)."""
