"""Ties and grades as trec_eval sees them, in every metric (issue 43): the tie-neutral values equal pytrec_eval's
wherever nothing ties in trec_eval's sense, and are the mean over every order of what does tie.

trec_eval stores a run's scores as C ``float``: the oracle here rounds a score as C does (``ctypes.c_float``), so
0.3 and 0.30000000000000004 (or 0.30000001) tie and 1e300 and 1e301 both overflow to one infinity. A grade <= 0
(TREC's -1 and -2 included) has gain 0 and is not relevant, which the oracle takes from pytrec_eval itself, given
the grades as they are (every drawn query keeps a grade >= -1: trec_eval's C code corrupts its memory for a query
whose highest grade is below -1, which the plugin never passes it, :func:`test_a_query_judged_below_minus_one_only`).
"""

from __future__ import annotations

import ctypes
import math
from itertools import groupby, permutations, product
from statistics import mean

import pytest
import pytrec_eval
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from airbench_mteb.data.qrels import read_qrels_tsv
from airbench_mteb.metrics.pairwise import first_hit_positions, rank_matrix
from airbench_mteb.metrics.retrieval import evaluate_run, ranking
from airbench_mteb.metrics.tie_neutral import expected_average_precision, expected_ndcg

# Scores that differ in double precision but not all in float32, beside clearly distinct ones.
SCORES = (0.3, 0.30000000000000004, 0.30000001, 0.3000001, 1.0, 1.0000000000000002, 2.5, -0.0, 0.0, 1e-46,
          1e300, 1e301, -1e300)
K_VALUES = (1, 2, 3, 5, 10)


def as_c_float(score: float) -> float:
    return ctypes.c_float(score).value


def trec_order_groups(scores: dict[str, float]) -> list[list[str]]:
    """The tied groups as C floats make them, best first (within a group any order)."""
    by_score = sorted(scores, key=lambda doc: as_c_float(scores[doc]), reverse=True)
    return [list(group) for _, group in groupby(by_score, key=lambda doc: as_c_float(scores[doc]))]


def pytrec(grades: dict[str, int], rankings: list[list[str]], k: int) -> list[dict[str, float]]:
    """pytrec_eval's measures of each ranking, given as distinct scores (one query per ranking)."""
    qrels = {str(i): dict(grades) for i in range(len(rankings))}
    run = {str(i): {doc: float(len(order) - p) for p, doc in enumerate(order)} for i, order in enumerate(rankings)}
    found = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"map_cut.{k}"}).evaluate(run)
    return [found[str(i)] for i in range(len(rankings))]


@st.composite
def queries(draw: st.DrawFn) -> tuple[dict[str, float], dict[str, int], int]:
    """One query: up to 6 retrieved documents, grades -2..3 (some judged documents not retrieved), a cut-off."""
    n = draw(st.integers(1, 6))
    docs = [f"d{i}" for i in range(n)]
    scores = dict(zip(docs, draw(st.lists(st.sampled_from(SCORES), min_size=n, max_size=n)), strict=True))
    grades = {doc: grade for doc in docs if (grade := draw(st.one_of(st.none(), st.integers(-2, 3)))) is not None}
    grades.update({f"x{i}": g for i, g in enumerate(draw(st.lists(st.integers(-2, 2), max_size=2)))})
    if not grades or max(grades.values()) < -1:
        grades["x9"] = -1  # pytrec_eval scores a query with judgments only, safely when one is >= -1
    return scores, grades, draw(st.sampled_from(K_VALUES))


NEGATIVE = ({"d0": 4.0, "d1": 3.0, "d2": 2.0, "d3": 1.0}, {"d0": -1, "d1": 1, "d2": 2, "d3": -2}, 10)
NEGATIVE_TIED = ({"d0": 1.0, "d1": 1.0}, {"d0": -2, "d1": 1}, 2)  # was -0.5 inside the tied group
BELOW_FLOAT32 = ({"a": 0.30000000000000004, "b": 0.3}, {"a": 1}, 1)  # a tie for trec_eval: "b" first, 0.5 expected
DOUBLE_ONLY = ({"a": 0.3, "b": 0.30000001}, {"a": 1}, 1)  # distinct doubles, one float32: a tie too


