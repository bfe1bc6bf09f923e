"""Source-bias metrics: the formula, its edge cases, and per-source scoring of one ranking."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from airbench_mteb.metrics.bias_uncertainty import (
    compare_source_bias,
    delta_uncertainty,
    source_pair,
    with_uncertainty,
)
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.source_bias import (
    SourceBias,
    SourceScores,
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
    conventional = {f"{m}_at_{k}_{s}" for m in ("ndcg", "map", "share") for k in (1, 3) for s in ("human", "llm")} \
        | {f"relative_delta_{m}_at_{k}_llm" for m in ("ndcg", "map") for k in (1, 3)}
    assert {key for key in full if "tie" not in key} == conventional
    # beside them, each key's tie-neutral form, the Δs over tie orders and the queries ties decide
    assert {key for key in full if "tie" in key} == {f"{key}_tie_neutral" for key in conventional} \
        | {f"relative_delta_{m}_at_{k}_llm_ties_to_{s}" for m in ("ndcg", "map") for k in (1, 3) for s in ("human", "llm")} \
        | {f"tie_decided_{what}_at_{k}" for what in ("queries", "share") for k in (1, 3)} | {"tie_checked_queries"}
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


# --- Relative Δ with its uncertainty -------------------------------------------------------------------------

def _relative_delta(human: np.ndarray, llm: np.ndarray, axis: int = -1) -> np.ndarray:
    """Relative Δ of two per-query vectors' means, written out again for scipy (independent of the plugin)."""
    mean_human, mean_llm = human.mean(axis=axis), llm.mean(axis=axis)
    return (mean_human - mean_llm) / ((mean_human + mean_llm) / 2) * 100


