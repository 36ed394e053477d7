"""Benchmarks of reins (not tests, not run by CI): ``make bench`` runs every ``bench_*.py``."""
