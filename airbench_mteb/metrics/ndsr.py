r"""Source exposure without relevance labels: ΔNDSR@k, the difference of normalized discounted source ratios.

Huang, Bi, Cai, Chen, Guo and Cheng, "Relevance Supervision Can Teach Neural Retrievers to Prefer LLM-Generated
Text" (arXiv 2604.06163, 2026; their code: ``retrieval/metrics.py``, ``evaluate_source_preference``) measure which
source a retriever puts at the top of ONE ranking of a mixed corpus, with no qrels. For one query whose
ranking holds :math:`m = \min(k, n)` of its :math:`n` retrieved documents in the top ``k``, with the
discount :math:`w_i = 1 / \log_2(1 + i)`,

.. math:: \mathrm{NDSR@}k(s) = \frac{\sum_{i \le m} w_i \, [\mathrm{source}(d_i) = s]}{\sum_{i \le m} w_i}

(0 for every source when nothing was retrieved), and over the queries :math:`Q` of the run, for the reference
source :math:`r` (human) and a compared source :math:`s` (LLM),

.. math:: \Delta\mathrm{NDSR@}k = \frac{1}{|Q|} \sum_{q \in Q} \big(\mathrm{NDSR@}k_q(r) - \mathrm{NDSR@}k_q(s)\big)

with a two-sided one-sample t-test of the per-query differences against 0. ΔNDSR > 0: the retriever puts the
reference's (human) text higher; < 0: the compared source's (LLM) text; the range is [-1, 1]. The paper reports
k = 5. With two sources this is exactly their figure; with more, every source's documents count in the
normaliser, so the ratios of one query sum to 1.

Tie order: the paper ranks equal scores by document id *ascending*, trec_eval (and so every conventional figure
of :mod:`airbench_mteb.metrics.source_bias`) by id *descending*. The conventional ΔNDSR here keeps the paper's
order, so in a co*cktail mixed corpus (ids ``<id>-human``, ``<id>-llama-2-...``) a tie between the two copies
of a document goes to the human copy, where trec_eval gives it to the LLM copy. The tie-neutral form (expected
over every order of the exactly tied documents, :func:`~airbench_mteb.metrics.tie_neutral.expected_discounted_source_ratios`)
depends on no order and stands beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from airbench_mteb.ir_types import Run
from airbench_mteb.metrics.keys import MetricKey
from airbench_mteb.metrics.significance import paired_t_test_p
from airbench_mteb.metrics.source_bias import Flat
from airbench_mteb.metrics.tie_neutral import expected_discounted_source_ratios

NDSR_TIE_ORDER = "doc_id_ascending"  # the paper's; trec_eval's is doc id descending
NDSR_TEST = "one-sample t-test, two-sided"


def paper_ranking(docs: Mapping[str, float]) -> list[str]:
    """Document ids of one query's run, best first, ties broken by id ascending (the paper's order)."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: (-item[1], item[0]))]


def discounted_source_ratios(docs: Mapping[str, float], doc_sources: Mapping[str, str], sources: Sequence[str],
                             k: int) -> dict[str, float]:
    """NDSR@k of every source in one query's ranking (module docstring), ranked by :func:`paper_ranking`.

    Raises:
        ValueError: ``k`` is not a positive integer, or a document of the top ``k`` has no source in ``doc_sources``.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"cut-off {k!r} is not a positive integer")
    top = paper_ranking(docs)[:k]
    unknown = [doc for doc in top if doc not in doc_sources]
    if unknown:
        raise ValueError(f"ranked document {unknown[0]!r} has no source in doc_sources")
    weights = [1 / math.log2(1 + i) for i in range(1, len(top) + 1)]
    total = sum(weights)
    return {source: sum(w for w, doc in zip(weights, top, strict=True) if doc_sources[doc] == source) / total
            if total else 0.0 for source in sources}


def ndsr_vectors(run: Run, doc_sources: Mapping[str, str], sources: Sequence[str], k_values: Sequence[int],
                 query_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Per-query NDSR@k of every source over ``query_ids`` (in that order; a query the run lacks scores 0), named
    ``ndsr_at_<k>_<source>``, and beside each its tie-neutral form ``ndsr_at_<k>_<source>_tie_neutral``."""
    vectors: dict[str, np.ndarray] = {}
    for k in sorted(set(k_values)):
        for tie_neutral, ratios in ((False, discounted_source_ratios), (True, expected_discounted_source_ratios)):
            rows = [ratios(run.get(qid, {}), doc_sources, sources, k) for qid in query_ids]
            vectors.update({ndsr_key(k, source, tie_neutral=tie_neutral): np.array([row[source] for row in rows],
                                                                                   dtype=float) for source in sources})
    return vectors


