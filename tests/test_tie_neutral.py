"""Tie-neutral metrics: checked against every order of the tied documents, enumerated here, scored by pytrec_eval."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import groupby, permutations, product
from statistics import mean

import numpy as np
import pytest
import pytrec_eval
from hypothesis import example, given, settings
from hypothesis import strategies as st

from airbench_mteb.metrics.source_bias import relative_delta, source_bias
from airbench_mteb.metrics.tie_neutral import (
    expected_average_precision,
    expected_ndcg,
    expected_source_share,
    tie_neutral_ndcg_mean,
    tie_neutral_vectors,
    ties_broken_toward,
    ties_decide,
)


@dataclass(frozen=True)
class Case:
    """One query: retrieved documents with scores and sources, its judgments, a cut-off."""

    scores: dict[str, float]
    sources: dict[str, str]
    grades: dict[str, int]
    k: int


def orders(scores: dict[str, float]) -> list[list[str]]:
    """Every ranking of the documents that keeps the score order: each tied group in each of its orders."""
    by_score = sorted(scores, key=lambda doc: -scores[doc])
    groups = [list(group) for _, group in groupby(by_score, key=lambda doc: scores[doc])]
    return [[doc for part in parts for doc in part] for parts in product(*(permutations(g) for g in groups))]


def trec_values(grades: dict[str, int], rankings: list[list[str]], k: int) -> list[dict[str, float]]:
    """pytrec_eval's nDCG@k and AP@k of each ranking (one query per ranking, distinct scores)."""
    qrels = {str(i): dict(grades) for i in range(len(rankings))}
    run = {str(i): {doc: float(len(order) - p) for p, doc in enumerate(order)} for i, order in enumerate(rankings)}
    found = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"map_cut.{k}"}).evaluate(run)
    return [found[str(i)] for i in range(len(rankings))]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    n = draw(st.integers(1, 7))
    docs = [f"d{i}" for i in range(n)]
    scores = dict(zip(docs, draw(st.lists(st.sampled_from([0.25, 1.0, 2.5, 7.0]), min_size=n, max_size=n)),
                      strict=True))
    sources = {doc: draw(st.sampled_from(["human", "llm"])) for doc in docs}
    grades = {doc: grade for doc in docs if (grade := draw(st.one_of(st.none(), st.integers(0, 3)))) is not None}
    grades.update({f"x{i}": g for i, g in enumerate(draw(st.lists(st.integers(0, 2), max_size=2)))})  # not retrieved
    if not grades:
        grades["d0"] = 1  # pytrec_eval scores a query with judgments only
    return Case(scores, sources, grades, draw(st.integers(1, 8)))


SEVERAL_GROUPS = Case({"d0": 2.5, "d1": 2.5, "d2": 1.0, "d3": 1.0, "d4": 1.0, "d5": 0.25},
                      {"d0": "human", "d1": "llm", "d2": "human", "d3": "llm", "d4": "llm", "d5": "human"},
                      {"d0": 1, "d2": 2, "d4": 1, "d5": 3}, 6)
STRADDLING = Case({"d0": 7.0, "d1": 2.5, "d2": 2.5, "d3": 2.5, "d4": 2.5},
                  {"d0": "llm", "d1": "human", "d2": "llm", "d3": "human", "d4": "llm"},
                  {"d1": 1, "d3": 1, "x0": 1}, 3)
GRADED = Case({"d0": 1.0, "d1": 1.0, "d2": 1.0, "d3": 0.25},
              {"d0": "human", "d1": "llm", "d2": "human", "d3": "llm"},
              {"d0": 3, "d1": 1, "d2": 0, "d3": 2, "x0": 2}, 2)
ALL_TIED = Case({f"d{i}": 1.0 for i in range(6)}, {f"d{i}": ("human", "llm")[i % 2] for i in range(6)},
                {"d1": 1, "d2": 2, "d5": 1}, 4)
NO_TIES = Case({"d0": 0.25, "d1": 1.0, "d2": 2.5, "d3": 7.0},
               {"d0": "human", "d1": "llm", "d2": "human", "d3": "llm"}, {"d0": 1, "d2": 2, "x1": 1}, 3)
PINNED = (SEVERAL_GROUPS, STRADDLING, GRADED, ALL_TIED, NO_TIES)


def _with_examples(test):  # type: ignore[no-untyped-def]
    for case in PINNED:
        test = example(case)(test)
    return test


