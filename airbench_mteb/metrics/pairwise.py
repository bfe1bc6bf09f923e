"""SSCI and RCCI: comparing two retrieval models query by query (the IRSC paper, arXiv 2409.15763, section 3.3).

Both indices look at where each model puts its first correct document. For query ``q`` the
result list of model ``i`` is a binary vector ``Ri_q`` of length ``n + 1`` (1 marks a correct
document at that rank) and

    mi_q = n - index(Ri_q, 1)   if 1 is in Ri_q   (first correct answer counted from the end)
    mi_q = -1                   otherwise

so a hit at rank 1 scores ``n``, a hit at the last rank ``0`` and a miss ``-1``. Then

    SSCI = 1/Q * sum_q |m1_q - m2_q| / n      (0 = same understanding; up to (n + 1) / n)
    RCCI = 1/Q * sum_q (m1_q - m2_q) / n      (> 0: model 1 retrieves better; < 0: model 2)

The functions take the IRSC paper's matrices ``R1``/``R2`` (Q x (n + 1), section 3.3); :func:`rank_matrix` builds
them from a run and qrels, and :func:`compare_runs` gives every pair of N models at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from airbench_mteb.ir_types import Qrels, Run
from airbench_mteb.metrics.bootstrap import ConfidenceInterval, Method, bootstrap_ci
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.retrieval import is_relevant, ranking
from airbench_mteb.metrics.significance import (
    Correction,
    RandomizationTest,
    adjust_p_values,
    paired_randomization_test,
)
from airbench_mteb.whole_numbers import count


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


def _first_hits(r1: ArrayLike, r2: ArrayLike) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-query m1, m2 (first_hit_positions) and n, validated as ssci/rcci validate their inputs."""
    a, b = np.asarray(r1), np.asarray(r2)
    rcci(a, b)  # raises rcci's own ValueError for a bad shape or a non-binary matrix
    return first_hit_positions(a), first_hit_positions(b), a.shape[1] - 1


def ssci_ci(r1: ArrayLike, r2: ArrayLike, *, level: float = 0.95, method: Method = "BCa", n_resamples: int = 9999,
            seed: int = 0) -> ConfidenceInterval:
    """Bootstrap CI over queries of ``ssci(r1, r2)``, the mean of |m1_q - m2_q| / n."""
    m1, m2, n = _first_hits(r1, r2)
    return bootstrap_ci(np.abs(m1 - m2) / n, level=level, method=method, n_resamples=n_resamples, seed=seed)


def rcci_ci(r1: ArrayLike, r2: ArrayLike, *, level: float = 0.95, method: Method = "BCa", n_resamples: int = 9999,
            seed: int = 0) -> ConfidenceInterval:
    """Bootstrap CI over queries of ``rcci(r1, r2)``, the mean of (m1_q - m2_q) / n."""
    m1, m2, n = _first_hits(r1, r2)
    return bootstrap_ci((m1 - m2) / n, level=level, method=method, n_resamples=n_resamples, seed=seed)


def rcci_test(r1: ArrayLike, r2: ArrayLike, *, n_resamples: int = 9999, seed: int = 0) -> RandomizationTest:
    """Sign-flip test of RCCI = 0 (neither model finds the first correct document earlier), on m1/n vs m2/n."""
    m1, m2, n = _first_hits(r1, r2)
    return paired_randomization_test(m1 / n, m2 / n, n_resamples=n_resamples, seed=seed)


def rank_matrix(run: Run, qrels: Qrels, depth: int, query_ids: Sequence[str] | None = None) -> np.ndarray:
    """The seed's R matrix (len(query_ids) x depth) of one run: 1 where a relevant document is ranked.

    ``query_ids`` fixes the row order (default: the sorted qrels queries). A query the run does not
    answer is a row of zeros (a miss). Documents are ranked and judged relevant as trec_eval does
    (:func:`~airbench_mteb.metrics.retrieval.ranking`, :func:`~airbench_mteb.metrics.retrieval.is_relevant`).
    """
    if depth < 2:
        raise ValueError(f"depth must be at least 2 (n = depth - 1 must be positive), got {depth}")
    query_ids = sorted(qrels) if query_ids is None else list(query_ids)
    matrix = np.zeros((len(query_ids), depth), dtype=np.int8)
    for row, qid in enumerate(query_ids):
        relevant = {doc for doc, rel in qrels.get(qid, {}).items() if is_relevant(rel)}
        for rank, doc in enumerate(ranking(run.get(qid, {}))[:depth]):
            if doc in relevant:
                matrix[row, rank] = 1
    return matrix