def ndsr_key(k: int, source: str, *, tie_neutral: bool = False, delta: bool = False, stat: str | None = None) -> str:
    """The key of NDSR@``k`` of ``source``, or of its ΔNDSR, or of a ``stat`` of it:
    ``[delta_]ndsr_at_5_llm[_tie_neutral][_p_value]``."""
    return str(MetricKey("ndsr", k, source, "delta" if delta else None, tie_neutral, stat=stat))


def t_test_p(reference: np.ndarray, compared: np.ndarray) -> float:
    """p-value of the two-sided one-sample t-test of ``reference - compared`` against 0 (``scipy.stats.ttest_1samp``;
    1.0 where it is undefined: fewer than 2 queries, or no query with a difference)."""
    if len(reference) < 2:
        return 1.0
    return paired_t_test_p(reference, compared)


def source_exposure_scores(run: Run, doc_sources: Mapping[str, str], sources: Sequence[str],
                           k_values: Sequence[int]) -> Flat:
    """ΔNDSR@k of one ranking over every query of the run (sorted), as flat scores (:func:`exposure_scores`).

    Raises:
        ValueError: the run is empty, fewer than two distinct sources are given, or a ranked document has no source.
    """
    if not run:
        raise ValueError("the run has no query")
    if len(sources) < 2 or len(set(sources)) != len(sources):
        raise ValueError(f"need at least two distinct sources, got {list(sources)!r}")
    return exposure_scores(ndsr_vectors(run, doc_sources, sources, k_values, sorted(run)), sources, k_values)


def exposure_scores(vectors: Mapping[str, np.ndarray], sources: Sequence[str], k_values: Sequence[int]) -> Flat:
    """The flat scores of :func:`ndsr_vectors`' per-query values; ``sources[0]`` is the reference.

    For every ``k`` and source ``s``: ``ndsr_at_<k>_<s>`` (the mean NDSR@k); for ``s`` other than the reference
    ``delta_ndsr_at_<k>_<s>`` (reference - ``s``) and its t-test ``delta_ndsr_at_<k>_<s>_p_value``; each key once
    more with ``_tie_neutral`` appended (``delta_ndsr_at_5_llm_tie_neutral``, ``..._tie_neutral_p_value``); once
    ``ndsr_queries``, ``ndsr_tie_order`` (:data:`NDSR_TIE_ORDER`) and ``ndsr_p_value_test`` (:data:`NDSR_TEST`).
    """
    reference = sources[0]
    flat: Flat = {name: float(values.mean()) for name, values in vectors.items()}
    for k in sorted(set(k_values)):
        for tie_neutral in (False, True):
            ref = vectors[ndsr_key(k, reference, tie_neutral=tie_neutral)]
            for source in sources[1:]:
                compared = vectors[ndsr_key(k, source, tie_neutral=tie_neutral)]
                flat[ndsr_key(k, source, tie_neutral=tie_neutral, delta=True)] = float((ref - compared).mean())
                flat[ndsr_key(k, source, tie_neutral=tie_neutral, delta=True, stat="p_value")] = t_test_p(ref, compared)
    flat.update(ndsr_queries=len(next(iter(vectors.values()))), ndsr_tie_order=NDSR_TIE_ORDER,
                ndsr_p_value_test=NDSR_TEST)
    return flat
