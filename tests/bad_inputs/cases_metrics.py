"""Inputs on which the metrics must be trec_eval's or exact (issue 43): negative grades, scores that differ below
float32 precision, small consistency panels.

Each ``check`` holds the number a reader computes by hand: nDCG with gains max(grade, 0), trec_eval's tie order
(scores as C floats, ids descending), and the share of a panel's n! orderings as extreme as the observed one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tests.bad_inputs.framework import Case, Workspace

NEGATIVE_GRADES = {"q": {"d0": -1, "d1": 1, "d2": 2, "d3": -2}}
RANKED = {"q": {"d0": 4.0, "d1": 3.0, "d2": 2.0, "d3": 1.0}}
# gains 0, 1, 2, 0 at ranks 1-4 over the ideal 2, 1
NEGATIVE_NDCG = (1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))


def _tie_neutral_ndcg(qrels: dict, run: dict, k: int) -> Callable[[Workspace], Any]:
    def call(ws: Workspace) -> Any:
        from airbench_mteb.metrics.tie_neutral import tie_neutral_vectors

        return float(tie_neutral_vectors(qrels, run, [k], list(run), ("ndcg",))[f"ndcg_at_{k}_tie_neutral"][0])
    return call


def _conventional_ndcg(qrels: dict, run: dict, k: int) -> Callable[[Workspace], Any]:
    def call(ws: Workspace) -> Any:
        from airbench_mteb.metrics.retrieval import evaluate_run

        return evaluate_run(qrels, run, [k], digits=None)[f"ndcg_at_{k}"]
    return call


def _p_values(first: list[float], second: list[float]) -> Callable[[Workspace], Any]:
    def call(ws: Workspace) -> Any:
        from airbench_mteb.metrics.consistency import rank_agreement

        agreement = rank_agreement(first, second)
        return agreement.spearman_p, agreement.kendall_p, agreement.p_method
    return call


def _close(expected: Any) -> Callable[[Workspace, Any], None]:
    def check(ws: Workspace, value: Any) -> None:
        assert all(math.isclose(a, b, abs_tol=1e-12) if isinstance(a, float) else a == b
                   for a, b in zip(value if isinstance(value, tuple) else (value,),
                                   expected if isinstance(expected, tuple) else (expected,), strict=True)), \
            f"{value!r} != {expected!r}"
    return check


CASES = [
    # TREC's -1/-2 weigh 0 as in trec_eval (the tie-neutral nDCG used the negative gain: 0.2896 where 0.6199)
    Case("metrics-negative-grades-tie-neutral-ndcg", call=_tie_neutral_ndcg(NEGATIVE_GRADES, RANKED, 10),
         check=_close(NEGATIVE_NDCG)),
    Case("metrics-negative-grades-conventional-ndcg", call=_conventional_ndcg(NEGATIVE_GRADES, RANKED, 10),
         check=_close(NEGATIVE_NDCG)),
    # a grade -2 tied with a grade 1 at rank 1: expected gain (0 + 1) / 2, never (-2 + 1) / 2
    Case("metrics-negative-grade-inside-a-tie", call=_tie_neutral_ndcg({"q": {"a": -2, "b": 1}},
                                                                       {"q": {"a": 1.0, "b": 1.0}}, 1),
         check=_close(0.5)),
    # a query judged -2 only: pytrec_eval's C code wrote outside its arrays (an abort at a later free)
    Case("metrics-query-judged-minus-two-only", call=_conventional_ndcg({"q": {"a": -2}, "r": {"b": 3}},
                                                                        {"q": {"a": 1.0}, "r": {"b": 1.0}}, 1),
         check=_close(0.5)),
    # 0.30000000000000004 and 0.3 are one float32: a tie for trec_eval ("b" first by id), so 0.5 expected, not 0.0
    Case("metrics-scores-equal-in-float32-tie-neutral",
         call=_tie_neutral_ndcg({"q": {"a": 1}}, {"q": {"a": 0.30000000000000004, "b": 0.3}}, 1), check=_close(0.5)),
    Case("metrics-scores-equal-in-float32-conventional",
         call=_conventional_ndcg({"q": {"a": 1}}, {"q": {"a": 0.30000000000000004, "b": 0.3}}, 1), check=_close(0.0)),
    # perfect agreement of a small panel: 2 of the n! orderings as extreme (scipy's t approximation said p = 0)
    Case("metrics-consistency-three-models-exact-p", call=_p_values([0.1, 0.2, 0.3], [0.4, 0.5, 0.6]),
         check=_close((1 / 3, 1 / 3, "exact"))),
    Case("metrics-consistency-four-models-exact-p", call=_p_values([0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]),
         check=_close((1 / 12, 1 / 12, "exact"))),
]
