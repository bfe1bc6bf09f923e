"""Closed-book splits: qrels not available here (AIR-Bench test), so retrieve and save, never score.

MTEB drops queries without relevant documents before it searches, which on such a split drops
every query. Here the split is searched as the official AIR-Bench runner does (top
``max(k_values)``, 1,000 for AIR-Bench), MTEB's prediction file is written, and the results hold
no made-up numbers: the main score is NaN (MTEB's own marker for a missing score) and
``closed_book`` says why and how to get the split scored.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.models.rerankers import as_search_model
from airbench_mteb.mteb_compat import HookedRetrievalTask

logger = logging.getLogger(__name__)

CLOSED_BOOK = "closed_book"


def is_closed_book(data_split: Any) -> bool:
    """True when the split came without qrels (the loaders' contract: ``relevant_docs == {}``)."""
    return not data_split["relevant_docs"]


def searched(kept: int, queries: int, predictions: str | None) -> str:
    """What became of a closed-book split's search, as the run's log and its summary both say it."""
    if predictions is None:
        return "not searched (no --prediction-folder to keep its rankings)"
    return f"searched, the top {kept} of each of its {queries} queries saved in {predictions}"


def _how_to_submit(task: HookedRetrievalTask, prediction_folder: Path | None) -> str:
    entry = getattr(task, "entry", None)
    if not isinstance(entry, AirBenchEntry) or entry.data_dir is not None:
        return "score it where its qrels are available"
    if prediction_folder is None:
        return "rerun with --prediction-folder P (and --overwrite-strategy always) to keep its rankings"
    return (f"airbench-mteb package-submission --predictions {prediction_folder} --out DIR, "
            "then upload the zip to the AIR-Bench leaderboard")


def search_split(task: HookedRetrievalTask, model: Any, data_split: Any, *, hf_split: str, hf_subset: str,
                 encode_kwargs: Any, num_proc: int | None = None) -> dict[str, dict[str, float]]:
    """Every query of a split searched to the task's depth (max(k_values), or the depth convert_to_reranking
    asked for), as MTEB's search would, without scoring: ``{query_id: {doc_id: score}}``."""
    search = as_search_model(model)
    context = {"task_metadata": task.metadata, "hf_split": hf_split, "hf_subset": hf_subset,
               "encode_kwargs": encode_kwargs, "num_proc": num_proc}
    search.index(data_split["corpus"], **context)
    return search.search(data_split["queries"], top_k=task.search_depth, top_ranked=data_split["top_ranked"],
                         **context)


def retrieve_only(task: HookedRetrievalTask, model: Any, data_split: Any, *, hf_split: str, hf_subset: str, encode_kwargs: Any,
                  prediction_folder: Path | None = None, num_proc: int | None = None) -> dict[str, Any]:
    """Search every query of a split without qrels, save the rankings, and return a scores dict without scores.

    Without ``prediction_folder`` nothing would keep the rankings, so the search is skipped. The
    depth recorded is the one kept: a re-ranker keeps its ``--rerank-top-k``, not the task's 1,000.
    """
    queries = data_split["queries"]
    where = f"{task.metadata.name} {hf_split}" + ("" if hf_subset == "default" else f" ({hf_subset})")
    saved, kept = None, 0
    if prediction_folder is not None:
        results = search_split(task, model, data_split, hf_split=hf_split, hf_subset=hf_subset,
                               encode_kwargs=encode_kwargs, num_proc=num_proc)
        task.save_predictions(results, model, prediction_folder, hf_subset=hf_subset, hf_split=hf_split)
        saved = str(task.predictions_path(prediction_folder))
        kept = max((len(docs) for docs in results.values()), default=0)
    hint = _how_to_submit(task, prediction_folder)
    logger.warning("%s: no qrels here, so no scores; %s. Next: %s", where, searched(kept, len(queries), saved), hint)
    return {
        task.metadata.main_score: float("nan"),
        CLOSED_BOOK: {"reason": "no qrels available locally", "queries": len(queries),
                      "top_k": kept, "predictions": saved, "next": hint},
    }
