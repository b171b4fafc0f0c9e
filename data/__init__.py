"""Benchmark data: problem sets (``data.problems``) and measured sweeps; see data/README.md."""
