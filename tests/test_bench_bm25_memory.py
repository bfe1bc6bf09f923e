"""The pure helpers of ``benchmarks/bench_bm25_memory.py`` and its realistic vocabulary's rare tokens (no engine run)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_bm25_memory import (
    Figures,
    Measure,
    allocated_bytes,
    find_count,
    median,
    summary_table,
    top10_agreement,
)
from msmarco_mirror import rare_tokens


def test_two_commands_add_their_times_and_keep_the_larger_peaks():
    total = Measure(10.0, 500.0, 300.0, 40.0, 450.0) + Measure(5.0, 700.0, 200.0, 0.0, 400.0)
    assert total == Measure(15.0, 700.0, 300.0, 40.0, 450.0)
    assert median([Measure(1, 2, 3, 4, 5), Measure(3, 6, 9, 12, 15), Measure(2, 4, 6, 8, 10)]) == Measure(2, 4, 6, 8, 10)


def test_the_postings_count_is_found_in_a_manifest_of_any_layout():
    assert find_count({"format": 3, "counts": {"terms": 7, "postings": 41}}) == 41
    assert find_count({"files": [{"name": "a"}, {"stats": {"postings": 9}}]}) == 9
    assert find_count({"counts": {"terms": 7}}) is None
    assert find_count({"postings": "many"}) is None


def test_top10_agreement_compares_sets_of_ids_and_tells_ties_at_the_cut_off():
    ours = {"q1": [["a", 3.0], ["b", 2.0], ["c", 1.0]],
            "q2": [["a", 3.0], ["b", 1.0]],  # b and d tie at the cut-off: each engine kept one
            "q3": [["a", 3.0], ["b", 2.0]],  # b outscores the c kept instead: a real difference
            "q4": [["x", 1.0]]}
    theirs = {"q1": [["c", 1.0], ["b", 2.0], ["a", 3.0]], "q2": [["a", 3.0], ["d", 1.00001]],
              "q3": [["a", 3.0], ["c", 1.0]]}
    assert top10_agreement(ours, theirs) == (1, 1, 4)


def test_allocated_bytes_count_what_is_written_not_a_sparse_files_size(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "written").write_bytes(b"x" * 100_000)
    with (tmp_path / "sparse").open("wb") as sparse:
        sparse.truncate(50_000_000)
    counted = allocated_bytes([tmp_path, tmp_path / "missing"])
    assert 100_000 <= counted < 1_000_000
    assert counted == os.stat(tmp_path / "sub" / "written").st_blocks * 512 + os.stat(tmp_path / "sparse").st_blocks * 512


def test_summary_table_gives_plugin_vs_pyserini_and_the_ratios():
    ours = Measure(100.0, 900.0, 600.0, 1_600.0, 700.0)
    figures = Figures("long-real", 300_000, 100_000_000, 2_000_000, 800_000_000, ours, {10: 2.0, 1000: 8.0},
                      200_000_000, Measure(60.0, 800.0, 800.0, 300.0, 800.0),
                      Measure(90.0, 1_000.0, 1_000.0, 300.0, 1_000.0), {10: 4.0, 1000: 16.0}, (1990, 10, 2000))
    header, rule, row = summary_table([figures])
    assert header.count("|") == rule.count("|") == row.count("|") == 9
    assert "800 MB (8.00) vs 200 MB (2.00): 4.00x" in row
    assert "1,600 MB vs 300 MB" in row
    assert "2.00 s vs 4.00 s: 0.50x" in row and "8.00 s vs 16.00 s: 0.50x" in row
    assert "100.0 s vs 90.0 s: 1.11x" in row and "900 MB vs 1,000 MB: 0.90x" in row
    assert "(600 MB vs 1,000 MB: 0.60x; 700 MB vs 1,000 MB: 0.70x)" in row  # PSS; the largest process
    assert figures.index_ratio() == 4.0


def test_rare_tokens_are_distinct_made_up_and_none_a_real_word():
    english = ["house", "river", "garden", "light", "the"]
    weights = np.array([0.3, 0.2, 0.2, 0.2, 0.1])
    tokens = rare_tokens(2_000, english, weights, np.random.default_rng(0))
    assert len(tokens) == len(set(tokens)) == 2_000
    assert not set(tokens) & set(english)
    assert all(token.isalnum() and token.isascii() for token in tokens)
    assert any(token.isdigit() for token in tokens) and any(token.isalpha() for token in tokens)
