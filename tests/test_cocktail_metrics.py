"""Source-bias metrics: the formula, its edge cases, and per-source scoring of one ranking."""

from __future__ import annotations

import json
import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airbench_mteb.metrics.source_bias import (
    flatten,
    per_source_scores,
    qrels_for_source,
    relative_delta,
    source_bias,
    source_bias_scores,
    source_share_at_k,
    unflatten,
)

metric = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_relative_delta_matches_the_papers_definition() -> None:
    # (NDCG_Human - NDCG_LLM) / ((NDCG_Human + NDCG_LLM) / 2) * 100
    assert relative_delta(0.3, 0.5) == pytest.approx(-0.2 / 0.4 * 100)
    assert relative_delta(0.5, 0.3) == pytest.approx(50.0)
    assert relative_delta(0.4, 0.0) == pytest.approx(200.0)


@given(metric, metric)
def test_relative_delta_flips_sign_when_sources_swap_and_stays_in_range(a: float, b: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        forward, backward = relative_delta(a, b), relative_delta(b, a)
    assert forward == pytest.approx(-backward, abs=1e-9)
    assert -200 - 1e-9 <= forward <= 200 + 1e-9
    assert not math.isnan(forward)


def test_zero_denominator_gives_zero_and_a_warning() -> None:
    with pytest.warns(RuntimeWarning, match="both metrics are 0"):
        assert relative_delta(0.0, 0.0) == 0.0


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf])
def test_invalid_metric_values_are_rejected(bad: float) -> None:
    with pytest.raises(ValueError, match="m_llm must be a finite metric value"):
        relative_delta(0.5, bad)


# Two queries over a corpus of two documents in two copies each (ids as Cocktail builds them).
SOURCES = {"a-human": "human", "a-llm": "llm", "b-human": "human", "b-llm": "llm"}
QRELS = {"q1": {"a-human": 1, "a-llm": 1}, "q2": {"b-human": 2, "b-llm": 2, "a-human": 0, "a-llm": 0}}
RUN = {
    "q1": {"a-llm": 0.9, "a-human": 0.8, "b-human": 0.5, "b-llm": 0.1},
    # tied scores: trec_eval's order puts the larger id first, so "b-llm" before "b-human"
    "q2": {"b-llm": 0.7, "b-human": 0.7, "a-human": 0.6, "a-llm": 0.2},
}


def test_qrels_for_source_keeps_only_that_sources_copies() -> None:
    assert qrels_for_source(QRELS, SOURCES, "human") == {"q1": {"a-human": 1}, "q2": {"b-human": 2, "a-human": 0}}
    with pytest.raises(ValueError, match="'x' judged for query 'q1' has no source"):
        qrels_for_source({"q1": {"x": 1}}, SOURCES, "human")


def test_per_source_scores_by_hand() -> None:
    scores = per_source_scores(QRELS, RUN, SOURCES, ["human", "llm"], [1, 2])
    # human target: q1 ranks a-human 2nd (DCG@2 = 1/log2(3)), q2 ranks b-human 2nd (2/log2(3)); ideal: rank 1
    assert scores["human"]["ndcg_at_1"] == 0.0
    assert scores["human"]["ndcg_at_2"] == pytest.approx(1 / math.log2(3))
    assert scores["human"]["map_at_2"] == pytest.approx(0.5)
    # LLM target: its copy is first for both queries
    assert scores["llm"]["ndcg_at_1"] == 1.0 and scores["llm"]["map_at_1"] == 1.0


def test_source_share_at_k_counts_the_top_k_with_trec_eval_ties() -> None:
    human = source_share_at_k(RUN, SOURCES, "human", [1, 2, 4])
    assert human == {1: 0.0, 2: pytest.approx(0.5), 4: pytest.approx(0.5)}
    # the denominator is k even when fewer documents were retrieved
    assert source_share_at_k({"q": {"a-human": 1.0}}, SOURCES, "human", [2]) == {2: 0.5}
    with pytest.raises(ValueError, match="positive integers"):
        source_share_at_k(RUN, SOURCES, "human", [0])


def test_source_bias_scores_are_named_and_json_safe() -> None:
    # q3's only judged document is never retrieved: its NDCG is 0 for both sources
    with pytest.warns(RuntimeWarning, match="both metrics are 0"):
        scores = source_bias_scores({"q3": {"b-human": 1, "b-llm": 1}}, {"q3": {"a-human": 1.0, "a-llm": 0.5}},
                                    SOURCES, ["human", "llm"], [1])
    assert scores["ndcg_at_1_human"] == scores["ndcg_at_1_llm"] == 0.0
    assert scores["relative_delta_ndcg_at_1_llm"] == 0.0  # 0/0: defined, with a warning
    assert scores["share_at_1_human"] == 1.0 and scores["share_at_1_llm"] == 0.0
    json.dumps(scores, allow_nan=False)

    full = source_bias_scores(QRELS, RUN, SOURCES, ["human", "llm"], [1, 3])
    assert full["relative_delta_ndcg_at_1_llm"] == pytest.approx(relative_delta(0.0, 1.0))
    assert set(full) == {f"{m}_at_{k}_{s}" for m in ("ndcg", "map", "share") for k in (1, 3) for s in ("human", "llm")} \
        | {f"relative_delta_{m}_at_{k}_llm" for m in ("ndcg", "map") for k in (1, 3)}
    with pytest.raises(ValueError, match="two distinct sources"):
        source_bias_scores(QRELS, RUN, SOURCES, ["human"], [1])


def test_the_typed_figures_name_the_reference_and_flatten_to_mteb_keys_and_back() -> None:
    three = {**SOURCES, "a-copy": "copy", "b-copy": "copy"}
    qrels = {q: {**docs, **{d.replace("-human", "-copy"): g for d, g in docs.items() if d.endswith("-human")}}
             for q, docs in QRELS.items()}
    run = {q: {**docs, **{d.replace("-human", "-copy"): s for d, s in docs.items() if d.endswith("-human")}}
           for q, docs in RUN.items()}
    bias = source_bias(qrels, run, three, ["llm", "human", "copy"], [1, 2])
    assert bias.reference == "llm" and bias.compared == ["human", "copy"]
    assert bias.sources["llm"].relative_delta == {}
    # the LLM copy is first for both queries, the human one second (tied with the copy: "human" > "copy")
    assert bias.sources["human"].scores["ndcg"][1] == 0.0 and bias.sources["llm"].scores["ndcg"][1] == 1.0
    assert bias.sources["human"].relative_delta["ndcg"][1] == pytest.approx(200.0)  # the reference ranks higher
    assert bias.sources["human"].share == {1: 0.0, 2: 0.5} and bias.sources["copy"].share == {1: 0.0, 2: 0.0}
    flat = flatten(bias)
    assert flat == source_bias_scores(qrels, run, three, ["llm", "human", "copy"], [1, 2])
    assert flat["relative_delta_map_at_2_copy"] == bias.sources["copy"].relative_delta["map"][2]
    assert "relative_delta_ndcg_at_1_llm" not in flat
    assert unflatten(flat, "llm") == bias
    assert unflatten(json.loads(json.dumps(flat)), "llm") == bias
    with pytest.raises(ValueError, match="'nobody' is not a source"):
        unflatten(flat, "nobody")
    with pytest.raises(ValueError, match="no relative_delta_ndcg_at_1_llm score"):
        unflatten(flat, "human")  # another reference than the one the scores were computed against
    del flat["map_at_2_copy"]
    with pytest.raises(ValueError, match="no map_at_2_copy score"):
        unflatten(flat, "llm")