@dataclass(frozen=True)
class PairUncertainty:
    """How sure every cell of an N x N SSCI/RCCI comparison is (``[i][j]``: row model vs column model).

    Bootstrap confidence intervals over queries of every SSCI and RCCI cell, and for RCCI (a mean
    of per-query differences) the two-sided sign-flip p-value of "RCCI = 0" and that p-value
    adjusted (``correction``) over the family of the N (N - 1) / 2 model pairs of this matrix. The
    diagonal (a model against itself) is [0, 0] with p = 1.
    """

    ssci_low: np.ndarray
    ssci_high: np.ndarray
    rcci_low: np.ndarray
    rcci_high: np.ndarray
    rcci_p: np.ndarray
    rcci_p_adjusted: np.ndarray
    methods: np.ndarray  # N x N x 2 strings: the interval method of the SSCI and the RCCI cell
    resampling: Resampling  # method: the one the intervals used (per cell: methods)
    correction: str = "holm"
    alpha: float = 0.05

    def rcci_significant(self) -> np.ndarray:
        """Boolean N x N: the cells whose RCCI differs from 0 at ``alpha`` after the correction."""
        return self.rcci_p_adjusted < self.alpha

    def interval(self, index: str) -> tuple[np.ndarray, np.ndarray]:
        return (self.ssci_low, self.ssci_high) if index == "ssci" else (self.rcci_low, self.rcci_high)

    def to_json(self) -> dict[str, object]:
        return {**{name: getattr(self, name).round(6).tolist() for name in _UNCERTAINTY_MATRICES},
                "methods": self.methods.tolist(), "level": self.resampling.level,
                "method": self.resampling.method, "n_resamples": self.resampling.n_resamples,
                "seed": self.resampling.seed, "test": self.resampling.test, "correction": self.correction,
                "alpha": self.alpha}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairUncertainty:
        resampling = Resampling(method=data["method"], n_resamples=count(data["n_resamples"], "n_resamples"),
                                seed=count(data["seed"], "seed"),
                                level=float(data["level"]), test=str(data["test"]))
        return cls(**{name: np.asarray(data[name], dtype=float) for name in _UNCERTAINTY_MATRICES},
                   methods=np.asarray(data["methods"], dtype=str), resampling=resampling,
                   correction=str(data["correction"]), alpha=float(data["alpha"]))


_UNCERTAINTY_MATRICES = ("ssci_low", "ssci_high", "rcci_low", "rcci_high", "rcci_p", "rcci_p_adjusted")


