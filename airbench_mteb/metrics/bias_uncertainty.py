r"""How sure a source bias is: Relative Δ with its confidence interval and test, and two models' biases compared.

A co*cktail ``mixed`` ranking gives every query one score per source target (its NDCG@k against
the human copies, against the LLM copies, ...): :func:`airbench_mteb.metrics.per_query.per_source_query_scores`
returns these *source vectors*, ``{source: (query_ids, {"ndcg_at_<k>": values, "map_at_<k>": ...})}``.
Both scores of a query come from the same ranking, so they are resampled together:

- :func:`with_uncertainty` adds to each Relative Δ of a :class:`~airbench_mteb.metrics.source_bias.SourceBias`
  a bootstrap CI over queries (:func:`~airbench_mteb.metrics.uncertainty.relative_delta_ci`) and the
  p-value of "no bias", the two-sided sign-flip test on the per-query differences reference - source
  (:func:`~airbench_mteb.metrics.significance.paired_randomization_test`). A swap of a query's two
  scores leaves the sum of the two means unchanged, so the test of the mean difference is exactly
  the test of Δ.
- :func:`compare_source_bias` compares two models' Δ on the same queries: Δ_A - Δ_B with a paired
  bootstrap CI (one draw of queries for all four vectors) and a paired permutation test (each null
  draw swaps the two models' scores of a random half of the queries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from airbench_mteb.metrics.keys import MetricKey
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import paired_randomization_test
from airbench_mteb.metrics.source_bias import DeltaUncertainty, SourceBias, SourceScores, relative_delta
from airbench_mteb.metrics.uncertainty import (
    relative_delta_ci,
    relative_delta_difference_ci,
    relative_delta_difference_test,
)

# source -> (query ids, metric name -> per-query values in query-id order)
SourceVectors = Mapping[str, tuple[Sequence[str], Mapping[str, np.ndarray]]]


def source_pair(vectors: SourceVectors, reference: str, source: str,
                metric: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The queries (sorted by id) and the reference's and ``source``'s per-query ``metric`` on them.

    Raises:
        ValueError: a source or the metric is missing, or the two sources score different queries.
    """
    columns = []
    for name in (reference, source):
        if name not in vectors:
            raise ValueError(f"no per-query scores of source {name!r} (sources: {', '.join(vectors)})")
        query_ids, metrics = vectors[name]
        if metric not in metrics:
            raise ValueError(f"no per-query {metric} of source {name!r} (metrics: {', '.join(metrics)})")
        columns.append(dict(zip(query_ids, metrics[metric], strict=True)))
    reference_scores, source_scores = columns
    only = sorted(set(reference_scores) ^ set(source_scores))
    if only:
        raise ValueError(f"sources {reference!r} and {source!r} score different queries (e.g. {only[0]!r}): "
                         "Relative Δ pairs a query's scores from one ranking")
    query_ids = sorted(reference_scores)
    return (query_ids, np.array([reference_scores[q] for q in query_ids], dtype=float),
            np.array([source_scores[q] for q in query_ids], dtype=float))


def delta_uncertainty(reference_values: np.ndarray, source_values: np.ndarray,
                      resampling: Resampling) -> DeltaUncertainty:
    """CI of the Relative Δ of two paired per-query vectors and the sign-flip p-value of "Δ = 0"."""
    interval = relative_delta_ci(reference_values, source_values, level=resampling.level, method=resampling.method,
                                 n_resamples=resampling.n_resamples, seed=resampling.seed)
    test = paired_randomization_test(reference_values, source_values, n_resamples=resampling.n_resamples,
                                     seed=resampling.seed)
    return DeltaUncertainty(interval.low, interval.high, test.p_value, interval.method)


def with_uncertainty(bias: SourceBias, vectors: SourceVectors, resampling: Resampling) -> SourceBias:
    """``bias`` whose every Relative Δ carries its :class:`DeltaUncertainty`, from the per-query ``vectors``
    of the same ranking; unchanged when fewer than 2 queries are scored (no interval exists).

    A tie-neutral Δ gets its own from the tie-neutral vectors (``<metric>_tie_neutral``,
    :func:`airbench_mteb.metrics.per_query.per_source_query_scores`) with the same resamples."""
    compared = {}
    for source in bias.compared:
        figures = bias.sources[source]
        uncertainty = _uncertainty(figures, vectors, bias.reference, source, False, resampling)
        if uncertainty is None:
            return bias
        figures = replace(figures, uncertainty=uncertainty)
        if figures.tie_neutral is not None:
            neutral = _uncertainty(figures.tie_neutral, vectors, bias.reference, source, True, resampling)
            figures = replace(figures, tie_neutral=replace(figures.tie_neutral, uncertainty=neutral or {}))
        compared[source] = figures
    # the conventional intervals alone name the common method, so their keys stay as they were; a tie-neutral
    # interval of another method says so in its own <key>_ci_method
    used = [u.method for figures in compared.values() for by_k in figures.uncertainty.values() for u in by_k.values()]
    return replace(bias, sources={**bias.sources, **compared},
                   resampling=replace(resampling, method=resampling.common_method(used)))


