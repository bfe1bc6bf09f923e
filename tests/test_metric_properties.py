"""Generated cases against oracles written here (issue 36): per-query retrieval metrics, judged@k and the query set
against pytrec_eval, the means MTEB stores against the decimals the plugin allows for, rank agreement against scipy
with exact and near ties, and the paired randomization test against enumeration in rational arithmetic.

The qrels and runs hold what real ones hold: queries judged relevance 0 only (AIR-Bench's hard negatives),
queries missing from the run and empty rankings, exact score ties, documents judged for several queries, and odd
ids (digits, case, spaces, non-ASCII, a document id equal to a query id).
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from itertools import product

import numpy as np
import pytrec_eval
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, spearmanr

from airbench_mteb.metrics.consistency import kendall_tau_b, rank_agreement, spearman_rho
from airbench_mteb.metrics.per_query import per_query_scores, per_source_query_scores, scored_queries, stored_decimals
from airbench_mteb.metrics.significance import paired_randomization_test
from airbench_mteb.metrics.source_bias import per_source_scores

CHEAP = settings(max_examples=60, deadline=None)
KEPT = ("ndcg_at_10", "recall_at_10", "recall_at_100", "map_at_10", "mrr_at_10", "judged_at_10", "judged_at_100")
TREC_KEYS = {"ndcg_at_10": "ndcg_cut_10", "recall_at_10": "recall_10", "recall_at_100": "recall_100",
             "map_at_10": "map_cut_10"}
MEASURES = {"ndcg_cut.10", "recall.10,100", "map_cut.10"}
DOC_IDS = ["1", "01", "10", "2", "D", "d", "doc 3", "ü-doc", "q0", "doc-ω", "x", "y"]  # "q0" is also a query id
QUERY_IDS = ["q0", "Q0", "1", "q 2", "é"]


@st.composite
def judged_runs(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels of up to 5 queries (grades 0-2; a query may be judged 0 only) and a run that may miss queries, hold
    empty rankings and tie scores (scores from a few values)."""
    qrels, run = {}, {}
    for qid in draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=5, unique=True)):
        qrels[qid] = draw(st.dictionaries(st.sampled_from(DOC_IDS), st.integers(0, 2), min_size=1, max_size=5))
        presence = draw(st.sampled_from(["ranked", "ranked", "ranked", "missing", "empty"]))
        if presence != "missing":
            run[qid] = {} if presence == "empty" else draw(st.dictionaries(
                st.sampled_from(DOC_IDS), st.sampled_from([0.5, 1.0, 1.5, 2.0]), min_size=1, max_size=12))
    return qrels, run


