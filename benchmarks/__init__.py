"""Benchmark scripts. A regular package (not a namespace one) so that `benchmarks.*` resolves here first:
pysbd installs an unrelated top-level `benchmarks` package into site-packages."""
