"""The AIR-Bench leaderboard's file format: one JSON file of search results per dataset and split.

As written by the official ``air-benchmark`` runner (``Evaluator.save_search_results``) and
packed by its ``zip_results.py``: member ``<task_type>/<domain>/<language>_<dataset>_<split>.json``
of ``<model>_<reranker or NoReranker>.zip``, holding the fields of :data:`FIELDS`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from airbench_mteb.data.errors import DatasetError

NO_RERANKER = "NoReranker"
FIELDS = ("model_name", "reranker_name", "benchmark_version", "task_type", "domain", "language", "dataset_name",
          "split")
Run = dict[str, dict[str, float]]


@dataclass
class SearchResultsFile:
    """One dataset and split of a leaderboard package."""

    model_name: str
    reranker_name: str
    benchmark_version: str
    task_type: str
    domain: str
    language: str
    dataset_name: str
    split: str
    search_results: Run

    @property
    def member_path(self) -> str:
        """Its path inside the zip (and below ``<results>/<model>/<reranker>`` on disk)."""
        return f"{self.task_type}/{self.domain}/{self.language}_{self.dataset_name}_{self.split}.json"

    def to_json(self) -> str:
        return json.dumps({**{name: getattr(self, name) for name in FIELDS}, "search_results": self.search_results},
                          ensure_ascii=False)


def parse_search_results(text: str | bytes, origin: str, member: str) -> SearchResultsFile:
    """Read and check one file; ``origin`` (file or zip member) names it in errors, ``member`` is its
    path relative to the package root, which must agree with its fields.

    Files from AIR-Bench 24.04 runs name the dataset ``task_name`` and have no split (it was test
    only); they are read as the official evaluator reads them.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DatasetError(f"not a JSON file: {error}", path=origin) from None
    if not isinstance(data, dict):
        raise DatasetError("a search-results file holds a JSON object", path=origin)
    if "dataset_name" not in data and "task_name" in data:
        data["dataset_name"] = data["task_name"]
    if "split" not in data and data.get("benchmark_version") == "AIR-Bench_24.04":
        data["split"] = "test"
    for name in FIELDS:
        if not isinstance(data.get(name), str) or not data[name]:
            raise DatasetError(f"field {name!r} is missing or not a non-empty string", path=origin)
    file = SearchResultsFile(**{name: data[name] for name in FIELDS}, search_results=_run(data.get("search_results"), origin))
    if member != file.member_path:
        raise DatasetError(f"its fields place it at {file.member_path}, not at {member}", path=origin)
    return file


def _run(value: Any, origin: str) -> Run:
    if not isinstance(value, dict):
        raise DatasetError("field 'search_results' is missing or not an object {qid: {docid: score}}", path=origin)
    for qid, docs in value.items():
        if not isinstance(docs, dict):
            raise DatasetError("search results of a query are not an object {docid: score}", path=origin, item_id=qid)
        for doc_id, score in docs.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise DatasetError(f"document {doc_id!r} has score {score!r}, not a finite number", path=origin,
                                   item_id=qid)
    return value
