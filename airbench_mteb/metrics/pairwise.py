"""SSCI and RCCI: comparing two retrieval models query by query (IRSC, seed 004, section 3.3).

Both indices look at where each model puts its first correct document. For query ``q`` the
result list of model ``i`` is a binary vector ``Ri_q`` of length ``n + 1`` (1 marks a correct
document at that rank) and

    mi_q = n - index(Ri_q, 1)   if 1 is in Ri_q   (first correct answer counted from the end)
    mi_q = -1                   otherwise

so a hit at rank 1 scores ``n``, a hit at the last rank ``0`` and a miss ``-1``. Then

    SSCI = 1/Q * sum_q |m1_q - m2_q| / n      (0 = same understanding; up to (n + 1) / n)
    RCCI = 1/Q * sum_q (m1_q - m2_q) / n      (> 0: model 1 retrieves better; < 0: model 2)

The functions take the seed's matrices ``R1``/``R2`` (Q x (n + 1)); :func:`rank_matrix` builds
them from a run and qrels, and :func:`compare_runs` gives every pair of N models at once.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]


def _check_pair(r1: np.ndarray, r2: np.ndarray) -> int:
    """Validate two result matrices and return n (list length minus one)."""
    for name, matrix in (("r1", r1), ("r2", r2)):
        if matrix.ndim != 2:
            raise ValueError(f"{name} must be a Q x (n + 1) matrix, got {matrix.ndim} dimension(s)")
        if not np.isin(matrix, (0, 1)).all():
            raise ValueError(f"{name} must be binary (0/1): 1 marks a correct document at that rank")
    if r1.shape != r2.shape:
        raise ValueError(f"r1 and r2 must have the same shape (same queries, same list length): "
                         f"{r1.shape} vs {r2.shape}")
    queries, length = r1.shape
    if queries == 0:
        raise ValueError("no queries: the indices are means over Q >= 1 queries")
    if length < 2:
        raise ValueError(f"result lists of length {length} give n = {length - 1}; SSCI and RCCI divide by n, "
                         "so every list needs at least 2 ranks")
    return length - 1


def first_hit_positions(r: np.ndarray) -> np.ndarray:
    """``m_q`` for every row of ``r``: n - (index of the first 1), or -1 when the row has no 1."""
    r = np.asarray(r)
    n = r.shape[1] - 1
    hit = r == 1
    return np.where(hit.any(axis=1), n - hit.argmax(axis=1), -1)


def ssci(r1: np.ndarray | Sequence[Sequence[int]], r2: np.ndarray | Sequence[Sequence[int]]) -> float:
    r"""Similarity of Semantic Comprehension Index of two models over the same Q queries.

    .. math:: \overline{SSCI} = \frac{1}{Q} \sum_{q=1}^{Q} \frac{|m1_q - m2_q|}{n}

    ``r1`` and ``r2`` are Q x (n + 1) binary matrices (``m`` as in the module docstring).
    0 means both models put their first correct document at the same rank for every query;
    the maximum (n + 1) / n means one always ranks it first while the other always misses it.
    Symmetric: ``ssci(r1, r2) == ssci(r2, r1)``.
    """
    a, b = np.asarray(r1), np.asarray(r2)
    n = _check_pair(a, b)
    return float(np.mean(np.abs(first_hit_positions(a) - first_hit_positions(b)) / n))


def rcci(r1: np.ndarray | Sequence[Sequence[int]], r2: np.ndarray | Sequence[Sequence[int]]) -> float:
    r"""Retrieval Capability Contest Index of model 1 against model 2 over the same Q queries.

    .. math:: \overline{RCCI} = \frac{1}{Q} \sum_{q=1}^{Q} \frac{m1_q - m2_q}{n}

    Positive when model 1 tends to rank the correct document earlier, negative when model 2
    does; in [-(n + 1) / n, (n + 1) / n]. Antisymmetric: ``rcci(r1, r2) == -rcci(r2, r1)``.
    """
    a, b = np.asarray(r1), np.asarray(r2)
    n = _check_pair(a, b)
    return float(np.mean((first_hit_positions(a) - first_hit_positions(b)) / n))


def ranked_documents(scores: Mapping[str, float], depth: int) -> list[str]:
    """The top ``depth`` document ids of one query, ties broken like pytrec_eval (higher id first)."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:depth]]