@settings(max_examples=150, deadline=None)
@given(cases())
@_with_examples
def test_expected_ndcg_and_ap_are_the_means_over_every_tie_order(case: Case) -> None:
    values = trec_values(case.grades, orders(case.scores), case.k)
    assert expected_ndcg(case.grades, case.scores, case.k) == pytest.approx(
        mean(v[f"ndcg_cut_{case.k}"] for v in values), rel=1e-12, abs=1e-12)
    assert expected_average_precision(case.grades, case.scores, case.k) == pytest.approx(
        mean(v[f"map_cut_{case.k}"] for v in values), rel=1e-12, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(cases())
@_with_examples
def test_expected_share_is_the_mean_over_every_tie_order(case: Case) -> None:
    for source in ("human", "llm"):
        brute = mean(sum(case.sources[doc] == source for doc in order[:case.k]) / case.k
                     for order in orders(case.scores))
        assert expected_source_share(case.scores, case.sources, source, case.k) == pytest.approx(brute, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
@example(NO_TIES, None)
def test_without_ties_the_values_are_pytrec_evals_exactly(case: Case, shuffle) -> None:  # type: ignore[no-untyped-def]
    distinct = {doc: float(i) + 0.5 for i, doc in enumerate(sorted(case.scores))}
    if shuffle is not None:
        values = list(distinct.values())
        shuffle.shuffle(values)
        distinct = dict(zip(distinct, values, strict=True))
    (order,) = orders(distinct)
    (conventional,) = trec_values(case.grades, [order], case.k)
    assert expected_ndcg(case.grades, distinct, case.k) == conventional[f"ndcg_cut_{case.k}"]
    assert expected_average_precision(case.grades, distinct, case.k) == conventional[f"map_cut_{case.k}"]


@settings(max_examples=150, deadline=None)
@given(cases())
@_with_examples
def test_ties_decide_when_the_sources_of_the_top_k_vary_over_tie_orders(case: Case) -> None:
    source_sequences = {tuple(case.sources[doc] for doc in order[:case.k]) for order in orders(case.scores)}
    assert ties_decide(case.scores, case.sources, case.k) is (len(source_sequences) > 1)


def renamed_toward(case: Case, favoured: str) -> tuple[dict[str, float], dict[str, int]]:
    """The case with ids that make trec_eval's tie breaking (id descending) favour ``favoured``'s documents:
    the oracle of "every tie to one source" is the same run under other document names."""
    name = {doc: ("z" if case.sources.get(doc) == favoured else "a") + doc for doc in {*case.scores, *case.grades}}
    return ({name[doc]: score for doc, score in case.scores.items()},
            {name[doc]: grade for doc, grade in case.grades.items()})


@settings(max_examples=100, deadline=None)
@given(cases())
@_with_examples
def test_ties_broken_toward_a_source_are_the_conventional_values_under_names_favouring_it(case: Case) -> None:
    for favoured in ("human", "llm"):
        broken = ties_broken_toward({"q": case.scores}, case.sources, favoured)["q"]
        assert len(set(broken.values())) == len(broken)  # no tie is left to trec_eval
        assert sorted(broken, key=broken.__getitem__, reverse=True) in orders(case.scores)
        (ours,) = trec_values(case.grades, [sorted(broken, key=broken.__getitem__, reverse=True)], case.k)
        scores, grades = renamed_toward(case, favoured)
        renamed = pytrec_eval.RelevanceEvaluator({"q": grades}, {f"ndcg_cut.{case.k}", f"map_cut.{case.k}"})
        assert ours == pytest.approx(renamed.evaluate({"q": scores})["q"], abs=1e-12)


def test_the_pinned_cases_have_the_shapes_they_are_named_for() -> None:
    def group_sizes(case: Case) -> list[int]:
        return [len(list(g)) for _, g in groupby(sorted(case.scores.values(), reverse=True))]

    assert sum(size > 1 for size in group_sizes(SEVERAL_GROUPS)) == 2
    first_tied = 1 + group_sizes(STRADDLING)[0]
    assert first_tied <= STRADDLING.k < first_tied + group_sizes(STRADDLING)[1] - 1
    assert len(set(GRADED.grades.values()) - {0}) > 1
    assert group_sizes(ALL_TIED) == [len(ALL_TIED.scores)]
    assert set(group_sizes(NO_TIES)) == {1}
    # a straddling mixed group decides the top k; with distinct scores nothing does
    assert ties_decide(STRADDLING.scores, STRADDLING.sources, STRADDLING.k)
    assert not ties_decide(NO_TIES.scores, NO_TIES.sources, NO_TIES.k)


def test_a_hand_computed_case() -> None:
    # two documents tied at rank 1, one relevant (grade 1): E[DCG@1] = 1/2, IDCG@1 = 1; E[AP@1] = (1/2) / 1
    scores, grades = {"a-human": 1.0, "a-llm": 1.0}, {"a-human": 1}
    assert expected_ndcg(grades, scores, 1) == 0.5
    assert expected_average_precision(grades, scores, 1) == 0.5
    # trec_eval's order puts "a-llm" first (ids descending): the conventional value is 0
    assert trec_values(grades, [["a-llm", "a-human"]], 1)[0]["ndcg_cut_1"] == 0.0
    # 2 relevant among 3 tied, k = 2: E[AP@2] = (1/2)(2/3 + (1/2)(2/3 + 1/3)) = 7/12; by hand over the 6 orders:
    # relevant at 1 and 2 (2 orders) AP 1, at 1 only (2) AP 1/2, at 2 only (2) AP 1/4: (2 + 1 + 1/2) / 6 = 7/12
    assert expected_average_precision({"a": 1, "b": 1}, {"a": 1.0, "b": 1.0, "c": 1.0}, 2) == pytest.approx(7 / 12)


def test_vectors_follow_the_query_ids_and_count_a_missing_query_0() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0, "z": 1.0}, "q2": {"b": 3.0, "y": 1.0}}
    vectors = tie_neutral_vectors(qrels, run, [1, 2], ["q2", "q3", "q1"])
    assert vectors["ndcg_at_1_tie_neutral"].tolist() == [1.0, 0.0, 0.5]
    assert vectors["map_at_2_tie_neutral"].tolist() == [1.0, 0.0, expected_average_precision({"a": 1}, run["q1"], 2)]
    assert tie_neutral_ndcg_mean(qrels, run, ["q1", "q2"], 1) == {"ndcg_at_1_tie_neutral": 0.75}
    assert tie_neutral_ndcg_mean(qrels, run, [], 1) == {}
    with pytest.raises(ValueError, match="cut-off 0"):
        tie_neutral_vectors(qrels, run, [0], ["q1"])
    with pytest.raises(ValueError, match="no tie-neutral form of 'recall'"):
        tie_neutral_vectors(qrels, run, [1], ["q1"], ("recall",))
    with pytest.raises(ValueError, match="'z' has no source"):
        ties_decide(run["q1"], {"a": "human"}, 1)


