"""The AIR-Bench leaderboard's file format: one JSON file of search results per dataset and split.

As written by the official ``air-benchmark`` runner (``Evaluator.save_search_results``) and
packed by its ``zip_results.py``: member ``<task_type>/<domain>/<language>_<dataset>_<split>.json``
of ``<model>_<reranker or NoReranker>.zip``, holding the fields of :data:`FIELDS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.predictions import DuplicateKeyError, loads_unique_keys
from airbench_mteb.whole_numbers import whole_number

NO_RERANKER = "NoReranker"
FIELDS = ("model_name", "reranker_name", "benchmark_version", "task_type", "domain", "language", "dataset_name",
          "split")
EXTRA_FIELDS = ("dataset_revision", "top_k")


@dataclass
class SearchResultsFile:
    """One dataset and split of a leaderboard package.

    ``dataset_revision`` and ``top_k`` are this plugin's additions (the leaderboard reads the fields
    above by name and ignores others): the fingerprint of the data the rankings were computed on, and
    the number of results kept per query. Files of the official scripts have neither.
    """

    model_name: str
    reranker_name: str
    benchmark_version: str
    task_type: str
    domain: str
    language: str
    dataset_name: str
    split: str
    search_results: dict[str, Any]  # {qid: {docid: score}} once submission.validate.check_run has passed it
    dataset_revision: str | None = None
    top_k: int | None = None

    @property
    def member_path(self) -> str:
        """Its path inside the zip (and below ``<results>/<model>/<reranker>`` on disk)."""
        return f"{self.task_type}/{self.domain}/{self.language}_{self.dataset_name}_{self.split}.json"

    def to_json(self) -> str:
        extras = {name: getattr(self, name) for name in EXTRA_FIELDS if getattr(self, name) is not None}
        # allow_nan=False: NaN and Infinity are not JSON, whatever Python's json would write
        return json.dumps({**{name: getattr(self, name) for name in FIELDS}, **extras,
                           "search_results": self.search_results}, ensure_ascii=False, allow_nan=False)


def parse_search_results(text: str | bytes, origin: str, member: str) -> SearchResultsFile:
    """Read one file's fields; ``origin`` (file or zip member) names it in errors, ``member`` is its
    path relative to the package root, which must agree with its fields. Its rankings are checked
    against the task's data by :func:`airbench_mteb.submission.validate.check_run`.

    Files from AIR-Bench 24.04 runs name the dataset ``task_name`` and have no split (it was test
    only); they are read as the official evaluator reads them.
    """
    try:
        data = loads_unique_keys(text)
    except DuplicateKeyError as error:
        raise DatasetError(str(error), path=origin, item_id=error.within) from None
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
    if not isinstance(data.get("search_results"), dict):
        raise DatasetError("field 'search_results' is missing or not an object {qid: {docid: score}}", path=origin)
    file = SearchResultsFile(**{name: data[name] for name in FIELDS}, search_results=data["search_results"],
                             **_extras(data, origin))
    if member != file.member_path:
        raise DatasetError(f"its fields place it at {file.member_path}, not at {member}", path=origin)
    return file


def _extras(data: dict[str, Any], origin: str) -> dict[str, Any]:
    revision, top_k = data.get("dataset_revision"), data.get("top_k")
    if revision is not None and (not isinstance(revision, str) or not revision):
        raise DatasetError(f"field 'dataset_revision' is {revision!r}, not a non-empty string", path=origin)
    if top_k is not None:
        whole = whole_number(top_k)  # 100.0 is 100
        if whole is None or whole < 1:
            raise DatasetError(f"field 'top_k' is {top_k!r}, not a positive integer", path=origin)
        top_k = whole
    return {"dataset_revision": revision, "top_k": top_k}
