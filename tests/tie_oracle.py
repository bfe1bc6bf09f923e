"""An oracle of tie-neutral nDCG for tests on real rankings (too many tie orders to enumerate): the expectation
computed document by document, not position by position as :mod:`airbench_mteb.metrics.tie_neutral` does."""

from __future__ import annotations

import math


def expected_dcg(grades: dict[str, int], docs: dict[str, float], k: int) -> float:
    """E[DCG@k] document by document: a document of a tie group spanning positions a..b is at each of them with
    probability 1/(b - a + 1), so its expected discount is the mean of 1/log2(i + 1) over those within k."""
    total, position = 0.0, 1
    for score in sorted(set(docs.values()), reverse=True):
        group = [doc for doc, s in docs.items() if s == score]
        discounts = [1 / math.log2(i + 1) for i in range(position, position + len(group)) if i <= k]
        total += sum(grades.get(doc, 0) for doc in group) * sum(discounts) / len(group)
        position += len(group)
    return total


def ndcg_oracle(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], k: int) -> float:
    """Mean over the judged queries of the run of E[DCG@k] / IDCG@k."""
    values = []
    for qid, docs in run.items():
        grades = qrels.get(qid)
        if not grades:
            continue
        ideal = sum(g / math.log2(i + 1) for i, g in enumerate(sorted(grades.values(), reverse=True)[:k], start=1))
        values.append(expected_dcg(grades, docs, k) / ideal if ideal else 0.0)
    return sum(values) / len(values)
