r"""Retrieval metrics that do not depend on how exactly tied scores are ordered.

trec_eval (and so pytrec_eval, MTEB and BEIR) ranks documents of equal score by document id, descending
(:func:`airbench_mteb.metrics.retrieval.ranking`). Whenever two documents tie exactly, a metric then
depends on their names. For a co*cktail mixed corpus (ids ``<id>-human`` and ``<id>-llama-2-...``) every
tie between the two copies of a document goes to the LLM copy, a source bias the retriever never showed.

McSherry and Najork ("Computing information retrieval performance measures efficiently in the presence of
tied scores", ECIR 2008) give the expected value of a metric over every ordering of the tied documents, each
ordering equally likely, in closed form. A query's ranking is a sequence of *tied groups* (documents of
exactly equal score, best group first); group :math:`g` holds :math:`n_g` documents and occupies the
positions :math:`a_g .. b_g = a_g + n_g - 1` (1-based) in every ordering. Every document of the group is
equally likely at each of these positions, so a position's expected gain is the group's mean gain
:math:`\bar{r}_g = \frac{1}{n_g}\sum_{d \in g} rel(d)`, and two distinct positions of the group hold two
relevant documents with probability :math:`\frac{R_g (R_g - 1)}{n_g (n_g - 1)}` (:math:`R_g` relevant
documents in the group). The formulas of :func:`expected_ndcg`, :func:`expected_average_precision` and
:func:`expected_source_share` follow; without ties each equals the conventional value exactly.

Only the documents of the run are ranked: a tie with a document the retriever cut off (below its top k) is
not seen. Ties and grades are trec_eval's, defined once in :mod:`airbench_mteb.metrics.retrieval`: two documents
tie when their scores round to one float32 (:func:`~airbench_mteb.metrics.retrieval.trec_scores`); the gain of a
document is :func:`~airbench_mteb.metrics.retrieval.gain` of its grade (0 when unjudged, 0 for a grade <= 0) and
it is relevant for average precision when :func:`~airbench_mteb.metrics.retrieval.is_relevant` (grade > 0). So
where nothing ties in trec_eval's eyes, every tie-neutral value is trec_eval's value, for every grade and score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import groupby

import numpy as np

from airbench_mteb.ir_types import Qrels, Run
from airbench_mteb.metrics.keys import MetricKey
from airbench_mteb.metrics.retrieval import gain, is_relevant, ranking, trec_scores

TIE_NEUTRAL_MEASURES = ("ndcg", "map")


def tied_groups(docs: Mapping[str, float]) -> list[list[str]]:
    """One query's documents as groups of exactly equal score, best score first; each group in trec_eval's
    order (document id descending), so concatenating the groups gives :func:`~airbench_mteb.metrics.retrieval.ranking`.
    Documents tie as trec_eval sees it: equal :func:`~airbench_mteb.metrics.retrieval.trec_scores`."""
    scores = trec_scores(docs)
    return [list(group) for _, group in groupby(ranking(docs), key=scores.__getitem__)]


def _spans(groups: Sequence[Sequence[str]], k: int) -> list[tuple[Sequence[str], int, int]]:
    """``(group, first, last)``: the 1-based positions each group occupies within the top ``k``
    (groups wholly below ``k`` left out)."""
    spans, start = [], 1
    for group in groups:
        if start > k:
            break
        spans.append((group, start, min(start + len(group) - 1, k)))
        start += len(group)
    return spans


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"cut-off {k!r} is not a positive integer")


def expected_ndcg(grades: Mapping[str, int], docs: Mapping[str, float], k: int) -> float:
    r"""nDCG@k of one query, expected over every ordering of its exactly tied documents.

    .. math:: \mathrm{E}[\mathrm{DCG@}k] = \sum_{g} \bar{r}_g \sum_{i = a_g}^{\min(b_g, k)} \frac{1}{\log_2(i + 1)}

    with :math:`\bar{r}_g` the group's mean gain (:func:`~airbench_mteb.metrics.retrieval.gain`: the grade, 0 for
    a grade <= 0), divided by the ideal DCG@k of the judged grades' gains (trec_eval's ``ndcg_cut``: the ideal
    ranking orders every judged document of the query, retrieved or not). The ideal DCG does not depend on
    the run, so the expectation of nDCG is E[DCG] / IDCG (McSherry & Najork, ECIR 2008). 0 when no judged
    document has a positive grade.
    """
    _check_k(k)
    gains = sorted((gain(grade) for grade in grades.values()), reverse=True)[:k]
    ideal = sum(value / math.log2(i + 1) for i, value in enumerate(gains, start=1))
    if ideal == 0:
        return 0.0
    dcg = 0.0
    for group, first, last in _spans(tied_groups(docs), k):
        mean_gain = sum(gain(grades.get(doc, 0)) for doc in group) / len(group)
        dcg += sum(mean_gain / math.log2(i + 1) for i in range(first, last + 1))  # trec_eval's terms, untied
    return dcg / ideal


def expected_average_precision(grades: Mapping[str, int], docs: Mapping[str, float], k: int) -> float:
    r"""AP@k of one query (trec_eval's ``map_cut``), expected over every ordering of its tied documents.

    With :math:`x_i = 1` when position :math:`i` holds a relevant document (grade > 0, as trec_eval) and :math:`R` the
    query's relevant documents (judged, retrieved or not),

    .. math:: \mathrm{AP@}k = \frac{1}{R} \sum_{i \le k} \frac{x_i}{i} \sum_{j \le i} x_j
              = \frac{1}{R} \sum_{i \le k} \frac{1}{i} \Big( x_i + \sum_{j < i} x_i x_j \Big).

    AP is not linear in the gains, but it is in the products :math:`x_i x_j`, whose expectations are known:
    for position :math:`i` of group :math:`g` (:math:`R_g` of its :math:`n_g` documents relevant, :math:`p_g
    = R_g / n_g`, :math:`R_{<g}` relevant documents in the groups before it, which always precede it),
    :math:`\mathrm{E}[x_i] = p_g`, :math:`\mathrm{E}[x_i x_j] = p_g` for each relevant document ranked before
    the group, and :math:`\mathrm{E}[x_i x_j] = \frac{R_g (R_g - 1)}{n_g (n_g - 1)}` for each of the
    :math:`i - a_g` earlier positions :math:`j` of the same group. Hence

    .. math:: \mathrm{E}[\mathrm{AP@}k] = \frac{1}{R} \sum_g \sum_{i = a_g}^{\min(b_g, k)} \frac{1}{i}
              \Big( p_g (1 + R_{<g}) + (i - a_g) \frac{R_g (R_g - 1)}{n_g (n_g - 1)} \Big)

    (McSherry & Najork, ECIR 2008, derive the uncut AP the same way). 0 when the query has no relevant
    document.
    """
    _check_k(k)
    relevant = sum(map(is_relevant, grades.values()))
    if relevant == 0:
        return 0.0
    total, before = 0.0, 0
    for group, first, last in _spans(tied_groups(docs), k):
        size = len(group)
        hits = sum(is_relevant(grades.get(doc, 0)) for doc in group)
        share = hits / size
        pair = hits * (hits - 1) / (size * (size - 1)) if size > 1 else 0.0
        total += sum((share * (1 + before) + (i - first) * pair) / i for i in range(first, last + 1))
        before += hits
    return total / relevant


def expected_source_share(docs: Mapping[str, float], doc_sources: Mapping[str, str], source: str, k: int) -> float:
    r"""Share of ``source``'s documents among one query's top ``k``, expected over every ordering of the ties.

    .. math:: \mathrm{E}[\mathrm{share@}k(s)] = \frac{1}{k} \sum_g \big(\min(b_g, k) - a_g + 1\big)
              \frac{|\{d \in g : \mathrm{source}(d) = s\}|}{n_g}

    (the denominator is ``k`` even when fewer documents were retrieved, as
    :func:`airbench_mteb.metrics.source_bias.source_share_at_k`).

    Raises:
        ValueError: a document within the top ``k`` positions has no source in ``doc_sources``.
    """
    _check_k(k)
    expected = 0.0
    for group, first, last in _spans(tied_groups(docs), k):
        _check_sources(group, doc_sources)
        expected += (last - first + 1) * sum(doc_sources[doc] == source for doc in group) / len(group)
    return expected / k


def expected_discounted_source_ratios(docs: Mapping[str, float], doc_sources: Mapping[str, str],
                                      sources: Sequence[str], k: int) -> dict[str, float]:
    r"""Every source's NDSR@k of one query (:func:`airbench_mteb.metrics.ndsr.discounted_source_ratios`), expected
    over every ordering of the ties. With :math:`m = \min(k, n)` of the :math:`n` retrieved documents ranked, the
    normaliser :math:`W_m = \sum_{i \le m} 1 / \log_2(1 + i)` does not depend on the order, so

    .. math:: \mathrm{E}[\mathrm{NDSR@}k(s)] = \frac{1}{W_m} \sum_g \frac{|\{d \in g : \mathrm{source}(d) = s\}|}{n_g}
              \sum_{i = a_g}^{\min(b_g, k)} \frac{1}{\log_2(1 + i)}

    (0 for every source when nothing was retrieved).

    Raises:
        ValueError: a document within the top ``k`` positions has no source in ``doc_sources``.
    """
    _check_k(k)
    expected, total = dict.fromkeys(sources, 0.0), 0.0
    for group, first, last in _spans(tied_groups(docs), k):
        _check_sources(group, doc_sources)
        weight = sum(1 / math.log2(1 + i) for i in range(first, last + 1))
        total += weight
        for doc in group:
            if doc_sources[doc] in expected:
                expected[doc_sources[doc]] += weight / len(group)
    return {source: value / total if total else 0.0 for source, value in expected.items()}


def _check_sources(docs: Sequence[str], doc_sources: Mapping[str, str]) -> None:
    for doc in docs:
        if doc not in doc_sources:
            raise ValueError(f"ranked document {doc!r} has no source in doc_sources")


def ties_decide(docs: Mapping[str, float], doc_sources: Mapping[str, str], k: int) -> bool:
    """Whether one query's top ``k`` (which documents, or their order) depends on how an exact tie between
    documents of different sources is broken: some tied group reaching into the top ``k`` mixes sources.

    Raises:
        ValueError: a document of such a group has no source in ``doc_sources``.
    """
    _check_k(k)
    for group, _, _ in _spans(tied_groups(docs), k):
        _check_sources(group, doc_sources)
        if len({doc_sources[doc] for doc in group}) > 1:
            return True
    return False


def ties_broken_toward(run: Run, doc_sources: Mapping[str, str], source: str) -> dict[str, dict[str, float]]:
    """``run`` with every exact tie broken in favour of ``source``'s documents, as distinct scores.

    Within each tied group ``source``'s documents come first; otherwise trec_eval's order (id descending) is
    kept. The scores are the positions counted from the bottom (the best document scores highest), so
    trec_eval, pytrec_eval or :func:`~airbench_mteb.metrics.retrieval.ranking` rank the result exactly in
    this order: the conventional metrics of it are their value when every tie goes to ``source``.

    Raises:
        ValueError: a tied document has no source in ``doc_sources``.
    """
    broken = {}
    for qid, docs in run.items():
        order = []
        for group in tied_groups(docs):
            if len(group) > 1:
                _check_sources(group, doc_sources)
                group = sorted(group, key=lambda doc: doc_sources[doc] != source)  # stable: ids stay descending
            order.extend(group)
        broken[qid] = {doc: float(len(order) - position) for position, doc in enumerate(order)}
    return broken


def tie_neutral_vectors(qrels: Qrels, run: Run, k_values: Sequence[int], query_ids: Sequence[str],
                        measures: Sequence[str] = TIE_NEUTRAL_MEASURES) -> dict[str, np.ndarray]:
    """Per-query tie-neutral ``measures`` (``ndcg``: :func:`expected_ndcg`, ``map``:
    :func:`expected_average_precision`) at every ``k`` over ``query_ids`` (in that order), named
    ``<measure>_at_<k>_tie_neutral``; a query the run does not hold scores 0, as a ranking that retrieves nothing
    does (and as :func:`airbench_mteb.metrics.per_query.per_query_scores`).

    Raises:
        ValueError: a cut-off is not a positive integer or a measure is unknown.
    """
    cutoffs = sorted(set(k_values))
    for k in cutoffs:
        _check_k(k)
    unknown = [measure for measure in measures if measure not in _EXPECTED]
    if unknown:
        raise ValueError(f"no tie-neutral form of {unknown[0]!r} (known: {', '.join(_EXPECTED)})")
    names = {(measure, k): str(MetricKey(measure, k, tie_neutral=True)) for measure in measures for k in cutoffs}
    vectors = {name: np.zeros(len(query_ids)) for name in names.values()}
    for i, qid in enumerate(query_ids):
        docs, grades = run.get(qid), qrels.get(qid, {})
        if not docs:
            continue
        for measure in measures:
            for k in cutoffs:
                vectors[names[measure, k]][i] = _EXPECTED[measure](grades, docs, k)
    return vectors


def tie_neutral_ndcg_mean(qrels: Qrels, run: Run, query_ids: Sequence[str], k: int = 10) -> dict[str, float]:
    """``{"ndcg_at_<k>_tie_neutral": mean}``: the mean over ``query_ids`` of :func:`expected_ndcg`, rounded to 5
    decimals as MTEB rounds its means; empty without queries."""
    if not query_ids:
        return {}
    name = str(MetricKey("ndcg", k, tie_neutral=True))
    return {name: round(float(tie_neutral_vectors(qrels, run, [k], query_ids, ("ndcg",))[name].mean()), 5)}


_EXPECTED = {"ndcg": expected_ndcg, "map": expected_average_precision}
