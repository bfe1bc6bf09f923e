"""SSCI and RCCI (IRSC seed, section 3.3) on hand-computed cases, properties, and run helpers."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from airbench_mteb.metrics.pairwise import (
    PairwiseComparison,
    compare_runs,
    first_hit_positions,
    rank_matrix,
    rcci,
    ssci,
)

# n = 3 (lists of 4). Row by row: m1 = 3, 1, -1, -1, 2 and m2 = 2, 1, 3, -1, 0.
R1 = [[1, 0, 0, 0],
      [0, 0, 1, 0],   # same rank in both lists: a tie, contributes 0
      [0, 0, 0, 0],   # model 1 misses, model 2 ranks it first
      [0, 0, 0, 0],   # both miss: contributes 0
      [0, 1, 1, 0]]   # two correct documents: the first one counts
R2 = [[0, 1, 0, 0],
      [0, 0, 1, 0],
      [1, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 1]]


def test_first_hit_positions_count_from_the_end_and_mark_misses():
    assert first_hit_positions(np.array(R1)).tolist() == [3, 1, -1, -1, 2]
    assert first_hit_positions(np.array(R2)).tolist() == [2, 1, 3, -1, 0]


def test_ssci_and_rcci_by_hand():
    # |m1 - m2| = 1, 0, 4, 0, 2 -> sum 7; m1 - m2 = 1, 0, -4, 0, 2 -> sum -1; Q = 5, n = 3
    assert ssci(R1, R2) == pytest.approx(7 / 15)
    assert rcci(R1, R2) == pytest.approx(-1 / 15)
    assert rcci(R2, R1) == pytest.approx(1 / 15)


def test_single_query_extremes():
    # one model ranks the answer first (m = n = 1), the other misses it (m = -1): (n + 1) / n = 2
    assert ssci([[1, 0]], [[0, 0]]) == pytest.approx(2.0)
    assert rcci([[1, 0]], [[0, 0]]) == pytest.approx(2.0)
    assert rcci([[0, 0]], [[1, 0]]) == pytest.approx(-2.0)
    assert ssci([[0, 1, 0]], [[0, 1, 0]]) == 0.0


def test_misses_on_both_sides_are_agreement():
    assert ssci([[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0]]) == 0.0
    assert rcci([[0, 0, 0]], [[0, 0, 0]]) == 0.0


@pytest.mark.parametrize("r1, r2, message", [
    ([[1]], [[0]], "n = 0"),
    ([[1, 0]], [[1, 0, 0]], "same shape"),
    ([1, 0], [1, 0], "matrix"),
    ([[2, 0]], [[1, 0]], "binary"),
    (np.zeros((0, 3)), np.zeros((0, 3)), "no queries"),
])
def test_invalid_input_is_a_clear_error(r1, r2, message):
    with pytest.raises(ValueError, match=message):
        ssci(r1, r2)
    with pytest.raises(ValueError, match=message):
        rcci(r1, r2)


matrices = st.tuples(st.integers(1, 12), st.integers(2, 11)).flatmap(
    lambda shape: st.tuples(arrays(np.int8, shape, elements=st.integers(0, 1)),
                            arrays(np.int8, shape, elements=st.integers(0, 1))))


@settings(max_examples=200, deadline=None)
@given(matrices)
def test_properties(pair):
    r1, r2 = pair
    n = r1.shape[1] - 1
    value = ssci(r1, r2)
    assert value == pytest.approx(ssci(r2, r1))
    assert 0.0 <= value <= (n + 1) / n + 1e-12
    assert ssci(r1, r1) == 0.0
    assert rcci(r1, r2) == pytest.approx(-rcci(r2, r1))
    assert abs(rcci(r1, r2)) <= value + 1e-12


def test_rank_matrix_breaks_ties_like_pytrec_eval():
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 0.5}, "q2": {"x": 0.9, "y": 0.8}, "q3": {"z": 0.3}}
    qrels = {"q1": {"a": 1}, "q2": {"y": 1, "x": 0}, "q3": {"w": 1}}
    matrix = rank_matrix(run, qrels, depth=3)
    assert matrix.tolist() == [[0, 1, 0], [0, 1, 0], [0, 0, 0]]
    reciprocal = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    for row, qid in zip(matrix, sorted(qrels), strict=True):
        expected = 1 / reciprocal[qid]["recip_rank"] if reciprocal[qid]["recip_rank"] else None
        assert (row.argmax() + 1 if row.any() else None) == expected


def test_rank_matrix_counts_a_query_without_results_as_a_miss():
    assert rank_matrix({}, {"q": {"d": 1}}, depth=2).tolist() == [[0, 0]]
    with pytest.raises(ValueError, match="depth"):
        rank_matrix({}, {"q": {"d": 1}}, depth=1)


def test_compare_runs_gives_symmetric_and_antisymmetric_matrices():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    runs = {
        "A": {"q1": {"d1": 0.9, "d2": 0.1}, "q2": {"d2": 0.8, "d1": 0.2}},
        "B": {"q1": {"d2": 0.9, "d1": 0.1}, "q2": {"d1": 0.8, "d3": 0.2}},
        "C": {"q1": {"d1": 0.9}, "q2": {"d2": 0.9}},
    }
    comparison = compare_runs(runs, qrels, depth=2)
    matrices = {m: rank_matrix(runs[m], qrels, 2) for m in runs}
    for i, a in enumerate("ABC"):
        for j, b in enumerate("ABC"):
            assert comparison.ssci[i, j] == pytest.approx(ssci(matrices[a], matrices[b]))
            assert comparison.rcci[i, j] == pytest.approx(rcci(matrices[a], matrices[b]))
    # A: ranks 1, 1 (m = 1, 1); B: rank 2, miss (m = 0, -1): SSCI = (1 + 2) / 2 = 1.5, RCCI A vs B = +1.5
    assert comparison.ssci[0, 1] == pytest.approx(1.5)
    assert comparison.rcci[0, 1] == pytest.approx(1.5)
    assert comparison.ssci[0, 2] == 0.0
    rows = list(csv.reader(io.StringIO(comparison.to_csv("rcci"))))
    assert rows[0] == ["model", "A", "B", "C"]
    assert rows[2][0] == "B" and float(rows[2][1]) == pytest.approx(-1.5)
    assert "| A | 0.0000 | 1.5000 | 0.0000 |" in comparison.to_markdown("ssci")
    again = PairwiseComparison.from_dict(comparison.to_dict())
    assert again.models == comparison.models and np.allclose(again.rcci, comparison.rcci)
    with pytest.raises(ValueError, match="at least two"):
        compare_runs({"A": runs["A"]}, qrels)
