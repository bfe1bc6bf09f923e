"""Table-driven bad-input cases over every command and reader (issue 18, item 8).

Each ``cases_<area>.py`` module defines ``CASES: list[Case]``; ``tests/test_bad_inputs.py`` runs
them under pytest and ``benchmarks/bench_bad_inputs.py`` runs them all and prints the tally.
"""
