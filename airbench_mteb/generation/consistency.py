"""Consistency of a generated benchmark with a human-labelled one (the AIR-Bench paper, arXiv 2412.13102, section 4.1).

Evaluate the same models on both datasets over the same corpus; the generated dataset is
trustworthy when it ranks the models like the human labels do (Spearman's rho; the AIR-Bench
paper reports 0.8211, p = 5.3e-5, for 17 models on MS MARCO). The robustness study repeats the comparison on
random subsets of the generated queries (the paper: 30 resamples of 2,000 queries).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Consistency:
    rho: float
    p_value: float
    models: int


@dataclass(frozen=True)
class Robustness:
    rhos: tuple[float, ...]
    sample_size: int

    @property
    def mean(self) -> float:
        return float(np.mean(self.rhos))

    @property
    def std(self) -> float:
        return float(np.std(self.rhos))


def rank_consistency(human: Mapping[str, float], generated: Mapping[str, float]) -> Consistency:
    """Spearman's rank correlation between two model -> score maps over the same models."""
    from scipy.stats import spearmanr

    if set(human) != set(generated):
        raise ValueError(f"the two score maps name different models: {sorted(set(human) ^ set(generated))}")
    if len(human) < 3:
        raise ValueError("rank consistency needs at least 3 models")
    models = sorted(human)
    result = spearmanr([human[m] for m in models], [generated[m] for m in models])
    return Consistency(rho=float(result.statistic), p_value=float(result.pvalue), models=len(models))


def resampled_consistency(human: Mapping[str, float], per_query: Mapping[str, Mapping[str, float]], *,
                          sample_size: int = 2000, resamples: int = 30, seed: int = 0) -> Robustness:
    """Rho between the human scores and each model's mean per-query score on ``resamples`` random
    subsets of ``sample_size`` generated queries (without replacement; all queries if fewer)."""
    queries = sorted(set.intersection(*(set(scores) for scores in per_query.values())))
    if not queries:
        raise ValueError("the models share no evaluated query")
    size = min(sample_size, len(queries))
    rng = random.Random(seed)
    rhos = []
    for _ in range(resamples):
        chosen = rng.sample(queries, size)
        means = {m: float(np.mean([per_query[m][q] for q in chosen])) for m in per_query}
        rhos.append(rank_consistency(human, means).rho)
    return Robustness(rhos=tuple(rhos), sample_size=size)
