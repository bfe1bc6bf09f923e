"""SSCI and RCCI (IRSC seed, section 3.3) on hand-computed cases, properties, and run helpers."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.metrics.pairwise import (
    PairwiseComparison,
    compare_runs,
    first_hit_positions,
    rank_matrix,
    rcci,
    rcci_ci,
    rcci_test,
    ssci,
    ssci_ci,
)
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import adjust_p_values
from airbench_mteb.report.compare import Comparison, read_comparison, write_comparison
from airbench_mteb.report.pairwise_tables import legend, matrix_csv, matrix_markdown, pairs_csv, pairs_markdown

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
    rows = list(csv.reader(io.StringIO(matrix_csv(comparison, "rcci"))))
    assert rows[0] == ["model", "A", "B", "C"]
    assert rows[2][0] == "B" and float(rows[2][1]) == pytest.approx(-1.5)
    assert "| A | 0.0000 | 1.5000 | 0.0000 |" in matrix_markdown(comparison, "ssci")
    again = PairwiseComparison.from_json(comparison.to_json())
    assert again.models == comparison.models and np.allclose(again.rcci, comparison.rcci)
    with pytest.raises(ValueError, match="at least two"):
        compare_runs({"A": runs["A"]}, qrels)


# --- uncertainty of every cell ----------------------------------------------------------------------------------

def _runs(num_queries: int, seed: int) -> tuple[dict[str, dict], dict[str, dict]]:
    """Three models over ``num_queries`` queries with one relevant document each: 'good' ranks it near the
    top, 'twin' is 'good' with a few queries reshuffled, 'weak' ranks it low or misses it."""
    rng = np.random.default_rng(seed)
    qrels = {f"q{i:03d}": {f"rel{i}": 1} for i in range(num_queries)}

    def run(first_ranks: np.ndarray) -> dict[str, dict[str, float]]:
        ranked = {}
        for i, rank in enumerate(first_ranks):
            scores = {f"other{i}_{r}": 1.0 - r / 20 for r in range(12)}
            if rank < 12:
                scores[f"rel{i}"] = 1.0 - rank / 20 + 0.001
            ranked[f"q{i:03d}"] = scores
        return ranked

    good = rng.integers(0, 3, num_queries)
    twin = np.where(rng.random(num_queries) < 0.2, rng.integers(0, 3, num_queries), good)
    weak = rng.integers(2, 14, num_queries)
    return {"good": run(good), "twin": run(twin), "weak": run(weak)}, qrels


def test_every_cell_carries_its_interval_and_rcci_its_corrected_test():
    runs, qrels = _runs(60, seed=1)
    resampling = Resampling(n_resamples=999, seed=3)
    comparison = compare_runs(runs, qrels, depth=10, resampling=resampling)
    u = comparison.uncertainty
    matrices = [rank_matrix(runs[m], qrels, 10) for m in comparison.models]
    for i in range(3):
        assert (u.ssci_low[i, i], u.ssci_high[i, i], u.rcci_p[i, i], u.rcci_p_adjusted[i, i]) == (0, 0, 1, 1)
        for j in range(3):
            if i == j:
                continue
            assert u.ssci_low[i, j] <= comparison.ssci[i, j] <= u.ssci_high[i, j]
            assert u.rcci_low[i, j] <= comparison.rcci[i, j] <= u.rcci_high[i, j]
            # the library's interval and test of this very pair, row model first
            draws = {"n_resamples": 999, "seed": 3}
            similarity, contest = ssci_ci(matrices[i], matrices[j], **draws), rcci_ci(matrices[i], matrices[j], **draws)
            assert (u.ssci_low[i, j], u.ssci_high[i, j]) == pytest.approx((similarity.low, similarity.high))
            assert (u.rcci_low[i, j], u.rcci_high[i, j]) == pytest.approx((contest.low, contest.high))
            assert u.rcci_p[i, j] == rcci_test(matrices[i], matrices[j], **draws).p_value
    upper = [(0, 1), (0, 2), (1, 2)]
    expected = adjust_p_values([u.rcci_p[i, j] for i, j in upper], "holm")
    assert [u.rcci_p_adjusted[i, j] for i, j in upper] == pytest.approx(list(expected))
    # good and twin differ on a few queries only; weak is far behind both
    names = comparison.models
    good, twin, weak = (names.index(m) for m in ("good", "twin", "weak"))
    assert not u.rcci_significant()[good, twin] and u.rcci_significant()[good, weak]
    assert u.rcci_significant()[weak, good]  # the same test from the other side


def test_rcci_interval_and_p_agree_with_scipy():
    runs, qrels = _runs(50, seed=4)
    comparison = compare_runs({m: runs[m] for m in ("good", "twin")}, qrels, depth=10, resampling=Resampling())
    m1, m2 = (first_hit_positions(rank_matrix(runs[m], qrels, 10)) / 9 for m in ("good", "twin"))
    reference = stats.bootstrap((m1 - m2,), np.mean, method="BCa", n_resamples=9999,
                                random_state=2).confidence_interval
    # two independent 9,999-resample estimates of a 2.5 % quantile: ~0.04 interval widths apart at 4 standard errors
    tolerance = 0.06 * (reference.high - reference.low)
    u = comparison.uncertainty
    assert u.rcci_low[0, 1] == pytest.approx(reference.low, abs=tolerance)
    assert u.rcci_high[0, 1] == pytest.approx(reference.high, abs=tolerance)
    expected_p = stats.permutation_test((m1, m2), lambda x, y, axis: np.mean(x - y, axis=axis),
                                        permutation_type="samples", n_resamples=9999, random_state=3).pvalue
    assert u.rcci_p[0, 1] == pytest.approx(expected_p, abs=0.03)  # 4 sqrt(2) standard errors of 9,999 draws


def test_uncertainty_is_written_and_read_back_and_old_files_still_read(tmp_path: Path):
    runs, qrels = _runs(30, seed=2)
    comparison = compare_runs(runs, qrels, depth=10, resampling=Resampling(n_resamples=499))
    again = PairwiseComparison.from_json(json.loads(json.dumps(comparison.to_json(), allow_nan=False)))
    assert again.uncertainty.resampling == comparison.uncertainty.resampling
    assert np.allclose(again.uncertainty.rcci_p_adjusted, comparison.uncertainty.rcci_p_adjusted)
    assert (again.uncertainty.rcci_significant() == comparison.uncertainty.rcci_significant()).all()
    pairs = list(csv.DictReader(io.StringIO(pairs_csv(comparison))))
    assert [(row["model_a"], row["model_b"]) for row in pairs] == [("good", "twin"), ("good", "weak"),
                                                                   ("twin", "weak")]
    assert float(pairs[1]["rcci_p_adjusted"]) == pytest.approx(comparison.uncertainty.rcci_p_adjusted[0, 2], abs=1e-6)
    markdown = matrix_markdown(comparison, "rcci")
    low, high = comparison.uncertainty.rcci_low[0, 1], comparison.uncertainty.rcci_high[0, 1]
    assert f"| {comparison.rcci[0, 1]:.4f} [{low:.2f}, {high:.2f}]†" in markdown  # good vs twin: not significant
    assert "Holm-adjusted over the 3 model pairs" in legend(comparison)

    # a comparison.json written before the intervals existed
    old = Comparison("test", 10, {"IRSCTitleRetrieval": {"en": compare_runs(runs, qrels, depth=10)}})
    write_comparison(old, tmp_path / "old")
    data = json.loads((tmp_path / "old" / "comparison.json").read_text())
    assert "uncertainty" not in data["comparisons"]["IRSCTitleRetrieval"]["en"]
    read = read_comparison(tmp_path / "old").matrices["IRSCTitleRetrieval"]["en"]
    assert read.uncertainty is None and np.allclose(read.ssci, old.matrices["IRSCTitleRetrieval"]["en"].ssci, atol=1e-6)
    assert "[" not in matrix_markdown(read, "ssci") and pairs_markdown(read) == ""
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "comparison.json").write_text(json.dumps({"split": "test", "depth": 10, "comparisons": {
        "IRSCTitleRetrieval": {"en": {"models": ["a", "b"]}}}}))
    with pytest.raises(DatasetError, match=r"bad/comparison.json: not a comparison .*IRSCTitleRetrieval/en: no 'ssci'"):
        read_comparison(tmp_path / "bad")


def test_write_comparison_carries_intervals_into_every_output(tmp_path: Path):
    runs, qrels = _runs(30, seed=5)
    comparison = Comparison("test", 10, {"IRSCTitleRetrieval": {
        "en": compare_runs(runs, qrels, depth=10, resampling=Resampling(n_resamples=499))}})
    written = {path.relative_to(tmp_path).as_posix() for path in write_comparison(comparison, tmp_path)}
    assert written == {"comparison.json", "comparison.md", "IRSCTitleRetrieval/en_ssci.csv",
                       "IRSCTitleRetrieval/en_rcci.csv", "IRSCTitleRetrieval/en_pairs.csv"}
    saved = json.loads((tmp_path / "comparison.json").read_text())["comparisons"]["IRSCTitleRetrieval"]["en"]
    assert saved["uncertainty"]["correction"] == "holm" and saved["uncertainty"]["n_resamples"] == 499
    markdown = (tmp_path / "comparison.md").read_text()
    assert "| model A | model B | RCCI (A vs B) | p | p adjusted |" in markdown and "†: RCCI not significantly" in markdown


def test_the_heatmap_marks_pairs_whose_rcci_is_not_significant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from airbench_mteb.report import ReportRequest, irsc

    runs, qrels = _runs(60, seed=1)
    comparison = compare_runs(runs, qrels, depth=10, resampling=Resampling(n_resamples=999))
    write_comparison(Comparison("test", 10, {"IRSCTitleRetrieval": {"en": comparison}}), tmp_path / "cmp")
    figures = []
    monkeypatch.setattr(irsc, "png", lambda figure, **options: figures.append(figure) or (lambda handle: None))
    irsc.ssci_heatmaps(ReportRequest(out=tmp_path / "report", predictions=tmp_path / "cmp"))
    (figure,) = figures
    axis = figure.axes[0]
    labels = {(round(text.get_position()[1]), round(text.get_position()[0])): text.get_text() for text in axis.texts}
    good, twin, weak = (comparison.models.index(m) for m in ("good", "twin", "weak"))
    assert labels[good, twin].endswith("†") and labels[twin, good].endswith("†")
    assert not labels[good, weak].endswith("†") and not labels[good, good].endswith("†")
    low, high = comparison.uncertainty.ssci_low[good, weak], comparison.uncertainty.ssci_high[good, weak]
    assert labels[good, weak] == f"{comparison.ssci[good, weak]:.3f}\n[{low:.2f}, {high:.2f}]"
    hatched = {(round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in axis.patches if p.get_hatch()}
    assert hatched == {(good, twin), (twin, good)}
    assert "RCCI not significant" in figure._suptitle.get_text()
