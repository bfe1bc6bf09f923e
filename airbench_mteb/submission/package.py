"""``package-submission``: MTEB prediction files of AIR-Bench tasks -> a zip the AIR-Bench leaderboard accepts."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.data.predictions import Predictions, one_model, read_prediction_folder
from airbench_mteb.metrics.retrieval import ranking
from airbench_mteb.models.rerankers import split_reranked_name
from airbench_mteb.submission.datasets import leaderboard_entry, load_split
from airbench_mteb.submission.layout import NO_RERANKER, SearchResultsFile

RETRIEVER_TOP_K = 1000  # the official runner's search_top_k
RERANKER_TOP_K = 100  # ... and its rerank_top_k
_SHOWN_IDS = 5


def default_names(mteb_model_name: str) -> tuple[str, str]:
    """Leaderboard model and reranker names from an MTEB model name: the part after the organisation."""
    first_stage, reranker = split_reranked_name(mteb_model_name)
    return first_stage.rsplit("/", 1)[-1], reranker.rsplit("/", 1)[-1] if reranker else NO_RERANKER


def _top(run: dict[str, float], k: int) -> dict[str, float]:
    # Best first, ties cut as trec_eval orders them, so the metrics up to k do not change.
    return {doc: float(run[doc]) for doc in ranking(run)[:k]}


def _check_queries(prediction: Predictions, split: str, run: dict[str, Any], query_ids: list[str]) -> None:
    expected = set(query_ids)
    missing = [q for q in query_ids if q not in run]
    extra = [q for q in run if q not in expected]
    where = f"{prediction.task_name} {split}"
    if missing:
        raise DatasetError(f"{len(missing)} of the {len(query_ids)} queries of {where} have no search results "
                           f"(e.g. {missing[:_SHOWN_IDS]}); run the retriever on the whole split", path=prediction.path,
                           item_id=missing[0])
    if extra:
        raise DatasetError(f"{len(extra)} query ids are not queries of {where} (e.g. {extra[:_SHOWN_IDS]})",
                           path=prediction.path, item_id=extra[0])


def _check_names(model_name: str, reranker_name: str) -> None:
    for kind, name in (("model", model_name), ("reranker", reranker_name)):
        if not name or "/" in name or "\\" in name:
            raise ValueError(f"the {kind} name names the zip file and cannot be empty or hold a slash: {name!r}")


def submission_files(predictions: Path, *, model_name: str | None = None, reranker_name: str | None = None,
                     top_k: int | None = None) -> list[SearchResultsFile]:
    """The checked leaderboard files of every AIR-Bench prediction file in ``predictions``."""
    files = read_prediction_folder(predictions)
    entries = {}
    for prediction in files:
        entry = leaderboard_entry(prediction.task_name)
        if entry is None:
            raise DatasetError(f"{prediction.task_name} is not an AIR-Bench task; a leaderboard package holds only "
                               "AIR-Bench_24.04 / AIR-Bench_24.05 tasks", path=prediction.path)
        entries[prediction.path] = entry
    mteb_model_name, _ = one_model(files)
    first = files[0]
    for prediction in files[1:]:
        if entries[prediction.path].version != entries[first.path].version:
            raise DatasetError(f"two benchmark versions in one package: {entries[first.path].version} in "
                               f"{first.path.name}, {entries[prediction.path].version} here", path=prediction.path)
    default_model, default_reranker = default_names(mteb_model_name)
    model_name = model_name or default_model
    reranker_name = reranker_name or default_reranker
    _check_names(model_name, reranker_name)
    top_k = top_k or (RETRIEVER_TOP_K if reranker_name == NO_RERANKER else RERANKER_TOP_K)
    if top_k < 1:
        raise ValueError(f"top_k must be positive, got {top_k}")
    out = []
    for prediction in files:
        entry = entries[prediction.path]
        if set(prediction.runs) != {"default"}:
            raise DatasetError(f"expected the one subset 'default' of an AIR-Bench task, found {sorted(prediction.runs)}",
                               path=prediction.path)
        for split in sorted(prediction.runs["default"]):
            run = prediction.run("default", split)
            _check_queries(prediction, split, run, load_split(entry, split).query_ids)
            out.append(SearchResultsFile(
                model_name=model_name, reranker_name=reranker_name, benchmark_version=entry.version,
                task_type=entry.task_type, domain=entry.domain, language=entry.language, dataset_name=entry.dataset,
                split=split, search_results={qid: _top(docs, top_k) for qid, docs in run.items()}))
    return out


def package_submission(predictions: Path, out: Path, *, model_name: str | None = None,
                       reranker_name: str | None = None, top_k: int | None = None, overwrite: bool = False) -> Path:
    """Write ``<out>/<model>_<reranker>.zip`` from the prediction files in ``predictions``; returns its path.

    ``top_k`` defaults to 1,000 results per query for a retriever and 100 after a reranker. Raises
    :class:`DatasetError` for mixed models or versions, non-AIR-Bench tasks, missing or foreign
    query ids, or an existing zip (unless ``overwrite``).
    """
    files = submission_files(predictions, model_name=model_name, reranker_name=reranker_name, top_k=top_k)
    target = out / f"{files[0].model_name}_{files[0].reranker_name}.zip"
    if target.exists() and not overwrite:
        raise DatasetError("the package already exists; pass overwrite (--overwrite) to replace it", path=target)
    with atomic_write(target, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            archive.writestr(file.member_path, file.to_json())
    return target
