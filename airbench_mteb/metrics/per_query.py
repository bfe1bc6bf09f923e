"""Per-query values of the reported retrieval metrics: the vectors behind every mean MTEB reports.

MTEB's retrieval evaluation computes pytrec_eval's per-query measures, averages them and throws them
away. These functions turn the per-query measures (plus MRR, which MTEB computes itself) into one
vector per metric over a fixed, sorted list of query ids, so confidence intervals and paired tests
between models can use them. The queries are those MTEB's score averages over (:func:`scored_queries`),
so a task's score, its interval, its per-query file, judged@k and every test over them are of one set.

Besides MTEB's metrics, ``judged_at_k`` measures label coverage (ir_measures' Judged@k): the share of a
ranking's top ``k`` that has a qrels entry of any relevance, 0 included. Generated qrels
hold few labels per query, so a low share says the scores rest on unlabelled documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytrec_eval

from airbench_mteb.ir_types import Qrels, Run
from airbench_mteb.metrics.bootstrap import bootstrap_cis
from airbench_mteb.metrics.keys import MetricKey
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.retrieval import TREC_MEASURES, is_relevant, pytrec_qrels, ranking
from airbench_mteb.metrics.source_bias import BIAS_MEASURES, qrels_for_source
from airbench_mteb.metrics.tie_neutral import tie_neutral_vectors
from airbench_mteb.mteb_compat import RESULTS_FILE_DECIMALS, TREC_MEAN_DECIMALS
from airbench_mteb.mteb_compat import stored_decimals as mteb_stored_decimals

# What an interval and a significance test are given for, besides the task's main score (MTEB's names).
# Label coverage: MTEB does not compute it, so a plugin task reports its mean itself.
LABEL_COVERAGE = ("judged_at_10", "judged_at_100")
KEPT_METRICS = ("ndcg_at_10", "recall_at_10", "recall_at_100", "map_at_10", "mrr_at_10", *LABEL_COVERAGE)

_PER_QUERY_MEASURES = (*TREC_MEASURES, "mrr", "judged")  # the measures with a value per query


def kept_metrics(main_score: str) -> tuple[str, ...]:
    """The task's main score first, then :data:`KEPT_METRICS` (each once)."""
    return tuple(dict.fromkeys((main_score, *KEPT_METRICS)))


def per_query_metric(name: str) -> tuple[str, int] | None:
    """``(measure, k)`` of an MTEB metric name that has per-query values (``accuracy`` is recall@1); else None."""
    key = MetricKey.parse("recall_at_1" if name == "accuracy" else name)
    if key is None or key != MetricKey(key.measure, key.k) or key.measure not in _PER_QUERY_MEASURES:
        return None
    return key.measure, key.k


def scored_queries(qrels: Qrels, run: Run) -> tuple[str, ...]:
    """The queries MTEB's retrieval scores average over, sorted: those with a judgment of any relevance that
    the run holds (an empty ranking included).

    MTEB 2.26 drops only queries whose qrels are empty (``_filter_queries_without_positives`` in
    ``mteb/abstasks/retrieval.py`` tests ``len(...) == 0``: a query judged relevance 0 only stays), then
    averages pytrec_eval's per-query measures over what ``RelevanceEvaluator.evaluate`` returns (qrels and
    run in common) and MRR over the run's queries, which are those searched. So a query whose only
    judgments are relevance 0 (AIR-Bench's generated hard negatives) scores 0 and counts.
    """
    return tuple(sorted(qid for qid, docs in qrels.items() if docs and qid in run))


def stored_decimals(name: str) -> int:
    """The decimals metric ``name``'s mean has in a results file: MTEB's own metrics as MTEB rounds them
    (:func:`airbench_mteb.mteb_compat.stored_decimals`); label coverage as :func:`label_coverage` rounds it
    before MTEB's writer rounds every score."""
    parsed = per_query_metric(name)
    if parsed is not None and parsed[0] == "judged":
        return min(TREC_MEAN_DECIMALS, RESULTS_FILE_DECIMALS)
    return mteb_stored_decimals(name)


