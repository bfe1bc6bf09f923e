"""Standard retrieval metrics of a run against qrels, with MTEB's names and numbers.

A *run* is ``{query_id: {doc_id: score}}`` -- what MTEB's search, and ``beir``'s
``EvaluateRetrieval.retrieve``, return -- and *qrels* are ``{query_id: {doc_id: relevance}}``
with integer grades (0 marks a judged non-relevant document, such as an AIR-Bench hard negative).
:func:`evaluate_run` scores a run the way MTEB 2.x scores a retrieval task (pytrec_eval for
nDCG, MAP, Recall, Precision and hit rate; MRR computed on the same ranking), so a BEIR user
gets the numbers MTEB would report, without MTEB.

How documents are ranked (as trec_eval does): by score, descending; equal scores by document
id, descending. trec_eval keeps a run's scores as C ``float`` (32 bits), so scores are compared as
:func:`trec_score` rounds them: two scores that round to one float32 (0.30000000000000004 and 0.3,
or 0.3 and 0.30000001) are a tie. :func:`ranking` is that order and :func:`trec_scores` that tie,
for every metric of the plugin.

How grades count (as trec_eval counts them): a document is relevant for the binary measures
(MAP, recall, precision, MRR, hit rate, judged-relevant rows of SSCI/RCCI) when its grade is
above 0 (:func:`is_relevant`); its gain in nDCG is its grade, and 0 for a grade of 0 or below
(:func:`gain`): TREC's negative grades (-1, -2: judged junk or spam) weigh like a judged
non-relevant document, in the ranking and in the ideal one. Only queries that appear in the run *and* have at least one judgment in qrels
are scored, and every metric is the mean over those queries, as in MTEB and BEIR.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pytrec_eval

from airbench_mteb.ir_types import Qrels, Run
from airbench_mteb.metrics.keys import MetricKey

MTEB_K_VALUES = (1, 3, 5, 10, 20, 100, 1000)

# MTEB's measure name (``<measure>_at_<k>``) -> the pytrec_eval measure behind it.
TREC_MEASURES = {"ndcg": "ndcg_cut", "map": "map_cut", "recall": "recall", "precision": "P", "hit_rate": "success"}


def evaluate_run(qrels: Qrels, run: Run, k_values: Sequence[int] = MTEB_K_VALUES, *,
                 ignore_identical_ids: bool = False, digits: int | None = 5) -> dict[str, float]:
    r"""nDCG, MAP, Recall, Precision, MRR and hit rate at every cut-off ``k``, named as in MTEB.

    For one query with graded relevance :math:`rel(d)`, ranking :math:`d_1, d_2, \dots` and
    :math:`R = \{d : rel(d) > 0\}` (relevance 0 counts as not relevant):

    - ``ndcg_at_k`` (Järvelin & Kekäläinen, 2002; AIR-Bench's main score for QA):
      :math:`\mathrm{DCG@k} = \sum_{i=1}^{k} rel(d_i) / \log_2(i+1)`, divided by the DCG@k of
      the ideal ordering of the judged documents.
    - ``map_at_k``: :math:`\frac{1}{|R|}\sum_{i \le k,\, d_i \in R} \mathrm{P@}i` (the
      denominator is all of :math:`|R|`, not :math:`\min(|R|, k)`, as in trec_eval's map_cut).
    - ``recall_at_k`` (AIR-Bench's main score for Long-Doc):
      :math:`|\{d_1..d_k\} \cap R| / |R|`.
    - ``precision_at_k``: :math:`|\{d_1..d_k\} \cap R| / k` (``k`` even if fewer were retrieved).
    - ``mrr_at_k``: :math:`1 / \min\{i \le k : d_i \in R\}`, 0 if no relevant document is in the
      top ``k``.
    - ``hit_rate_at_k``: 1 if any of the top ``k`` is relevant, else 0.
    - ``accuracy`` (only when 1 is among ``k_values``): MTEB's alias of ``recall_at_1``.

    Each value is the mean over the scored queries (see the module docstring). As MTEB and
    BEIR do, the means of the pytrec_eval measures are rounded to ``digits`` decimals
    (``None``: not rounded) and MRR is not rounded. MTEB's confidence-based ``nauc_*`` scores
    are not computed.

    Args:
        qrels: relevance judgments; a query with an empty judgment dict is not scored.
        run: retrieval scores, e.g. the dict ``beir``'s ``EvaluateRetrieval.retrieve`` returns.
        k_values: cut-offs; MTEB's retrieval defaults unless given.
        ignore_identical_ids: drop documents whose id equals the query id from the run first
            (MTEB's task attribute of that name; BEIR's ``evaluate`` does this by default).
        digits: decimals the pytrec_eval means are rounded to.

    Raises:
        ValueError: no cut-off is given, a cut-off is not a positive integer, or no query of
            the run has judgments in qrels.
    """
    cutoffs = _cutoffs(k_values)
    trec_qrels = pytrec_qrels(qrels)
    trec_run = {qid: {doc: float(score) for doc, score in docs.items()
                      if not (ignore_identical_ids and doc == qid)}
                for qid, docs in run.items()}
    joined = ",".join(map(str, cutoffs))
    evaluator = pytrec_eval.RelevanceEvaluator(trec_qrels, {f"{m}.{joined}" for m in TREC_MEASURES.values()})
    per_query = evaluator.evaluate(trec_run)
    if not per_query:
        raise ValueError("no query of the run has judgments in qrels: nothing to score")

    scores: dict[str, float] = {}
    for name, measure in TREC_MEASURES.items():
        for k in cutoffs:
            mean = sum(values[f"{measure}_{k}"] for values in per_query.values()) / len(per_query)
            scores[str(MetricKey(name, k))] = round(mean, digits) if digits is not None else mean
    if 1 in cutoffs:
        scores["accuracy"] = scores["recall_at_1"]
    for k, value in _mean_reciprocal_ranks(trec_qrels, trec_run, per_query, cutoffs).items():
        scores[str(MetricKey("mrr", k))] = value
    return scores


def trec_scores(docs: Mapping[str, float]) -> dict[str, float]:
    """One query's scores as trec_eval compares them: each rounded to the nearest float32 (the C ``float`` trec_eval
    and pytrec_eval store a score in; beyond its range, infinity). Two documents tie when these are equal."""
    with np.errstate(over="ignore"):
        rounded = np.fromiter(docs.values(), dtype=np.float64, count=len(docs)).astype(np.float32)
    return dict(zip(docs, rounded.tolist(), strict=True))


def pytrec_qrels(qrels: Qrels) -> dict[str, dict[str, int]]:
    """``qrels`` as the plugin hands them to pytrec_eval: each grade as its :func:`gain` (a grade <= 0 as 0), the
    queries without judgments left out. The same values for every measure the plugin reads (trec_eval counts a
    grade <= 0 as gain 0 and not relevant); and safe: trec_eval's C code writes outside its arrays for a query
    whose highest grade is below -1 (pytrec_eval 0.5 then aborts the interpreter later, at a free)."""
    return {qid: {doc: gain(int(rel)) for doc, rel in docs.items()} for qid, docs in qrels.items() if docs}


def ranking(docs: Mapping[str, float]) -> list[str]:
    """Document ids of one query's run, best first, ties (equal :func:`trec_scores`) broken by id descending
    (trec_eval's order)."""
    scores = trec_scores(docs)
    return sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)


def is_relevant(grade: int) -> bool:
    """Whether a judged grade makes a document relevant for the binary measures, as trec_eval judges: above 0."""
    return grade > 0


def gain(grade: int) -> int:
    """A judged grade's gain in nDCG, as trec_eval's ``ndcg_cut`` counts it: the grade, 0 for a grade of 0 or below."""
    return max(grade, 0)


def _mean_reciprocal_ranks(qrels: Qrels, run: Run, queries: Iterable[str], cutoffs: Sequence[int]) -> dict[int, float]:
    totals = dict.fromkeys(cutoffs, 0.0)
    count = 0
    for qid in queries:
        count += 1
        relevant = {doc for doc, rel in qrels[qid].items() if is_relevant(rel)}
        first = next((rank for rank, doc in enumerate(ranking(run[qid]), start=1) if doc in relevant), None)
        for k in cutoffs:
            if first is not None and first <= k:
                totals[k] += 1.0 / first
    return {k: total / count for k, total in totals.items()}


def _cutoffs(k_values: Sequence[int]) -> list[int]:
    cutoffs = sorted(set(k_values))
    if not cutoffs:
        raise ValueError("k_values is empty")
    for k in cutoffs:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"cut-off {k!r} is not a positive integer")
    return cutoffs
