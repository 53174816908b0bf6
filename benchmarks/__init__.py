"""Myia's benchmark suite: the workloads of BENCHMARKS.md, for Myia and its peers, in one run.

Run ``python -m benchmarks`` from the repository root (``--quick`` for the small, fast run
that CI does); see ``benchmarks/README.md``.
"""
