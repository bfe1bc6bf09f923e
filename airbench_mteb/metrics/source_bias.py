r"""Source bias: does a retriever prefer one source's copy of a document over another's?

Cocktail (co*cktail paper, arXiv 2405.16546, sections 3-4) indexes a *mixed* corpus holding every document twice,
the human-written original and an LLM rewrite with the same relevance labels, and ranks it
once. That one ranking is then scored once per source: against qrels keyed to that source's
copies only, the other copies counting as unjudged (not relevant). Comparing the two scores
with :func:`relative_delta` gives the bias; :func:`source_share_at_k` gives the companion
figure, the share of each source among the top ``k``.

Inputs are plain dicts: a *run* ``{query_id: {doc_id: score}}``, *qrels*
``{query_id: {doc_id: grade}}`` over the mixed corpus's document ids, and ``doc_sources``
``{doc_id: source}`` naming the source of every document of the mixed corpus. Documents are
ranked as trec_eval ranks them (score descending, equal scores by document id descending).

That order hands every exact tie between two sources' copies to the copy with the larger id, so beside
each conventional figure :func:`source_bias` gives its *tie-neutral* form, the expected value over every
order of the tied documents (:mod:`airbench_mteb.metrics.tie_neutral`, McSherry & Najork, ECIR 2008), the
range of the conventional Relative Δ over tie breaking by source, and how many queries' top ``k`` such a
tie decides.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from airbench_mteb.ir_types import Qrels, Run
from airbench_mteb.metrics.keys import MetricKey
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.retrieval import evaluate_run, ranking
from airbench_mteb.metrics.tie_neutral import (
    expected_source_share,
    tie_neutral_vectors,
    ties_broken_toward,
    ties_decide,
)

BIAS_MEASURES = ("ndcg", "map")


def relative_delta(m_human: float, m_llm: float) -> float:
    r"""Relative Δ between a metric on the human target and on the LLM target, in percent.

    .. math:: \mathrm{Relative}\ \Delta = \frac{M_\mathrm{Human} - M_\mathrm{LLM}}
              {(M_\mathrm{Human} + M_\mathrm{LLM}) / 2} \times 100

    (co*cktail paper, arXiv 2405.16546, section 4, "Evaluation Metrics", defined there for NDCG; Cocktail reports
    it for NDCG@1, @3 and @5 in Tables 3, 14 and 16). Positive values mean the retriever ranks
    human-written copies higher, negative values LLM-generated copies; the range is
    ``[-200, 200]`` and swapping the arguments flips the sign.

    When both metrics are 0 the ratio is undefined: the result is then 0.0 (no measurable
    preference) and a :class:`RuntimeWarning` is emitted, so results never hold NaN.

    Raises:
        ValueError: a metric is negative, infinite or NaN.
    """
    for name, value in (("m_human", m_human), ("m_llm", m_llm)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite metric value >= 0, got {value!r}")
    if (m_human + m_llm) / 2 == 0:
        warnings.warn("relative_delta: both metrics are 0, so Relative Δ is undefined; reporting 0.0",
                      RuntimeWarning, stacklevel=2)
        return 0.0
    return float(relative_deltas(m_human, m_llm))


def relative_deltas(human: ArrayLike, llm: ArrayLike) -> np.ndarray:
    """:func:`relative_delta` element-wise over arrays of metric values (the one body of the formula), 0 where both
    are 0; unchecked and silent, for the resampling code that computes it over thousands of resampled means."""
    human, llm = np.asarray(human), np.asarray(llm)
    centre = (human + llm) / 2
    return np.divide(human - llm, centre, out=np.zeros(np.shape(centre)), where=centre != 0) * 100


def qrels_for_source(qrels: Qrels, doc_sources: Mapping[str, str], source: str) -> dict[str, dict[str, int]]:
    """Qrels keyed to one source's copies: judgments on other sources' documents are dropped.

    Every query keeps its entry (possibly empty), so each source is scored on the same queries.

    Raises:
        ValueError: a judged document has no source in ``doc_sources``.
    """
    kept: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        for doc_id in docs:
            if doc_id not in doc_sources:
                raise ValueError(f"document {doc_id!r} judged for query {qid!r} has no source in doc_sources")
        kept[qid] = {doc_id: grade for doc_id, grade in docs.items() if doc_sources[doc_id] == source}
    return kept


def per_source_scores(qrels: Qrels, run: Run, doc_sources: Mapping[str, str], sources: Sequence[str],
                      k_values: Sequence[int]) -> dict[str, dict[str, float]]:
    r"""NDCG@k and MAP@k of ONE ranking of the mixed corpus, once per source target.

    For source ``s`` the run is scored against :func:`qrels_for_source` ``(s)`` with
    pytrec_eval (through :func:`airbench_mteb.metrics.retrieval.evaluate_run`, unrounded):
    this is how Cocktail obtains :math:`\mathrm{NDCG}_\mathrm{Human}` and
    :math:`\mathrm{NDCG}_\mathrm{LLM}` (co*cktail paper, arXiv 2405.16546, section 4). A query is scored when it
    is in the run and has judgments on that source's copies.

    Returns:
        ``{source: {"ndcg_at_<k>": ..., "map_at_<k>": ...}}``.
    """
    scores: dict[str, dict[str, float]] = {}
    for source in sources:
        target = {qid: docs for qid, docs in qrels_for_source(qrels, doc_sources, source).items() if docs}
        if not target:
            raise ValueError(f"no query has judgments on documents of source {source!r}")
        evaluated = evaluate_run(target, run, k_values, digits=None)
        scores[source] = {str(key): evaluated[str(key)] for key in _bias_keys(k_values)}
    return scores


def source_share_at_k(run: Run, doc_sources: Mapping[str, str], source: str,
                      k_values: Sequence[int]) -> dict[int, float]:
    r"""Mean share of ``source``'s documents among the top ``k`` of each query's ranking.

    .. math:: \mathrm{share@}k(s) = \frac{1}{|Q|} \sum_{q \in Q}
              \frac{|\{d \in \mathrm{top}_k(q) : \mathrm{source}(d) = s\}|}{k}

    over the queries :math:`Q` of the run; the denominator is ``k`` even when fewer documents
    were retrieved (as Cocktail's ``evaluate_human_corpus_rate`` does; with ``s`` = human it is
    the "human rate@k" of the co*cktail authors' tool). With two sources an unbiased retriever scores
    about 0.5.

    Raises:
        ValueError: the run is empty, a cut-off is not a positive integer, or a ranked document
            has no source in ``doc_sources``.
    """
    if not run:
        raise ValueError("the run has no query")
    cutoffs = sorted(set(k_values))
    if not cutoffs or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in cutoffs):
        raise ValueError(f"cut-offs must be positive integers, got {list(k_values)!r}")
    totals = dict.fromkeys(cutoffs, 0.0)
    for qid, docs in run.items():
        top = ranking(docs)[:cutoffs[-1]]
        for doc_id in top:
            if doc_id not in doc_sources:
                raise ValueError(f"document {doc_id!r} ranked for query {qid!r} has no source in doc_sources")
        for k in cutoffs:
            totals[k] += sum(doc_sources[doc_id] == source for doc_id in top[:k]) / k
    return {k: total / len(run) for k, total in totals.items()}


@dataclass(frozen=True)
class DeltaUncertainty:
    """How sure one Relative Δ is: its bootstrap confidence interval over queries and the p-value of
    "no bias" (a sign-flip randomization test on the per-query differences reference - source)."""

    ci_low: float
    ci_high: float
    p_value: float
    method: str  # the interval method used ("BCa", or "percentile" where BCa is undefined)


@dataclass(frozen=True)
class SourceScores:
    """One source's figures on one ranking of the mixed corpus, by measure and cut-off ``k``."""

    scores: Mapping[str, Mapping[int, float]]  # "ndcg", "map" -> k -> value against this source's copies
    relative_delta: Mapping[str, Mapping[int, float]]  # the same measures vs the reference; empty for it
    share: Mapping[int, float]  # k -> share of this source's documents in the top k
    # the same measures and k as relative_delta; empty for the reference or when not computed
    uncertainty: Mapping[str, Mapping[int, DeltaUncertainty]] = field(default_factory=dict)
    # the same figures expected over every order of exactly tied scores; None in results written without them
    tie_neutral: SourceScores | None = None
    # the conventional Relative Δ when every exact tie between sources goes to one of them:
    # favoured source (the reference, this source) -> measure -> k -> Δ; empty for the reference
    ties_to: Mapping[str, Mapping[str, Mapping[int, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class TiesDecide:
    """How many queries' top ``k`` (its documents or their order) an exact tie between sources decides."""

    queries: int  # the queries looked at: those of the run with judgments
    decided: Mapping[int, int]  # k -> queries whose top k such a tie decides

    def share(self, k: int) -> float:
        return self.decided[k] / self.queries if self.queries else 0.0


@dataclass(frozen=True)
class SourceBias:
    """Every source-bias figure of one ranking of a mixed corpus; ``sources`` starts with the reference."""

    reference: str
    sources: Mapping[str, SourceScores]
    resampling: Resampling | None = None  # set when the Relative Δs carry their uncertainty
    ties: TiesDecide | None = None  # None in results written without it

    @property
    def compared(self) -> list[str]:
        """The sources compared with the reference, in order."""
        return [source for source in self.sources if source != self.reference]


def source_bias(qrels: Qrels, run: Run, doc_sources: Mapping[str, str], sources: Sequence[str],
                k_values: Sequence[int]) -> SourceBias:
    """Per-source NDCG/MAP (:func:`per_source_scores`), Relative Δ against the reference
    (:func:`relative_delta` of the reference's metric and the source's) and top-k shares
    (:func:`source_share_at_k`) of one ranking. ``sources[0]`` is the reference (Cocktail: the
    human-written corpus).

    Each source's figures also carry their tie-neutral form (``tie_neutral``: the same figures from the
    expected values over every order of exactly tied documents, :func:`per_source_tie_neutral_scores` and
    :func:`~airbench_mteb.metrics.tie_neutral.expected_source_share`) and the conventional Relative Δ with every
    tie between sources broken toward the reference and toward the source (``ties_to``,
    :func:`~airbench_mteb.metrics.tie_neutral.ties_broken_toward`); ``ties`` counts the queries whose top ``k``
    such a tie decides (:func:`~airbench_mteb.metrics.tie_neutral.ties_decide`).
    """
    if len(sources) < 2 or len(set(sources)) != len(sources):
        raise ValueError(f"need at least two distinct sources, got {list(sources)!r}")
    reference = sources[0]
    conventional = _figures(per_source_scores(qrels, run, doc_sources, sources, k_values), sources, k_values,
                            {source: source_share_at_k(run, doc_sources, source, k_values) for source in sources})
    neutral = _figures(per_source_tie_neutral_scores(qrels, run, doc_sources, sources, k_values), sources, k_values,
                       {source: _expected_shares(run, doc_sources, source, k_values) for source in sources})
    broken = {favoured: _figures(per_source_scores(qrels, ties_broken_toward(run, doc_sources, favoured), doc_sources,
                                                   sources, k_values), sources, k_values)
              for favoured in sources}
    checked = [qid for qid in run if qrels.get(qid)]
    ties = TiesDecide(len(checked), {k: sum(ties_decide(run[qid], doc_sources, k) for qid in checked)
                                     for k in sorted(set(k_values))})
    return SourceBias(reference, {
        source: replace(figures, tie_neutral=neutral[source], ties_to={} if source == reference else {
            favoured: broken[favoured][source].relative_delta for favoured in (reference, source)})
        for source, figures in conventional.items()}, ties=ties)


def _figures(per_source: Mapping[str, Mapping[str, float]], sources: Sequence[str], k_values: Sequence[int],
             shares: Mapping[str, Mapping[int, float]] | None = None) -> dict[str, SourceScores]:
    """Each source's scores by measure and k, its Relative Δ against ``sources[0]`` and its ``shares``."""
    measured = {source: {m: {k: per_source[source][str(MetricKey(m, k))] for k in k_values} for m in BIAS_MEASURES}
                for source in sources}
    reference = sources[0]
    return {source: SourceScores(
        scores=measured[source],
        relative_delta={} if source == reference else {
            m: {k: relative_delta(measured[reference][m][k], value) for k, value in by_k.items()}
            for m, by_k in measured[source].items()},
        share={} if shares is None else shares[source])
        for source in sources}


def per_source_tie_neutral_scores(qrels: Qrels, run: Run, doc_sources: Mapping[str, str], sources: Sequence[str],
                                  k_values: Sequence[int]) -> dict[str, dict[str, float]]:
    """:func:`per_source_scores` with every query's NDCG@k and MAP@k expected over every order of its exactly
    tied documents (:func:`~airbench_mteb.metrics.tie_neutral.tie_neutral_vectors`), averaged over the same
    queries (those of the run with judgments on the source's copies). Without ties: the same values.

    Returns:
        ``{source: {"ndcg_at_<k>": ..., "map_at_<k>": ...}}``.
    """
    scores: dict[str, dict[str, float]] = {}
    for source in sources:
        target = {qid: docs for qid, docs in qrels_for_source(qrels, doc_sources, source).items() if docs}
        query_ids = [qid for qid in run if qid in target]
        if not query_ids:
            raise ValueError(f"no query of the run has judgments on documents of source {source!r}")
        vectors = tie_neutral_vectors(target, run, k_values, query_ids)
        scores[source] = {str(key): float(vectors[str(replace(key, tie_neutral=True))].mean())
                          for key in _bias_keys(k_values)}
    return scores


def _bias_keys(k_values: Sequence[int]) -> list[MetricKey]:
    """``ndcg_at_<k>`` then ``map_at_<k>`` for every ``k``, the keys of one source's scores."""
    return [MetricKey(m, k) for m in BIAS_MEASURES for k in k_values]


def _expected_shares(run: Run, doc_sources: Mapping[str, str], source: str, k_values: Sequence[int]) -> dict[int, float]:
    """:func:`source_share_at_k` expected over every order of the ties (same queries, same denominator ``k``)."""
    if not run:
        raise ValueError("the run has no query")
    return {k: sum(expected_source_share(docs, doc_sources, source, k) for docs in run.values()) / len(run)
            for k in sorted(set(k_values))}


Flat = dict[str, float | int | str]

# Keys of the recorded Resampling in a flat source_bias block, and the suffixes of each Δ's uncertainty keys.
_RESAMPLING_KEYS = {"level": "ci_level", "method": "ci_method", "n_resamples": "ci_n_resamples", "seed": "ci_seed",
                    "test": "p_value_test"}
_UNCERTAINTY_STATS = ("ci_low", "ci_high", "p_value")  # each a field of DeltaUncertainty and a key's statistic
_TIES_CHECKED = "tie_checked_queries"  # the queries the tie_decided_* counts looked at


def flatten(bias: SourceBias) -> Flat:
    """MTEB's flat ``source_bias`` scores of ``bias``; for every ``k`` and source ``s``:

    - ``ndcg_at_<k>_<s>``, ``map_at_<k>_<s>``;
    - ``relative_delta_ndcg_at_<k>_<s>``, ``relative_delta_map_at_<k>_<s>`` for ``s`` other than
      the reference;
    - ``share_at_<k>_<s>``;
    - when the Δs carry their uncertainty, beside each Δ key ``<Δ key>_ci_low``, ``<Δ key>_ci_high``
      and ``<Δ key>_p_value`` (plus ``<Δ key>_ci_method`` where its interval used another method than
      ``ci_method``), and once ``ci_level``, ``ci_method``, ``ci_n_resamples``, ``ci_seed``, ``p_value_test``;
    - where the figures carry their tie-neutral form, each of the keys above (but the ``ci_*``/``p_value_test``
      settings) once more with ``_tie_neutral`` appended (``relative_delta_ndcg_at_1_llm_tie_neutral``,
      ``..._tie_neutral_ci_low``, ...), and beside each Δ key the conventional Δ with every tie between
      sources broken toward the reference and toward ``s``: ``<Δ key>_ties_to_<reference>``,
      ``<Δ key>_ties_to_<s>``;
    - where counted, ``tie_checked_queries`` and per ``k`` ``tie_decided_queries_at_<k>`` and
      ``tie_decided_share_at_<k>``: the queries whose top ``k`` an exact tie between sources decides.
    """
    flat = _flatten_figures(bias.sources, bias.resampling)
    if bias.resampling is not None:
        flat.update({key: getattr(bias.resampling, name) for name, key in _RESAMPLING_KEYS.items()})
    neutral = {source: figures.tie_neutral for source, figures in bias.sources.items()
               if figures.tie_neutral is not None}
    flat.update(_flatten_figures(neutral, bias.resampling, tie_neutral=True))
    for source, figures in bias.sources.items():
        flat.update({str(MetricKey(measure, k, source, "relative_delta", ties_to=favoured)): value
                     for favoured, by_measure in figures.ties_to.items() for measure, by_k in by_measure.items()
                     for k, value in by_k.items()})
    if bias.ties is not None:
        flat[_TIES_CHECKED] = bias.ties.queries
        for k, count in bias.ties.decided.items():
            flat[str(MetricKey("tie_decided_queries", k))] = count
            flat[str(MetricKey("tie_decided_share", k))] = bias.ties.share(k)
    return flat


def _flatten_figures(sources: Mapping[str, SourceScores], resampling: Resampling | None,
                     tie_neutral: bool = False) -> Flat:
    """The keys of every source's scores, Δs (with their uncertainty) and shares; ``tie_neutral``: in that form."""
    flat: Flat = {}
    for source, figures in sources.items():
        for measure, by_k in figures.scores.items():
            flat.update({str(MetricKey(measure, k, source, tie_neutral=tie_neutral)): value for k, value in by_k.items()})
    for source, figures in sources.items():
        for measure, by_k in figures.relative_delta.items():
            for k, value in by_k.items():
                key = MetricKey(measure, k, source, "relative_delta", tie_neutral)
                flat[str(key)] = value
                uncertainty = figures.uncertainty.get(measure, {}).get(k)
                if uncertainty is not None and resampling is not None:
                    flat.update(_flatten_uncertainty(key, uncertainty, resampling))
    for source, figures in sources.items():
        flat.update({str(MetricKey("share", k, source, tie_neutral=tie_neutral)): share
                     for k, share in figures.share.items()})
    return flat


def _flatten_uncertainty(key: MetricKey, uncertainty: DeltaUncertainty, resampling: Resampling) -> Flat:
    flat: Flat = {str(replace(key, stat=stat)): getattr(uncertainty, stat) for stat in _UNCERTAINTY_STATS}
    if uncertainty.method != resampling.method:
        flat[str(replace(key, stat="ci_method"))] = uncertainty.method
    return flat


def unflatten(flat: Mapping[str, float | int | str], reference: str) -> SourceBias:
    """:func:`flatten`'s scores back into a :class:`SourceBias` whose reference is ``reference``.

    The cut-offs are those of the reference's ``share_at_<k>_<reference>`` scores; the sources
    those with a share at the first cut-off, in the order :func:`flatten` wrote them. The Δs'
    uncertainty, the tie-neutral figures, the Δs over tie orders and the tie counts are read where they
    were written (results written before they existed have none).

    Raises:
        ValueError: ``reference`` has no share score, or a figure of a source is missing.
    """
    keys = [key for name in flat if (key := MetricKey.parse(name)) is not None]
    k_values = sorted(key.k for key in keys if key == MetricKey("share", key.k, reference))
    if not k_values:
        raise ValueError(f"no share_at_<k>_{reference} score: {reference!r} is not a source of these scores")
    first = MetricKey("share", k_values[0])
    others = [key.source for key in keys if replace(key, source=None) == first and key.source != reference]
    sources = [reference, *others]
    resampling = _read_resampling(flat)
    neutral = str(replace(first, source=reference, tie_neutral=True)) in flat
    ranges = others != [] and str(MetricKey("ndcg", k_values[0], others[0], "relative_delta", ties_to=reference)) in flat

    def by_k(key: MetricKey) -> dict[int, float]:
        """The values of ``key`` at every cut-off."""
        names = {k: str(replace(key, k=k)) for k in k_values}
        missing = [name for name in names.values() if name not in flat]
        if missing:
            raise ValueError(f"no {missing[0]} score")
        return {k: float(flat[name]) for k, name in names.items()}

    def figures(source: str, tie_neutral: bool = False) -> SourceScores:
        scores = {m: by_k(MetricKey(m, 1, source, tie_neutral=tie_neutral)) for m in BIAS_MEASURES}
        deltas = {} if source == reference else {
            m: by_k(MetricKey(m, 1, source, "relative_delta", tie_neutral)) for m in BIAS_MEASURES}
        share = by_k(MetricKey("share", 1, source, tie_neutral=tie_neutral))
        uncertainty = {} if resampling is None or source == reference else {
            m: {k: _read_uncertainty(flat, MetricKey(m, k, source, "relative_delta", tie_neutral), resampling)
                for k in k_values} for m in BIAS_MEASURES}
        return SourceScores(scores=scores, relative_delta=deltas, share=share, uncertainty=uncertainty)

    def ties_to(source: str) -> dict[str, dict[str, dict[int, float]]]:
        if not ranges or source == reference:
            return {}
        return {favoured: {m: by_k(MetricKey(m, 1, source, "relative_delta", ties_to=favoured)) for m in BIAS_MEASURES}
                for favoured in (reference, source)}

    return SourceBias(reference, {
        source: replace(figures(source), tie_neutral=figures(source, tie_neutral=True) if neutral else None,
                        ties_to=ties_to(source)) for source in sources}, resampling, _read_ties(flat, k_values))


def _read_ties(flat: Mapping[str, float | int | str], k_values: Sequence[int]) -> TiesDecide | None:
    if _TIES_CHECKED not in flat:
        return None
    keys = {k: str(MetricKey("tie_decided_queries", k)) for k in k_values}
    missing = [key for key in keys.values() if key not in flat]
    if missing:
        raise ValueError(f"no {missing[0]} score ({_TIES_CHECKED} is there)")
    return TiesDecide(int(flat[_TIES_CHECKED]), {k: int(flat[key]) for k, key in keys.items()})


def _read_resampling(flat: Mapping[str, float | int | str]) -> Resampling | None:
    if _RESAMPLING_KEYS["level"] not in flat:
        return None
    missing = [key for key in _RESAMPLING_KEYS.values() if key not in flat]
    if missing:
        raise ValueError(f"no {missing[0]} score (the other ci_* keys are there)")
    return Resampling(level=float(flat["ci_level"]), method=str(flat["ci_method"]),
                      n_resamples=int(flat["ci_n_resamples"]), seed=int(flat["ci_seed"]),
                      test=str(flat["p_value_test"]))


def _read_uncertainty(flat: Mapping[str, float | int | str], key: MetricKey,
                      resampling: Resampling) -> DeltaUncertainty:
    keys = {stat: str(replace(key, stat=stat)) for stat in _UNCERTAINTY_STATS}
    missing = [name for name in keys.values() if name not in flat]
    if missing:
        raise ValueError(f"no {missing[0]} score (ci_level says the Relative Δs carry their uncertainty)")
    return DeltaUncertainty(**{stat: float(flat[name]) for stat, name in keys.items()},
                            method=str(flat.get(str(replace(key, stat="ci_method")), resampling.method)))


def source_bias_scores(qrels: Qrels, run: Run, doc_sources: Mapping[str, str], sources: Sequence[str],
                       k_values: Sequence[int]) -> Flat:
    """:func:`source_bias` of one ranking as MTEB's flat ``source_bias`` scores (:func:`flatten`)."""
    return flatten(source_bias(qrels, run, doc_sources, sources, k_values))