@dataclass(frozen=True)
class PairwiseComparison:
    """SSCI and RCCI of every ordered pair of N models on one query set (one task, subset and split).

    ``ssci[i][j] = ssci(R_i, R_j)`` and ``rcci[i][j] = rcci(R_i, R_j)`` (row model against column
    model), so ``ssci`` is symmetric and ``rcci`` antisymmetric with zero diagonals. ``uncertainty``
    holds their confidence intervals and RCCI's tests (None: not computed, ``--no-ci``).
    Its tables are in :mod:`airbench_mteb.report.pairwise_tables`.
    """

    models: tuple[str, ...]
    ssci: np.ndarray
    rcci: np.ndarray
    num_queries: int
    depth: int
    uncertainty: PairUncertainty | None = None

    def matrix(self, index: str) -> np.ndarray:
        if index not in ("ssci", "rcci"):
            raise ValueError(f"unknown index {index!r}; use 'ssci' or 'rcci'")
        return self.ssci if index == "ssci" else self.rcci

    def pairs(self) -> list[dict[str, object]]:
        """One row per pair of models (row model first, in model order): SSCI, RCCI and, when computed,
        their intervals and RCCI's raw and adjusted p-values."""
        rows: list[dict[str, object]] = []
        for i, j in zip(*np.triu_indices(len(self.models), k=1), strict=True):
            row: dict[str, object] = {"model_a": self.models[i], "model_b": self.models[j],
                                      "ssci": float(self.ssci[i, j]), "rcci": float(self.rcci[i, j])}
            if self.uncertainty is not None:
                u = self.uncertainty
                row.update(ssci_ci_low=float(u.ssci_low[i, j]), ssci_ci_high=float(u.ssci_high[i, j]),
                           rcci_ci_low=float(u.rcci_low[i, j]), rcci_ci_high=float(u.rcci_high[i, j]),
                           rcci_p_value=float(u.rcci_p[i, j]), rcci_p_adjusted=float(u.rcci_p_adjusted[i, j]),
                           rcci_significant=bool(u.rcci_significant()[i, j]))
            rows.append(row)
        return rows

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"models": list(self.models), "num_queries": self.num_queries, "depth": self.depth,
                                   "ssci": self.ssci.round(6).tolist(), "rcci": self.rcci.round(6).tolist()}
        if self.uncertainty is not None:
            data["uncertainty"] = self.uncertainty.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairwiseComparison:
        """:meth:`to_json`'s output back (one computed without intervals has no uncertainty)."""
        uncertainty = data.get("uncertainty")
        return cls(models=tuple(data["models"]), ssci=np.asarray(data["ssci"], dtype=float),
                   rcci=np.asarray(data["rcci"], dtype=float), num_queries=count(data["num_queries"], "num_queries"),
                   depth=count(data["depth"], "depth"),
                   uncertainty=None if uncertainty is None else PairUncertainty.from_json(uncertainty))


def compare_runs(runs: Mapping[str, Run], qrels: Qrels, depth: int = 10, resampling: Resampling | None = None,
                 correction: Correction = "holm", alpha: float = 0.05) -> PairwiseComparison:
    """SSCI and RCCI between every pair of the given runs (model name -> run) on the qrels queries;
    with ``resampling``, also their uncertainty (:func:`pairwise_uncertainty`; none for a single query)."""
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
    uncertainty = None
    if resampling is not None and len(query_ids) >= 2:
        uncertainty = pairwise_uncertainty(matrices, resampling, correction, alpha)
    return PairwiseComparison(models, ssci_matrix, rcci_matrix, len(query_ids), depth, uncertainty)


def pairwise_uncertainty(matrices: Sequence[np.ndarray], resampling: Resampling, correction: Correction = "holm",
                         alpha: float = 0.05) -> PairUncertainty:
    """Intervals of every SSCI/RCCI cell and RCCI's tests between the models' R matrices (same queries).

    Each pair is resampled once per index (the same seed for every pair); the lower triangle mirrors
    the upper one (SSCI symmetric; RCCI negated, its interval flipped, the same p-value).
    """
    size = len(matrices)
    ssci_low, ssci_high, rcci_low, rcci_high = (np.zeros((size, size)) for _ in range(4))
    p_values = np.ones((size, size))
    methods = np.full((size, size, 2), resampling.method, dtype=object)
    draws = resampling.draws()
    upper = list(zip(*np.triu_indices(size, k=1), strict=True))
    for i, j in upper:
        similarity = ssci_ci(matrices[i], matrices[j], **resampling.interval())
        contest = rcci_ci(matrices[i], matrices[j], **resampling.interval())
        p_values[i, j] = p_values[j, i] = rcci_test(matrices[i], matrices[j], **draws).p_value
        ssci_low[i, j], ssci_high[i, j] = ssci_low[j, i], ssci_high[j, i] = similarity.low, similarity.high
        rcci_low[i, j], rcci_high[i, j] = contest.low, contest.high
        rcci_low[j, i], rcci_high[j, i] = -contest.high, -contest.low
        methods[i, j] = methods[j, i] = (similarity.method, contest.method)
    adjusted = np.ones((size, size))
    if upper:
        rows, columns = np.array(upper).T
        adjusted[rows, columns] = adjusted[columns, rows] = adjust_p_values(p_values[rows, columns], correction)
    used = [methods[i, j, index] for i, j in upper for index in (0, 1)]
    return PairUncertainty(ssci_low, ssci_high, rcci_low, rcci_high, p_values, adjusted, methods.astype(str),
                           replace(resampling, method=resampling.common_method(used)), correction, alpha)