@st.composite
def mixed_runs(draw: st.DrawFn) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]], dict[str, str]]:
    """A few queries over a mixed corpus: each document has a human and an llm copy, judged alike."""
    run, qrels, sources = {}, {}, {}
    for q in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 3))
        values = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=2 * n, max_size=2 * n))
        run[f"q{q}"], qrels[f"q{q}"] = {}, {}
        for i in range(n):
            grade = draw(st.integers(0, 2))
            for j, source in enumerate(("human", "llm")):
                doc = f"q{q}d{i}-{source}"
                run[f"q{q}"][doc], sources[doc] = values[2 * i + j], source
                qrels[f"q{q}"][doc] = grade
        if not any(qrels[f"q{q}"].values()):
            qrels[f"q{q}"][f"q{q}d0-human"] = qrels[f"q{q}"][f"q{q}d0-llm"] = 1
    return run, qrels, sources


# both copies of two documents tied at the top, k = 1: trec_eval gives rank 1 to "q0d1-llm" (ids descending)
ALL_COPIES_TIED = ({"q0": {"q0d0-human": 1.0, "q0d0-llm": 1.0, "q0d1-human": 1.0, "q0d1-llm": 1.0}},
                   {"q0": {"q0d0-human": 2, "q0d0-llm": 2, "q0d1-human": 1, "q0d1-llm": 1}},
                   {f"q0d{i}-{s}": s for i in (0, 1) for s in ("human", "llm")})


@pytest.mark.filterwarnings("ignore:relative_delta. both metrics are 0:RuntimeWarning")
@settings(max_examples=40, deadline=None)
@given(mixed_runs(), st.sampled_from([1, 2, 3]))
@example(ALL_COPIES_TIED, 1)
@example(ALL_COPIES_TIED, 3)
def test_source_bias_carries_the_delta_of_the_expected_scores_and_its_range(drawn, k: int) -> None:  # type: ignore[no-untyped-def]
    run, qrels, sources = drawn
    bias = source_bias(qrels, run, sources, ["human", "llm"], [k])
    expected = {}
    for source in ("human", "llm"):
        target = {q: {d: g for d, g in docs.items() if sources[d] == source} for q, docs in qrels.items()}
        expected[source] = {measure: mean(mean(v[f"{measure}_cut_{k}"] for v in trec_values(target[q], orders(run[q]), k))
                                          for q in run) for measure in ("ndcg", "map")}
    neutral = bias.sources["llm"].tie_neutral
    assert neutral is not None
    for measure in ("ndcg", "map"):
        assert neutral.relative_delta[measure][k] == pytest.approx(
            relative_delta(expected["human"][measure], expected["llm"][measure]), abs=1e-9)
        # with names that favour a source, trec_eval gives the conventional value of "every tie to it"
        for favoured in ("human", "llm"):
            renamed = {favoured: ("z" if favoured == "human" else "a"), "other": "a" if favoured == "human" else "z"}
            name = {doc: (renamed[favoured] if sources[doc] == "human" else renamed["other"]) + doc for doc in sources}
            renamed_bias = source_bias({q: {name[d]: g for d, g in docs.items()} for q, docs in qrels.items()},
                                       {q: {name[d]: s for d, s in docs.items()} for q, docs in run.items()},
                                       {name[d]: s for d, s in sources.items()}, ["human", "llm"], [k])
            assert bias.sources["llm"].ties_to[favoured][measure][k] == pytest.approx(
                renamed_bias.sources["llm"].relative_delta[measure][k], abs=1e-9)
    decided = sum(len({tuple(sources[d] for d in order[:k]) for order in orders(run[q])}) > 1 for q in run)
    assert bias.ties is not None and bias.ties.decided[k] == decided and bias.ties.queries == len(run)