def _uncertainty(figures: SourceScores, vectors: SourceVectors, reference: str, source: str, tie_neutral: bool,
                 resampling: Resampling) -> dict[str, dict[int, DeltaUncertainty]] | None:
    """Every Relative Δ of ``figures`` with its uncertainty, from the vectors ``<measure>_at_<k>`` (their
    tie-neutral forms with ``tie_neutral``); None when fewer than 2 queries are scored."""
    uncertainty = {}
    for measure, by_k in figures.relative_delta.items():
        pairs = {k: source_pair(vectors, reference, source, str(MetricKey(measure, k, tie_neutral=tie_neutral)))[1:] for k in by_k}
        if any(len(reference_values) < 2 for reference_values, _ in pairs.values()):
            return None
        uncertainty[measure] = {k: delta_uncertainty(*pair, resampling) for k, pair in pairs.items()}
    return uncertainty


@dataclass(frozen=True)
class BiasDifference:
    """Two models' Relative Δ of ``measure``@``k`` (``compared`` against ``reference``) on the same queries."""

    measure: str
    k: int
    reference: str
    compared: str
    n_queries: int
    delta_a: float
    delta_b: float
    difference: float  # delta_a - delta_b
    ci_low: float
    ci_high: float
    p_value: float
    exact: bool  # the test enumerated every swap (2^n <= n_resamples)
    resampling: Resampling  # method: the interval method used


def compare_source_bias(a: SourceVectors, b: SourceVectors, *, reference: str, compared: str, measure: str = "ndcg",
                        k: int = 1, resampling: Resampling | None = None, tie_neutral: bool = False) -> BiasDifference:
    """Is model A's source bias different from model B's? Δ_A - Δ_B with its paired bootstrap CI and test.

    ``a`` and ``b`` are the two models' source vectors of the same data (the per-source values kept
    for a ``mixed`` subset); queries are paired by id. Δ is :func:`relative_delta` of the means of
    ``reference`` and ``compared`` (in percent; > 0 favours the reference); with ``tie_neutral``, of the
    tie-neutral vectors (``<measure>_at_<k>_tie_neutral``: expected over every order of exactly tied scores). The CI resamples the
    queries once for all four vectors (:func:`~airbench_mteb.metrics.uncertainty.relative_delta_difference_ci`);
    the test (:func:`~airbench_mteb.metrics.uncertainty.relative_delta_difference_test`) swaps the two
    models' (reference, compared) scores of each query with probability 1/2.

    Raises:
        ValueError: a source or metric is missing, fewer than 2 queries, or the models score different queries.
    """
    resampling = resampling or Resampling()
    metric = str(MetricKey(measure, k, tie_neutral=tie_neutral))
    (ids_a, *columns_a), (ids_b, *columns_b) = (source_pair(vectors, reference, compared, metric) for vectors in (a, b))
    if ids_a != ids_b:
        only = sorted(set(ids_a) ^ set(ids_b))
        raise ValueError(f"the two models' {metric} are of different queries (e.g. {only[0]!r}): compare models "
                         "evaluated on the same data")
    columns = [*columns_a, *columns_b]
    draws = {"n_resamples": resampling.n_resamples, "seed": resampling.seed}
    interval = relative_delta_difference_ci(*columns, level=resampling.level, method=resampling.method, **draws)
    test = relative_delta_difference_test(*columns, **draws)
    delta_a = relative_delta(float(columns[0].mean()), float(columns[1].mean()))
    delta_b = relative_delta(float(columns[2].mean()), float(columns[3].mean()))
    return BiasDifference(measure, k, reference, compared, len(ids_a), delta_a, delta_b, delta_a - delta_b,
                          interval.low, interval.high, test.p_value, test.exact,
                          replace(resampling, method=interval.method))