def per_query_scores(trec_scores: Mapping[str, Mapping[str, float]], qrels: Qrels, run: Run,
                     metrics: Sequence[str], query_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Per-query vectors of ``metrics`` over ``query_ids`` from pytrec_eval's per-query measures of ``run``.

    ``trec_scores`` is what ``pytrec_eval.RelevanceEvaluator(...).evaluate(run)`` returns (MTEB passes
    it to ``task_specific_scores`` as ``scores``); ``values[i]`` belongs to ``query_ids[i]``, which are
    :func:`scored_queries` (each in ``trec_scores``). ``mrr_at_k`` is ``1 / rank`` of the first relevant document within
    the top ``k`` (0 if none), ranked as trec_eval ranks; ``judged_at_k`` is :func:`judged_shares`.
    Metrics without a per-query form (MTEB's ``nauc_*``) are left out.

    Raises:
        ValueError: a query of ``query_ids`` has no measures in ``trec_scores`` (it is not scored), or a
            measure of ``metrics`` is not among them (its cut-off was not evaluated).
    """
    vectors: dict[str, np.ndarray] = {}
    for name in metrics:
        parsed = per_query_metric(name)
        if parsed is None:
            continue
        measure, k = parsed
        if measure == "mrr":
            vectors[name] = _reciprocal_ranks(qrels, run, query_ids, k)
        elif measure == "judged":
            vectors[name] = judged_shares(qrels, run, query_ids, k)
        else:
            vectors[name] = _trec_vector(trec_scores, query_ids, f"{TREC_MEASURES[measure]}_{k}", name)
    return vectors


def _trec_vector(trec_scores: Mapping[str, Mapping[str, float]], query_ids: Sequence[str], key: str,
                 name: str) -> np.ndarray:
    values = np.zeros(len(query_ids))
    for i, qid in enumerate(query_ids):
        measures = trec_scores.get(qid)
        if measures is None:
            raise ValueError(f"query {qid!r} has no pytrec_eval measures: it is not among the queries scored")
        if key not in measures:
            raise ValueError(f"{name}: pytrec_eval measure {key!r} was not computed (its cut-off is not evaluated)")
        values[i] = measures[key]
    return values


def _reciprocal_ranks(qrels: Qrels, run: Run, query_ids: Sequence[str], k: int) -> np.ndarray:
    values = np.zeros(len(query_ids))
    for i, qid in enumerate(query_ids):
        relevant = {doc for doc, rel in qrels[qid].items() if is_relevant(rel)}  # none for a query judged 0 only: it scores 0
        top = ranking(run.get(qid, {}))[:k]
        values[i] = next((1.0 / rank for rank, doc in enumerate(top, start=1) if doc in relevant), 0.0)
    return values


def judged_shares(qrels: Qrels, run: Run, query_ids: Sequence[str], k: int) -> np.ndarray:
    """Judged@k per query, as ir_measures computes it: the share of the ranking's top ``k`` (ranked as trec_eval
    ranks) that has a qrels entry of any relevance; a ranking shorter than ``k`` is its own top, an empty one 0."""
    values = np.zeros(len(query_ids))
    for i, qid in enumerate(query_ids):
        judged, top = qrels.get(qid, {}), ranking(run.get(qid, {}))[:k]
        values[i] = sum(doc in judged for doc in top) / len(top) if top else 0.0
    return values


def label_coverage(vectors: Mapping[str, np.ndarray]) -> dict[str, float]:
    """The means of the :data:`LABEL_COVERAGE` metrics among ``vectors``, rounded as MTEB rounds pytrec_eval's means."""
    return {name: round(float(vectors[name].mean()), TREC_MEAN_DECIMALS) for name in LABEL_COVERAGE
            if name in vectors and len(vectors[name])}


def per_source_query_scores(qrels: Qrels, run: Run, doc_sources: Mapping[str, str], sources: Sequence[str],
                            k_values: Sequence[int]) -> dict[str, tuple[tuple[str, ...], dict[str, np.ndarray]]]:
    """Per-query NDCG@k and MAP@k of ONE ranking of a mixed corpus, once per source target.

    The per-query form of :func:`airbench_mteb.metrics.source_bias.per_source_scores`: source ``s``
    is scored against the judgments on its own copies (:func:`qrels_for_source`), over the queries
    :func:`scored_queries` gives for those judgments. That is the set ``per_source_scores`` averages over
    (pytrec_eval's, as MTEB and co*cktail's evaluation -- BEIR's, on the qrels of one source's copies --
    compute NDCG_s): a query judged on that source's copies, relevance 0 only included, that the run holds.
    In a co*cktail ``mixed`` setting every judged document has one copy per source with the same label,
    so every source's set is the mixed subset's own. Returns ``{source: (query_ids, {"ndcg_at_<k>": values, ...})}``;
    beside each measure its tie-neutral form (``ndcg_at_<k>_tie_neutral``, ...: expected over every order of the
    exactly tied documents, :func:`~airbench_mteb.metrics.tie_neutral.tie_neutral_vectors`).
    """
    cutoffs = sorted(set(k_values))
    names = [str(MetricKey(measure, k)) for measure in BIAS_MEASURES for k in cutoffs]
    measures = {f"{TREC_MEASURES[measure]}.{','.join(map(str, cutoffs))}" for measure in BIAS_MEASURES}
    trec_run = {qid: {doc: float(score) for doc, score in docs.items()} for qid, docs in run.items()}
    scores: dict[str, tuple[tuple[str, ...], dict[str, np.ndarray]]] = {}
    for source in sources:
        target = {qid: docs for qid, docs in qrels_for_source(qrels, doc_sources, source).items() if docs}
        query_ids = scored_queries(target, run)
        trec_scores = pytrec_eval.RelevanceEvaluator(pytrec_qrels(target), measures).evaluate(trec_run)
        vectors = per_query_scores(trec_scores, target, run, names, query_ids)
        scores[source] = (query_ids, {**vectors, **tie_neutral_vectors(target, run, cutoffs, query_ids)})
    return scores


def interval_scores(vectors: Mapping[str, np.ndarray], resampling: Resampling) -> dict[str, float | int | str]:
    """Bootstrap confidence intervals of the means of ``vectors`` (one set of resamples for all), as flat results keys.

    ``<metric>_ci_low`` / ``<metric>_ci_high`` per metric, and ``ci_level``, ``ci_method``,
    ``ci_n_resamples``, ``ci_seed``. ``ci_method`` is the method the intervals used (``BCa`` or
    ``percentile``); where BCa was undefined for a metric (e.g. every query scores the same) and its
    interval fell back to the percentile method, that metric also gets ``<metric>_ci_method``.
    Fewer than 2 queries: no interval.
    """
    usable = {name: values for name, values in vectors.items() if len(values) >= 2}
    if not usable:
        return {}
    intervals = bootstrap_cis(usable, level=resampling.level, method=resampling.method,
                              n_resamples=resampling.n_resamples, seed=resampling.seed)
    common = resampling.common_method(interval.method for interval in intervals.values())
    flat: dict[str, float | int | str] = {}
    for name, interval in intervals.items():
        flat[f"{name}_ci_low"], flat[f"{name}_ci_high"] = interval.low, interval.high
    flat.update(ci_level=resampling.level, ci_method=common, ci_n_resamples=resampling.n_resamples,
                ci_seed=resampling.seed)
    flat.update({f"{name}_ci_method": interval.method for name, interval in intervals.items()
                 if interval.method != common})
    return flat
