"""The lines `airbench-mteb run` ends with: each task's main score with its interval, and where the results went."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airbench_mteb.models.arguments import meta_label
from airbench_mteb.results.reading import run_result
from airbench_mteb.tasks.closed_book import CLOSED_BOOK, searched

if TYPE_CHECKING:
    from mteb.models import ModelMeta


def _score_text(entry: dict[str, Any], main_metric: str) -> str:
    """``0.4149 [0.3771, 0.4530]``; a closed-book split says whether it was searched instead of a number."""
    score = entry.get("main_score")
    if CLOSED_BOOK in entry:
        book = entry[CLOSED_BOOK]
        return f"closed-book, not scored: {searched(book.get('top_k', 0), book.get('queries', 0), book.get('predictions'))}"
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return "no score"
    low, high = entry.get(f"{main_metric}_ci_low"), entry.get(f"{main_metric}_ci_high")
    interval = f" [{low:.4f}, {high:.4f}]" if low is not None and high is not None else ""
    return f"{score:.4f}{interval}"


def run_summary(results_root: Path, meta: ModelMeta, task_names: Sequence[str]) -> list[str]:
    """One line per task: its main metric, the score of each split (and subset, where there are several) with its
    95 % interval, and the results file; a task without a results file (it failed) says so. A model run with
    arguments is named first with them (:func:`~airbench_mteb.models.arguments.meta_label`)."""
    import mteb

    lines = [f"{meta_label(meta)}:"] if meta.experiment_kwargs else []
    for name in task_names:
        path, result = run_result(results_root, meta, name)
        if result is None:
            lines.append(f"{name}: no results written (see the messages above)")
            continue
        main_metric = mteb.get_task(name).metadata.main_score
        parts = []
        for split, entries in sorted(result.scores.items()):
            for entry in entries:
                subset = entry.get("hf_subset", "default")
                where = split if len(entries) == 1 else f"{split}/{subset}"
                parts.append(f"{where} {_score_text(entry, main_metric)}")
        lines.append(f"{name}: {main_metric} {'; '.join(parts)} -> {path}")
    return lines
