"""ΔNDSR@k (Huang et al., arXiv 2604.06163): checked against a loop oracle written here, every order of the ties
enumerated, and scipy's one-sample t-test."""

from __future__ import annotations

import math
import warnings
from itertools import permutations, product
from statistics import mean

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from airbench_mteb.metrics.ndsr import (
    NDSR_TIE_ORDER,
    discounted_source_ratios,
    ndsr_vectors,
    source_exposure_scores,
)
from airbench_mteb.metrics.retrieval import ranking
from airbench_mteb.metrics.tie_neutral import expected_discounted_source_ratios

SOURCES = ("human", "llm", "other")


def oracle_ratios(order: list[str], doc_sources: dict[str, str], k: int) -> dict[str, float]:
    """NDSR@k of every source for one explicit ranking, position by position."""
    numerators = {source: 0.0 for source in SOURCES}
    denominator = 0.0
    for position, doc in enumerate(order, start=1):
        if position > k:
            break
        weight = 1 / math.log2(position + 1)
        numerators[doc_sources[doc]] += weight
        denominator += weight
    return {source: value / denominator if denominator else 0.0 for source, value in numerators.items()}


def ascending_order(scores: dict[str, float]) -> list[str]:
    """Score descending, equal scores by id ascending (the paper's order), written out by hand."""
    order: list[str] = []
    for score in sorted(set(scores.values()), reverse=True):
        order += sorted(doc for doc, s in scores.items() if s == score)
    return order


def every_order(scores: dict[str, float]) -> list[list[str]]:
    groups = [[doc for doc, s in scores.items() if s == score] for score in sorted(set(scores.values()), reverse=True)]
    return [[doc for part in parts for doc in part] for parts in product(*(permutations(g) for g in groups))]


@st.composite
def rankings(draw: st.DrawFn, max_docs: int = 6) -> tuple[dict[str, float], dict[str, str]]:
    n = draw(st.integers(0, max_docs))
    docs = [f"d{i}" for i in draw(st.permutations(range(n)))]
    scores = {doc: draw(st.sampled_from([0.5, 1.0, 3.0])) for doc in docs}  # three values: ties are common
    return scores, {doc: draw(st.sampled_from(SOURCES)) for doc in docs}


@settings(max_examples=300, deadline=None)
@given(rankings(), st.integers(1, 8))
def test_ndsr_is_the_oracle_in_the_papers_tie_order(case: tuple[dict[str, float], dict[str, str]], k: int) -> None:
    scores, doc_sources = case
    assert discounted_source_ratios(scores, doc_sources, SOURCES, k) == pytest.approx(
        oracle_ratios(ascending_order(scores), doc_sources, k))


@settings(max_examples=300, deadline=None)
@given(rankings(), st.integers(1, 8))
def test_tie_neutral_ndsr_is_the_mean_over_every_order_of_the_ties(
        case: tuple[dict[str, float], dict[str, str]], k: int) -> None:
    scores, doc_sources = case
    by_order = [oracle_ratios(order, doc_sources, k) for order in every_order(scores)]
    expected = {source: mean(ratios[source] for ratios in by_order) for source in SOURCES}
    assert expected_discounted_source_ratios(scores, doc_sources, SOURCES, k) == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(rankings(), min_size=1, max_size=6), st.integers(1, 6))
def test_delta_and_its_p_value_are_the_oracle_and_scipys_t_test(
        cases: list[tuple[dict[str, float], dict[str, str]]], k: int) -> None:
    run = {f"q{i}": {f"q{i}-{doc}": s for doc, s in scores.items()} for i, (scores, _) in enumerate(cases)}
    doc_sources = {f"q{i}-{doc}": source for i, (_, sources) in enumerate(cases) for doc, source in sources.items()}
    sources = ["human", "llm", "other"]
    flat = source_exposure_scores(run, doc_sources, sources, [k])
    vectors = ndsr_vectors(run, doc_sources, sources, [k], sorted(run))
    for compared in sources[1:]:
        differences = [oracle_ratios(ascending_order(run[qid]), doc_sources, k)["human"]
                       - oracle_ratios(ascending_order(run[qid]), doc_sources, k)[compared] for qid in sorted(run)]
        assert flat[f"delta_ndsr_at_{k}_{compared}"] == pytest.approx(mean(differences))
        measured = vectors[f"ndsr_at_{k}_human"] - vectors[f"ndsr_at_{k}_{compared}"]
        assert measured == pytest.approx(differences)
        p_value = flat[f"delta_ndsr_at_{k}_{compared}_p_value"]
        if len(run) < 2 or not measured.any():
            assert p_value == 1.0  # scipy's t-test is undefined here (NaN)
        else:  # scipy on the metric's own differences: near-constant ones make p hang on the last bit
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # scipy's "nearly identical data" notice
                expected = float(stats.ttest_1samp(measured, 0.0).pvalue)
            assert p_value == pytest.approx(expected, nan_ok=True)
    assert flat["ndsr_queries"] == len(run) and flat["ndsr_tie_order"] == NDSR_TIE_ORDER


def test_two_queries_of_opposite_preference() -> None:
    """The paper's sign: human minus LLM; at k = 2 the second position weighs 1 / log2(3)."""
    run = {"q1": {"d1-human": 2.0, "d1-llm": 1.0}, "q2": {"d2-llm": 2.0, "d2-human": 1.0}}
    doc_sources = {doc: doc.split("-")[1] for docs in run.values() for doc in docs}
    flat = source_exposure_scores(run, doc_sources, ["human", "llm"], [1, 2])
    assert flat["delta_ndsr_at_1_llm"] == 0.0 and flat["delta_ndsr_at_1_llm_p_value"] == pytest.approx(
        stats.ttest_1samp([1.0, -1.0], 0.0).pvalue)
    vectors = ndsr_vectors(run, doc_sources, ["human", "llm"], [2], ["q1", "q2"])
    second = 1 / math.log2(3)
    assert vectors["ndsr_at_2_human"] - vectors["ndsr_at_2_llm"] == pytest.approx(
        [(1 - second) / (1 + second), -(1 - second) / (1 + second)])


def test_a_tie_between_copies_goes_to_the_human_copy_unlike_trec_eval() -> None:
    run = {"q": {"d1-human": 1.0, "d1-llm": 1.0}}
    doc_sources = {"d1-human": "human", "d1-llm": "llm"}
    assert ranking(run["q"])[0] == "d1-llm"  # trec_eval: id descending
    flat = source_exposure_scores(run, doc_sources, ["human", "llm"], [1])
    assert flat["delta_ndsr_at_1_llm"] == 1.0  # the paper: id ascending
    assert flat["delta_ndsr_at_1_llm_tie_neutral"] == 0.0 and flat["ndsr_at_1_human_tie_neutral"] == 0.5


def test_an_empty_ranking_counts_as_no_preference_and_bad_input_is_named() -> None:
    run: dict[str, dict[str, float]] = {"q1": {}, "q2": {"a": 1.0}}
    vectors = ndsr_vectors(run, {"a": "llm"}, ["human", "llm"], [5], ["q1", "q2"])
    assert np.array_equal(vectors["ndsr_at_5_llm"], [0.0, 1.0])
    with pytest.raises(ValueError, match="'b' has no source"):
        source_exposure_scores({"q": {"b": 1.0}}, {}, ["human", "llm"], [1])
    with pytest.raises(ValueError, match="two distinct sources"):
        source_exposure_scores(run, {"a": "llm"}, ["llm"], [1])
    with pytest.raises(ValueError, match="not a positive integer"):
        discounted_source_ratios({"a": 1.0}, {"a": "llm"}, ["llm"], 0)