@settings(max_examples=200, deadline=None)
@given(queries())
@example(NEGATIVE)
@example(({"a": 0.3, "b": 0.3000001}, {"b": 1, "a": -1}, 1))
def test_without_trec_eval_ties_the_tie_neutral_values_are_pytrec_evals(query) -> None:  # type: ignore[no-untyped-def]
    scores, grades, k = query
    assume(all(len(group) == 1 for group in trec_order_groups(scores)))
    found = pytrec_eval.RelevanceEvaluator({"q": grades}, {f"ndcg_cut.{k}", f"map_cut.{k}"}).evaluate({"q": scores})
    assert expected_ndcg(grades, scores, k) == pytest.approx(found["q"][f"ndcg_cut_{k}"], rel=1e-12, abs=1e-15)
    assert expected_average_precision(grades, scores, k) == pytest.approx(found["q"][f"map_cut_{k}"], rel=1e-12,
                                                                          abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(queries())
@example(NEGATIVE_TIED)
@example(BELOW_FLOAT32)
@example(DOUBLE_ONLY)
def test_with_ties_the_values_are_the_means_over_every_order_of_the_float32_ties(query) -> None:  # type: ignore[no-untyped-def]
    scores, grades, k = query
    orders = [[doc for part in parts for doc in part]
              for parts in product(*(permutations(group) for group in trec_order_groups(scores)))]
    values = pytrec(grades, orders, k)
    assert expected_ndcg(grades, scores, k) == pytest.approx(mean(v[f"ndcg_cut_{k}"] for v in values), abs=1e-12)
    assert expected_average_precision(grades, scores, k) == pytest.approx(mean(v[f"map_cut_{k}"] for v in values),
                                                                          abs=1e-12)
    assert 0.0 <= expected_ndcg(grades, scores, k) <= 1.0


@settings(max_examples=200, deadline=None)
@given(queries())
@example(BELOW_FLOAT32)
def test_the_ranking_is_trec_evals_for_every_score_and_grade(query) -> None:  # type: ignore[no-untyped-def]
    """Every conventional metric ranks as trec_eval: scores given as the positions of :func:`ranking` get every
    pytrec_eval measure (and MRR, rank_matrix's first hit) that the raw scores get."""
    scores, grades, _ = query
    order = ranking(scores)
    positions = {doc: float(len(order) - p) for p, doc in enumerate(order)}
    measures = {"ndcg_cut.10", "map_cut.10", "P.1", "recall.3", "recip_rank", "success.1"}
    evaluator = pytrec_eval.RelevanceEvaluator({"q": grades}, measures)
    assert evaluator.evaluate({"q": positions}) == evaluator.evaluate({"q": scores})
    recip = evaluator.evaluate({"q": scores})["q"]["recip_rank"]  # uncut; at most 6 documents are ranked
    assert evaluate_run({"q": grades}, {"q": scores}, [10], digits=None)["mrr_at_10"] == pytest.approx(recip)
    depth = max(2, len(scores))
    (m,) = first_hit_positions(rank_matrix({"q": scores}, {"q": grades}, depth))  # m = depth - first hit's rank
    assert (depth - m if m >= 0 else 0) == (round(1 / recip) if recip else 0)


def test_the_issues_cases() -> None:
    # negative grades weigh 0, as pytrec_eval gives (0.6199 here; the old code used the negative gain)
    scores, grades, k = NEGATIVE
    found = pytrec_eval.RelevanceEvaluator({"q": grades}, {"ndcg_cut.10"}).evaluate({"q": scores})["q"]["ndcg_cut_10"]
    assert expected_ndcg(grades, scores, k) == pytest.approx(found) == pytest.approx(0.6199062332840657)
    scores, grades, k = NEGATIVE_TIED  # a grade -2 tied with a grade 1 at ranks 1-2: gains 0 and 1, never -1
    assert expected_ndcg(grades, scores, k) == pytest.approx((0.5 + 0.5 / math.log2(3)) / 1.0)
    # 0.30000000000000004 vs 0.3: one tie for trec_eval (id descending puts "b" first), so 0.5 expected
    for scores, grades, k in (BELOW_FLOAT32, DOUBLE_ONLY):
        assert ranking(scores) == ["b", "a"] and expected_ndcg(grades, scores, k) == 0.5
    assert ranking({"a": 1e300, "b": 1e301}) == ["b", "a"]  # both overflow float32 to one infinity: a tie


def test_a_query_judged_below_minus_one_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Read as 0 at load, and given to pytrec_eval as gain 0 by the metric functions: no crash, the values of a
    query without a relevant document (pytrec_eval alone aborted at a later free after such a query)."""
    for _ in range(20):
        evaluate_run({"q": {"a": 3}}, {"q": {"a": 1.0}}, [2])
        assert evaluate_run({"q": {"a": -2}}, {"q": {"a": 0.0, "b": 1.0}}, [2])["ndcg_at_2"] == 0.0
    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\ta\t-2\nq1\tb\t1\nq2\tc\t-1\n", encoding="utf-8")
    assert read_qrels_tsv(path) == {"q1": {"a": 0, "b": 1}, "q2": {"c": 0}}
    assert ranking({"a": 1e300, "b": 1e301}) == ["b", "a"]  # both overflow float32 to one infinity: a tie