def rank_matrix(run: Run, qrels: Qrels, depth: int, query_ids: Sequence[str] | None = None) -> np.ndarray:
    """The seed's R matrix (len(query_ids) x depth) of one run: 1 where a relevant document is ranked.

    ``query_ids`` fixes the row order (default: the sorted qrels queries). A query the run does not
    answer is a row of zeros (a miss). Relevance is ``qrels[q][doc] > 0``.
    """
    if depth < 2:
        raise ValueError(f"depth must be at least 2 (n = depth - 1 must be positive), got {depth}")
    query_ids = sorted(qrels) if query_ids is None else list(query_ids)
    matrix = np.zeros((len(query_ids), depth), dtype=np.int8)
    for row, qid in enumerate(query_ids):
        relevant = {doc for doc, rel in qrels.get(qid, {}).items() if rel > 0}
        for rank, doc in enumerate(ranked_documents(run.get(qid, {}), depth)):
            if doc in relevant:
                matrix[row, rank] = 1
    return matrix


@dataclass(frozen=True)
class PairwiseComparison:
    """SSCI and RCCI of every ordered pair of N models on one query set (one task, subset and split).

    ``ssci[i][j] = ssci(R_i, R_j)`` and ``rcci[i][j] = rcci(R_i, R_j)`` (row model against column
    model), so ``ssci`` is symmetric and ``rcci`` antisymmetric with zero diagonals.
    """

    models: tuple[str, ...]
    ssci: np.ndarray
    rcci: np.ndarray
    num_queries: int
    depth: int

    def matrix(self, index: str) -> np.ndarray:
        if index not in ("ssci", "rcci"):
            raise ValueError(f"unknown index {index!r}; use 'ssci' or 'rcci'")
        return self.ssci if index == "ssci" else self.rcci

    def to_csv(self, index: str) -> str:
        """The N x N matrix of ``index`` ('ssci' or 'rcci') as CSV with model names as header and first column."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["model", *self.models])
        for name, row in zip(self.models, self.matrix(index), strict=True):
            writer.writerow([name, *(f"{value:.6f}" for value in row)])
        return buffer.getvalue()

    def to_markdown(self, index: str) -> str:
        header = f"| {index.upper()} (row vs column) | " + " | ".join(self.models) + " |"
        lines = [header, "|" + "---|" * (len(self.models) + 1)]
        for name, row in zip(self.models, self.matrix(index), strict=True):
            lines.append(f"| {name} | " + " | ".join(f"{value:.4f}" for value in row) + " |")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {"models": list(self.models), "num_queries": self.num_queries, "depth": self.depth,
                "ssci": self.ssci.round(6).tolist(), "rcci": self.rcci.round(6).tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> PairwiseComparison:
        return cls(models=tuple(data["models"]), ssci=np.asarray(data["ssci"], dtype=float),  # type: ignore[arg-type]
                   rcci=np.asarray(data["rcci"], dtype=float), num_queries=int(data["num_queries"]),  # type: ignore[arg-type]
                   depth=int(data["depth"]))  # type: ignore[arg-type]


def compare_runs(runs: Mapping[str, Run], qrels: Qrels, depth: int = 10) -> PairwiseComparison:
    """SSCI and RCCI between every pair of the given runs (model name -> run) on the qrels queries."""
    if len(runs) < 2:
        raise ValueError(f"comparing needs at least two runs, got {len(runs)}")
    query_ids = sorted(qrels)
    models = tuple(runs)
    matrices = [rank_matrix(runs[m], qrels, depth, query_ids) for m in models]
    size = len(models)
    ssci_matrix, rcci_matrix = np.zeros((size, size)), np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            if i != j:
                ssci_matrix[i, j] = ssci(matrices[i], matrices[j])
                rcci_matrix[i, j] = rcci(matrices[i], matrices[j])
    return PairwiseComparison(models, ssci_matrix, rcci_matrix, len(query_ids), depth)