def _ranked(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, ties by document id descending (byte order of UTF-8 = code points)."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: (item[1], item[0].encode("utf-8")), reverse=True)]


@CHEAP
@given(judged_runs())
@example(({"q0": {"x": 0, "y": 0}, "1": {"x": 1}}, {"q0": {"x": 2.0, "y": 1.0}, "1": {"y": 1.0, "x": 1.0}}))
@example(({"q0": {"x": 1}, "1": {"x": 1}, "Q0": {"d": 0}}, {"q0": {}, "Q0": {"d": 1.0}}))
def test_property_per_query_metrics_and_their_query_set_are_pytrec_evals(case) -> None:
    qrels, run = case
    trec = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    # trec_eval's P@k over the qrels with every grade raised by one counts the judged documents of the top k
    raised = {q: {d: g + 1 for d, g in docs.items()} for q, docs in qrels.items()}
    judged_trec = pytrec_eval.RelevanceEvaluator(raised, {"P.10,100"}).evaluate(run)
    query_ids = scored_queries(qrels, run)
    assert list(query_ids) == sorted(trec)  # the queries pytrec_eval (so MTEB) averages over
    vectors = per_query_scores(trec, qrels, run, KEPT, query_ids)
    for i, qid in enumerate(query_ids):
        top = _ranked(run[qid])
        relevant = {doc for doc, grade in qrels[qid].items() if grade > 0}
        for name, key in TREC_KEYS.items():
            assert vectors[name][i] == trec[qid][key], (name, qid)
        first = next((rank for rank, doc in enumerate(top[:10], 1) if doc in relevant), None)
        assert vectors["mrr_at_10"][i] == (1 / first if first else 0.0)
        for k in (10, 100):  # ir_measures' Judged@k: judged share of the top k, 0 for an empty ranking
            judged = sum(doc in qrels[qid] for doc in top[:k])
            assert vectors[f"judged_at_{k}"][i] == (judged / len(top[:k]) if top else 0.0)
            shorter = judged_trec[qid][f"P_{k}"] * k / min(k, len(top)) if top else 0.0  # P@k divides by k
            assert abs(vectors[f"judged_at_{k}"][i] - shorter) < 1e-12


@st.composite
def mteb_cases(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """What MTEB scores: qrels of 2-12 queries, every one judged (0 only allowed), each ranked (MTEB searches every
    query it keeps), scores with ties and decimals that make means of many digits."""
    n = draw(st.integers(2, 12))
    qrels, run = {}, {}
    for q in range(n):
        qid = f"q{q}"
        qrels[qid] = draw(st.dictionaries(st.sampled_from(DOC_IDS), st.integers(0, 2), min_size=1, max_size=4))
        run[qid] = draw(st.dictionaries(st.sampled_from(DOC_IDS), st.sampled_from([0.1, 0.3, 0.7, 0.9]),
                                        min_size=1, max_size=12))
    return qrels, run


@CHEAP
@given(mteb_cases())
@example(({"q0": {"x": 1}, "q1": {"x": 1}, "q2": {"y": 0}},
          {"q0": {"x": 0.9}, "q1": {"y": 0.9, "d": 0.7, "x": 0.3}, "q2": {"y": 0.9}}))  # means 1/3 and 4/9
def test_property_kept_means_are_mtebs_stored_scores_at_mtebs_rounding(case) -> None:
    """MTEB's own scoring and its results writer's rounding against the plugin's per-query means: each stored score
    is the mean within half a unit of the last decimal the plugin allows for (and has no more decimals)."""
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores, make_score_dict
    from mteb.results import TaskResult

    qrels, run = case
    result = calculate_retrieval_scores(run, qrels, [1, 10, 100])  # MTEB needs @1 (accuracy)
    scores = make_score_dict(ndcg=result.ndcg, _map=result.map, recall=result.recall, precision=result.precision,
                             mrr=result.mrr, naucs=result.naucs, naucs_mrr=result.naucs_mrr, hit_rate=result.hit_rate,
                             task_scores={})
    stored = {"dev": [scores]}
    TaskResult.model_construct()._round_scores(stored, 6)  # what TaskResult.to_disk does before it writes
    query_ids = scored_queries(qrels, run)
    assert len(query_ids) == len(qrels)
    vectors = per_query_scores(result.all_scores, qrels, run, KEPT[:5], query_ids)
    for name, values in vectors.items():
        decimals, value = stored_decimals(name), stored["dev"][0][name]
        assert round(value, decimals) == value, (name, value, decimals)
        assert abs(float(np.mean(values)) - value) <= 0.5 * 10.0**-decimals + 1e-12, (name, value, values)


@st.composite
def sourced_runs(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], dict[str, str]]:
    """A co*cktail mixed setting: every judged document has a human and an llm copy with the same grade (0 only
    allowed); the run ranks copies of both sources, with ties, and may miss a query."""
    originals = ["a", "b", "c", "d"]
    sources = {f"{doc}-{source}": source for doc in originals for source in ("human", "llm")}
    qrels, run = {}, {}
    for q in range(draw(st.integers(2, 6))):
        grades = draw(st.dictionaries(st.sampled_from(originals), st.integers(0, 2), min_size=1, max_size=3))
        qrels[f"q{q}"] = {f"{doc}-{source}": grade for doc, grade in grades.items() for source in ("human", "llm")}
        if draw(st.booleans()) or q == 0:
            run[f"q{q}"] = draw(st.dictionaries(st.sampled_from(sorted(sources)), st.sampled_from([1.0, 2.0, 3.0]),
                                                min_size=1, max_size=8))
    return qrels, run, sources


@CHEAP
@given(sourced_runs())
@example(({"q0": {"a-human": 0, "a-llm": 0}, "q1": {"a-human": 0, "a-llm": 0}}, {"q0": {"a-human": 1.0}},
          {f"{doc}-{source}": source for doc in "abcd" for source in ("human", "llm")}))  # judged 0 only: scored 0
def test_property_each_sources_vectors_are_the_queries_and_means_of_its_score(case) -> None:
    """Relative Δ's point estimate (per_source_scores) and its vectors (per_source_query_scores) are of one query set:
    pytrec_eval's on that source's copies, which is the mixed subset's own."""
    qrels, run, sources = case
    vectors = per_source_query_scores(qrels, run, sources, ["human", "llm"], [1, 10])
    means = per_source_scores(qrels, run, sources, ["human", "llm"], [1, 10])
    mixed = sorted(pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.1"}).evaluate(run))
    for source, (query_ids, values) in vectors.items():
        target = {q: {d: g for d, g in docs.items() if sources[d] == source} for q, docs in qrels.items()}
        assert list(query_ids) == sorted(pytrec_eval.RelevanceEvaluator(target, {"ndcg_cut.1"}).evaluate(run)) == mixed
        for name, value in means[source].items():
            assert abs(values[name].mean() - value) < 1e-12, (source, name)


GRID = st.integers(0, 16).map(lambda k: k / 16)  # exact means; ties likely among 3-6 models


@settings(max_examples=80, deadline=None)
@given(st.integers(3, 6).flatmap(lambda m: st.tuples(st.lists(GRID, min_size=m, max_size=m),
                                                     st.lists(GRID, min_size=m, max_size=m),
                                                     st.lists(st.integers(-3, 3), min_size=m, max_size=m))))
@example(([0.25, 0.25, 0.5], [0.125, 0.25, 0.375], [0, 1, 0]))  # one ulp apart: tied (rho 0.866), never ordered
def test_property_rank_agreement_is_scipys_on_the_exact_means_whatever_their_last_bits(case) -> None:
    """Means equal in exact arithmetic may come out a few ulps apart: the point estimate and the bootstrap's
    coefficients must both see them tied, as scipy sees the exact values."""
    exact_first, exact_second, ulps = (np.array(column, dtype=float) for column in case)
    first = np.array([value + ulp * np.spacing(value or 1.0) for value, ulp in zip(exact_first, ulps, strict=True)])
    agreement = rank_agreement(first, exact_second)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns of a constant column, whose coefficients are nan
        rho, tau = spearmanr(exact_first, exact_second).statistic, kendalltau(exact_first, exact_second).statistic
    for ours, theirs in ((agreement.spearman_rho, rho), (float(spearman_rho(first, exact_second)), rho),
                         (agreement.kendall_tau, tau), (float(kendall_tau_b(first, exact_second)), tau)):
        assert (np.isnan(ours) and np.isnan(theirs)) or abs(ours - theirs) < 1e-12, (ours, theirs)


def _enumerated_p(a: list[Fraction], b: list[Fraction]) -> Fraction:
    """Share of the 2^k sign vectors of the k queries that differ whose |sum of signed differences| reaches the
    observed one, in rational arithmetic (identical vectors: 1)."""
    differences = [x - y for x, y in zip(a, b, strict=True) if x != y]
    observed = abs(sum(differences))
    hits = sum(abs(sum(s * d for s, d in zip(signs, differences, strict=True))) >= observed
               for signs in product((1, -1), repeat=len(differences)))
    return Fraction(hits, 2 ** len(differences))


RECIPROCAL = st.integers(0, 10).map(lambda r: Fraction(1, r) if r else Fraction(0))  # MRR@10's values


@CHEAP
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(st.lists(RECIPROCAL, min_size=n, max_size=n),
                                                      st.lists(RECIPROCAL, min_size=n, max_size=n))))
@example(([Fraction(1, 2), Fraction(1, 3), Fraction(1, 2), Fraction(1, 4), Fraction(1)],
          [Fraction(1), Fraction(1), Fraction(1), Fraction(1), Fraction(1)]))
def test_property_randomization_p_is_the_enumerated_p_on_mrr_values(case) -> None:
    a, b = case
    result = paired_randomization_test([float(v) for v in a], [float(v) for v in b], n_resamples=9999, seed=3)
    assert result.exact
    assert Fraction(result.p_value) == _enumerated_p(a, b)