def _biased_pair(n: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-query (human, llm) NDCG-like values of one ranking: the LLM copy scores ``shift`` higher on average."""
    rng = np.random.default_rng(seed)
    human = rng.random(n)
    return human, np.clip(human + rng.normal(shift, 0.25, n), 0, 1)


def _source_vectors(human: np.ndarray, llm: np.ndarray, metric: str = "ndcg_at_1") -> dict[str, Any]:
    ids = [f"q{i:03d}" for i in range(len(human))]
    return {"human": (ids, {metric: human}), "llm": (ids, {metric: llm})}


# Monte-Carlo tolerance for two independent 9,999-resample estimates of the same interval bound: the
# standard error of a 2.5 % quantile is sqrt(.025 * .975 / R) / phi(z_.025) ~ 0.027 bootstrap standard
# deviations (sd ~ width / 3.92), sqrt(2) of that for a difference, 4 standard errors: ~ 0.04 widths.
# BCa's adjusted levels add a little more: 0.06 widths.
BOUND_TOLERANCE = 0.06
# p-values: 4 * sqrt(2) standard errors of a 9,999-draw estimate, sqrt(p (1 - p) / R) <= 0.005.
P_TOLERANCE = 0.03


def test_relative_delta_uncertainty_agrees_with_scipy_on_the_same_per_query_vectors() -> None:
    human, llm = _biased_pair(80, 0.06, seed=3)
    uncertainty = delta_uncertainty(human, llm, Resampling())
    reference = stats.bootstrap((human, llm), _relative_delta, paired=True, method="BCa", n_resamples=9999,
                                random_state=11).confidence_interval
    width = reference.high - reference.low
    assert uncertainty.method == "BCa"
    assert uncertainty.ci_low == pytest.approx(reference.low, abs=BOUND_TOLERANCE * width)
    assert uncertainty.ci_high == pytest.approx(reference.high, abs=BOUND_TOLERANCE * width)
    expected_p = stats.permutation_test((human, llm), lambda x, y, axis: np.mean(x - y, axis=axis),
                                        permutation_type="samples", n_resamples=9999, random_state=5).pvalue
    assert 0.01 < expected_p < 0.9  # a p-value in the range where the comparison means something
    assert uncertainty.p_value == pytest.approx(expected_p, abs=P_TOLERANCE)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 40), st.floats(-0.3, 0.3), st.integers(0, 10_000))
def test_the_interval_contains_relative_delta_and_identical_sources_give_p_1(n: int, shift: float,
                                                                             seed: int) -> None:
    human, llm = _biased_pair(n, shift, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # both means 0 on a degenerate draw: Δ is 0 by definition
        point = relative_delta(float(human.mean()), float(llm.mean()))
    uncertainty = delta_uncertainty(human, llm, Resampling(n_resamples=499))
    assert uncertainty.ci_low - 1e-9 <= point <= uncertainty.ci_high + 1e-9
    same = delta_uncertainty(human, human.copy(), Resampling(n_resamples=499))
    assert (same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 1.0)


def test_the_typed_bias_carries_its_uncertainty_into_mteb_keys_and_back() -> None:
    human, llm = _biased_pair(30, 0.1, seed=1)
    ids = [f"q{i:03d}" for i in range(30)]
    vectors = {"human": (ids, {"ndcg_at_1": human, "map_at_1": human / 2}),
               "llm": (ids, {"ndcg_at_1": llm, "map_at_1": llm / 2})}
    bias = SourceBias("human", {
        "human": SourceScores({"ndcg": {1: float(human.mean())}, "map": {1: float(human.mean() / 2)}}, {}, {1: 0.5}),
        "llm": SourceScores({"ndcg": {1: float(llm.mean())}, "map": {1: float(llm.mean() / 2)}},
                            {m: {1: relative_delta(float(human.mean()), float(llm.mean()))} for m in ("ndcg", "map")},
                            {1: 0.5})})
    carried = with_uncertainty(bias, vectors, Resampling(n_resamples=999, seed=4))
    flat = flatten(carried)
    delta = flat["relative_delta_ndcg_at_1_llm"]
    assert flat["relative_delta_ndcg_at_1_llm_ci_low"] <= delta <= flat["relative_delta_ndcg_at_1_llm_ci_high"]
    assert 0 < flat["relative_delta_ndcg_at_1_llm_p_value"] <= 1
    # Δ of MAP is the same ratio here (MAP = NDCG / 2), so its interval and test are too
    assert flat["relative_delta_map_at_1_llm_ci_low"] == pytest.approx(flat["relative_delta_ndcg_at_1_llm_ci_low"])
    assert {key: flat[key] for key in ("ci_level", "ci_method", "ci_n_resamples", "ci_seed", "p_value_test")} == {
        "ci_level": 0.95, "ci_method": "BCa", "ci_n_resamples": 999, "ci_seed": 4,
        "p_value_test": "paired-randomization"}
    assert unflatten(json.loads(json.dumps(flat, allow_nan=False)), "human") == carried
    # results written before the uncertainty existed still read, without it
    old = {key: value for key, value in flat.items() if key in flatten(bias)}
    assert unflatten(old, "human") == bias and unflatten(old, "human").resampling is None
    del flat["relative_delta_map_at_1_llm_p_value"]
    with pytest.raises(ValueError, match="no relative_delta_map_at_1_llm_p_value score"):
        unflatten(flat, "human")
    # fewer than 2 queries: no interval exists, the bias is left as it was
    single = {source: (ids[:1], {m: values[:1] for m, values in metrics.items()})
              for source, (_, metrics) in vectors.items()}
    assert with_uncertainty(bias, single, Resampling()) == bias


def test_sources_scored_on_different_queries_are_refused() -> None:
    human, llm = _biased_pair(5, 0.0, seed=0)
    vectors = {"human": (["a", "b", "c", "d", "e"], {"ndcg_at_1": human}),
               "llm": (["a", "b", "c", "d", "x"], {"ndcg_at_1": llm})}
    with pytest.raises(ValueError, match=r"different queries \(e.g. 'e'\)"):
        source_pair(vectors, "human", "llm", "ndcg_at_1")
    with pytest.raises(ValueError, match="no per-query map_at_1 of source 'human'"):
        source_pair(vectors, "human", "llm", "map_at_1")


# --- two models' biases compared ------------------------------------------------------------------------------

def test_compare_source_bias_agrees_with_scipy_and_is_antisymmetric() -> None:
    human_a, llm_a = _biased_pair(70, 0.08, seed=5)
    rng = np.random.default_rng(6)
    human_b, llm_b = np.clip(human_a + rng.normal(0, 0.15, 70), 0, 1), np.clip(llm_a + rng.normal(-0.015, 0.15, 70), 0, 1)
    a, b = _source_vectors(human_a, llm_a), _source_vectors(human_b, llm_b)
    result = compare_source_bias(a, b, reference="human", compared="llm", measure="ndcg", k=1)
    assert result.n_queries == 70 and result.delta_a == pytest.approx(_relative_delta(human_a, llm_a))
    assert result.difference == pytest.approx(result.delta_a - result.delta_b)
    assert result.ci_low <= result.difference <= result.ci_high

    def difference(h_a: np.ndarray, l_a: np.ndarray, h_b: np.ndarray, l_b: np.ndarray, axis: int = -1) -> np.ndarray:
        return _relative_delta(h_a, l_a, axis) - _relative_delta(h_b, l_b, axis)

    reference = stats.bootstrap((human_a, llm_a, human_b, llm_b), difference, paired=True, method="BCa",
                                n_resamples=9999, random_state=8).confidence_interval
    width = reference.high - reference.low
    assert result.ci_low == pytest.approx(reference.low, abs=BOUND_TOLERANCE * width)
    assert result.ci_high == pytest.approx(reference.high, abs=BOUND_TOLERANCE * width)
    # scipy swaps each query's (human, llm) column between the two models' 2 x n samples
    expected_p = stats.permutation_test(
        (np.stack([human_a, llm_a]), np.stack([human_b, llm_b])),
        lambda x, y, axis: _relative_delta(x[..., 0, :], x[..., 1, :]) - _relative_delta(y[..., 0, :], y[..., 1, :]),
        permutation_type="samples", n_resamples=9999, random_state=9, axis=-1).pvalue
    assert 0.01 < expected_p < 0.9
    assert result.p_value == pytest.approx(expected_p, abs=P_TOLERANCE)

    swapped = compare_source_bias(b, a, reference="human", compared="llm", measure="ndcg", k=1)
    assert swapped.difference == pytest.approx(-result.difference) and swapped.p_value == result.p_value
    same = compare_source_bias(a, a, reference="human", compared="llm")
    assert (same.difference, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_compare_source_bias_refuses_other_queries_and_single_queries() -> None:
    human, llm = _biased_pair(4, 0.0, seed=2)
    a = _source_vectors(human, llm)
    other = {source: ([*ids[:-1], "q999"], metrics) for source, (ids, metrics) in a.items()}
    with pytest.raises(ValueError, match=r"different queries \(e.g. 'q003'\)"):
        compare_source_bias(a, other, reference="human", compared="llm")
    one = _source_vectors(human[:1], llm[:1])
    with pytest.raises(ValueError, match="at least 2 queries"):
        compare_source_bias(one, one, reference="human", compared="llm")


# --- a source-bias task writes them into MTEB's results ---------------------------------------------------------

@pytest.fixture()
def tiny_sources(tmp_path: Path) -> Path:
    """Twelve queries, each with one relevant document in a human and an LLM-written copy. A human copy
    also names the next topic, so BM25 ranks some queries' document second; the LLM copy repeats a
    word of its topic, so BM25 tends to prefer it."""
    folder = tmp_path / "tiny-sources"
    topics = ["apple orchard harvest", "volcano lava eruption", "chess opening gambit", "coral reef bleaching",
              "jazz saxophone solo", "glacier ice melt", "bread sourdough starter", "comet tail orbit",
              "bridge suspension cable", "honey bee colony", "desert cactus bloom", "violin string tuning"]
    corpus = {"human": [], "llm": []}
    for i, topic in enumerate(topics):
        following = topics[(i + 1) % len(topics)]
        corpus["human"].append({"_id": f"d{i}", "title": "", "text": f"notes about {topic} and {following}"})
        corpus["llm"].append({"_id": f"d{i}", "title": "", "text": f"{topic}: a text on {topic.split()[i % 3]}"})
    for source, rows in corpus.items():
        (folder / "corpus").mkdir(parents=True, exist_ok=True)
        (folder / "corpus" / f"{source}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": topic}) + "\n"
                                                  for i, topic in enumerate(topics)))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"q{i}\td{i}\t1\n" for i in range(len(topics))))
    return folder


def test_the_mixed_setting_writes_every_relative_delta_with_its_interval_and_p_value(tiny_sources: Path,
                                                                                      tmp_path: Path) -> None:
    import mteb
    from mteb.results import TaskResult

    from airbench_mteb.registry import register_tasks
    from airbench_mteb.settings import settings_applied
    from airbench_mteb.tasks.cocktail import make_source_bias_task

    task = make_source_bias_task(tiny_sources, ["human", "llm"], name="TinySourceBias", settings=["mixed"])
    register_tasks([type(task)])
    model = mteb.get_model("airbench-mteb/bm25")
    with settings_applied(ci="bca", ci_resamples=999):
        mteb.evaluate(model, task, cache=mteb.ResultCache(tmp_path / "results"), show_progress_bar=False)
    (path,) = (tmp_path / "results").rglob("TinySourceBias.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # mteb's own readers take the nested keys without a warning
        (row,) = TaskResult.from_disk(path).scores["test"]
        mteb.ResultCache(tmp_path / "results").load_results(tasks=["TinySourceBias"],
                                                            include_remote=False).to_dataframe()
    flat = row["source_bias"]
    assert flat["ci_n_resamples"] == 999 and flat["p_value_test"] == "paired-randomization"
    bias = unflatten(flat, "human")
    for measure, by_k in bias.sources["llm"].relative_delta.items():
        for k, delta in by_k.items():
            uncertainty = bias.sources["llm"].uncertainty[measure][k]
            assert uncertainty.ci_low - 1e-9 <= delta <= uncertainty.ci_high + 1e-9, (measure, k)
            assert 0 < uncertainty.p_value <= 1
    with settings_applied(ci=None):  # CIs off: the same Δs, no uncertainty
        off = mteb.evaluate(model, task, cache=None, show_progress_bar=False).task_results[0].scores["test"][0]
    point_values = {key: value for key, value in flat.items()  # ΔNDSR's t-test is there with CIs off too
                    if key.startswith(("ndsr_", "delta_ndsr_"))
                    or (not key.endswith(("_ci_low", "_ci_high", "_p_value", "_ci_method"))
                        and not key.startswith(("ci_", "p_value_")))}
    assert off["source_bias"] == pytest.approx(point_values, abs=1e-6)  # the file holds 6 decimals
