"""The result files the AIR-Bench leaderboard app itself reads, one per retriever and reranker.

The app (``AIR-Bench/leaderboard``, ``src/loaders.py`` and ``src/models.py``) walks
``<eval_results>/<version>/`` for ``results*.json`` files; each is a list of items, one per task
type and metric: ``{"config": {retrieval_model, retrieval_model_link, reranking_model,
reranking_model_link, task, metric, timestamp, is_anonymous, revision}, "results": [{domain, lang,
dataset, value}]}`` with ``value`` the metric in 0-1. Its loader keeps one file per ``timestamp``
(two files with one timestamp hide each other), so every file here gets its own: the run's time
plus one second per row. ``revision`` (the app: the md5 of the submitted zip) is here the md5 of the
row's name and the data fingerprints of its results. Closed-book cells have no value and are left out.
A file's folders are its names as :func:`~airbench_mteb.data.folder_names.folder_name` maps them (a name is
never a path part), two rows sharing folders refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath
from typing import Any

from airbench_mteb.data.folder_names import check_distinct
from airbench_mteb.report.leaderboard.board import Leaderboard

EVAL_RESULTS = "eval_results"


def _rows(board: Leaderboard) -> list[tuple[str, str]]:
    return sorted({(row.retriever, row.reranker) for tabs in board.tabs.values() for tab in tabs.values()
                   for row in tab.rows})


def eval_result_files(board: Leaderboard, start: datetime) -> Iterator[tuple[PurePosixPath, list[dict[str, Any]]]]:
    """``(path under the output folder, content)`` of each row's result file; timestamps from ``start`` (UTC)."""
    start = start.astimezone(timezone.utc).replace(microsecond=0)
    rows = _rows(board)
    folders = check_distinct("rows (retriever / reranker)", rows)
    for i, (retriever, reranker) in enumerate(rows):
        moment = start + timedelta(seconds=i)
        items, tasks = [], set()
        for task_type, tabs in board.tabs.items():
            for metric, tab in tabs.items():
                row = next((r for r in tab.rows if (r.retriever, r.reranker) == (retriever, reranker)), None)
                results = [] if row is None else [
                    {"domain": c.domain, "lang": c.lang, "dataset": c.dataset, "value": cell.score}
                    for c in tab.columns if (cell := row.cells.get(c.name)) is not None and cell.score is not None]
                if results:
                    tasks |= {c.task for c in tab.columns if row is not None and c.name in row.cells}
                    items.append({"config": {"retrieval_model": retriever, "retrieval_model_link": "",
                                             "reranking_model": reranker, "reranking_model_link": "",
                                             "task": task_type, "metric": metric,
                                             "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                             "is_anonymous": False, "revision": ""},
                                  "results": results})
        if not items:
            continue
        revision = hashlib.md5(json.dumps([retriever, reranker, sorted((t, board.fingerprints.get(t, ""))
                                                                        for t in tasks)]).encode()).hexdigest()
        for item in items:
            item["config"]["revision"] = revision
        yield (PurePosixPath(EVAL_RESULTS, board.version, *folders[(retriever, reranker)],
                             f"results_{moment.strftime('%Y%m%d%H%M%S')}.json"), items)
