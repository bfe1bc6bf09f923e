"""Pure metric functions over plain ``qrels`` / ``run`` dicts (no I/O, no MTEB objects)."""

from __future__ import annotations

from airbench_mteb.metrics.retrieval import MTEB_K_VALUES, evaluate_run, ranking

__all__ = [
    "MTEB_K_VALUES",
    "evaluate_run",
    "ranking",
]