def test_tie_neutral_figures_survive_the_flat_results_keys() -> None:
    from airbench_mteb.metrics.source_bias import flatten, unflatten

    run = {"q1": {"a-human": 1.0, "a-llm": 1.0, "b-human": 0.5, "b-llm": 0.2}}
    qrels = {"q1": {"a-human": 1, "a-llm": 1, "b-human": 0, "b-llm": 0}}
    sources = {doc: doc.split("-")[1] for doc in run["q1"]}
    bias = source_bias(qrels, run, sources, ["human", "llm"], [1, 3])
    flat = flatten(bias)
    # conventional: the tie goes to "a-llm" (ids descending); tie-neutral: half each
    assert flat["relative_delta_ndcg_at_1_llm"] == -200.0
    assert flat["relative_delta_ndcg_at_1_llm_tie_neutral"] == 0.0
    assert flat["relative_delta_ndcg_at_1_llm_ties_to_human"] == 200.0
    assert flat["relative_delta_ndcg_at_1_llm_ties_to_llm"] == -200.0
    assert flat["share_at_1_human_tie_neutral"] == 0.5
    assert flat["tie_decided_queries_at_1"] == 1 and flat["tie_decided_share_at_1"] == 1.0
    assert flat["tie_checked_queries"] == 1
    back = unflatten(flat, "human")
    assert back == bias
    assert list(back.sources) == ["human", "llm"]
    assert not math.isnan(np.float64(flat["map_at_3_llm_tie_neutral"]))


def test_the_tie_neutral_delta_gets_its_interval_from_the_same_resampling() -> None:
    from airbench_mteb.metrics.bias_uncertainty import delta_uncertainty, with_uncertainty
    from airbench_mteb.metrics.per_query import per_source_query_scores
    from airbench_mteb.metrics.resampling import Resampling

    # six queries; in q0..q2 the two copies of the relevant document tie at the top
    run = {f"q{i}": {f"q{i}a-human": 2.0, f"q{i}a-llm": 2.0 if i < 3 else 1.0 + i % 2 * 2, f"q{i}b-human": 1.5}
           for i in range(6)}
    qrels = {f"q{i}": {f"q{i}a-human": 1, f"q{i}a-llm": 1} for i in range(6)}
    sources = {doc: doc.rsplit("-", 1)[1] for docs in run.values() for doc in docs}
    resampling = Resampling(n_resamples=199, seed=3)
    vectors = per_source_query_scores(qrels, run, sources, ["human", "llm"], [1])
    bias = with_uncertainty(source_bias(qrels, run, sources, ["human", "llm"], [1]), vectors, resampling)
    (_, human), (_, llm) = vectors["human"], vectors["llm"]
    neutral = bias.sources["llm"].tie_neutral
    assert neutral is not None
    assert neutral.uncertainty["ndcg"][1] == delta_uncertainty(human["ndcg_at_1_tie_neutral"],
                                                               llm["ndcg_at_1_tie_neutral"], resampling)
    assert bias.sources["llm"].uncertainty["ndcg"][1] == delta_uncertainty(human["ndcg_at_1"], llm["ndcg_at_1"],
                                                                           resampling)
    # the tied queries score 1/2 for both sources tie-neutrally, 0 / 1 conventionally (the LLM copy's id is larger)
    assert human["ndcg_at_1_tie_neutral"][:3].tolist() == llm["ndcg_at_1_tie_neutral"][:3].tolist() == [0.5] * 3
    assert human["ndcg_at_1"][:3].tolist() == [0.0] * 3
    assert neutral.relative_delta["ndcg"][1] == pytest.approx(
        relative_delta(human["ndcg_at_1_tie_neutral"].mean(), llm["ndcg_at_1_tie_neutral"].mean()))
