"""``package-submission``: MTEB prediction files of AIR-Bench tasks -> a zip the AIR-Bench leaderboard accepts."""

from __future__ import annotations

import zipfile
from pathlib import Path

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.data.predictions import Predictions, check_same_data, one_model, read_prediction_folder
from airbench_mteb.metrics.retrieval import ranking
from airbench_mteb.names import split_reranked_name
from airbench_mteb.submission.datasets import LeaderboardTask, leaderboard_entry
from airbench_mteb.submission.layout import NO_RERANKER, SearchResultsFile
from airbench_mteb.submission.validate import check_file, check_test_present

RETRIEVER_TOP_K = 1000  # the official runner's search_top_k
RERANKER_TOP_K = 100  # ... and its rerank_top_k


def default_names(mteb_model_name: str) -> tuple[str, str]:
    """Leaderboard model and reranker names from an MTEB model name: the part after the organisation."""
    first_stage, reranker = split_reranked_name(mteb_model_name)
    return first_stage.rsplit("/", 1)[-1], reranker.rsplit("/", 1)[-1] if reranker else NO_RERANKER


def _top(run: dict[str, float], k: int) -> dict[str, float]:
    # Best first, ties cut as trec_eval orders them, so the metrics up to k do not change.
    return {doc: float(run[doc]) for doc in ranking(run)[:k]}


def _check_name(kind: str, name: str) -> None:
    if not name or any(c in name for c in "/\\") or not name.isprintable():
        raise DatasetError(f"the {kind} name {name!r} names the zip file <model>_<reranker>.zip: it cannot be empty "
                           "or hold a slash, a backslash or a control character", item_id=name)


def _entry(prediction: Predictions) -> AirBenchEntry:
    entry = leaderboard_entry(prediction.task_name)
    if entry is None:
        raise DatasetError(f"{prediction.task_name} is not an AIR-Bench task; a leaderboard package holds only "
                           "AIR-Bench_24.04 / AIR-Bench_24.05 tasks", path=prediction.path)
    if set(prediction.runs) != {"default"}:
        raise DatasetError(f"expected the one subset 'default' of an AIR-Bench task, found {sorted(prediction.runs)}",
                           path=prediction.path)
    return entry


def _splits(prediction: Predictions, entry: AirBenchEntry, dev_only: bool) -> list[str]:
    splits = sorted(s for s in prediction.runs["default"] if s == "dev" or not dev_only)
    if not splits:
        raise DatasetError(f"no dev rankings of {prediction.task_name} to package with --dev-only (it has "
                           f"{sorted(prediction.runs['default'])})", path=prediction.path)
    check_test_present(entry, splits, prediction.path, dev_only=dev_only)
    return splits


def _one_version(files: list[Predictions], entries: dict[Path, AirBenchEntry]) -> None:
    first = files[0]
    for prediction in files[1:]:
        if entries[prediction.path].version != entries[first.path].version:
            raise DatasetError(f"two benchmark versions in one package: {entries[first.path].version} in "
                               f"{first.path.name}, {entries[prediction.path].version} here", path=prediction.path)


def submission_files(predictions: Path, *, model_name: str | None = None, reranker_name: str | None = None,
                     top_k: int | None = None, dev_only: bool = False) -> list[SearchResultsFile]:
    """The checked leaderboard files of every AIR-Bench prediction file in ``predictions``."""
    files = read_prediction_folder(predictions)
    entries = {prediction.path: _entry(prediction) for prediction in files}
    _one_version(files, entries)
    default_model, default_reranker = default_names(one_model(files)[0])
    model_name = default_model if model_name is None else model_name
    reranker_name = default_reranker if reranker_name is None else reranker_name
    _check_name("model", model_name)
    _check_name("reranker", reranker_name)
    if top_k is None:
        top_k = RETRIEVER_TOP_K if reranker_name == NO_RERANKER else RERANKER_TOP_K
    if top_k < 1:
        raise OptionError(f"top_k must be a positive number of results per query, got {top_k}")
    splits = {prediction.path: _splits(prediction, entries[prediction.path], dev_only) for prediction in files}
    out = []
    for prediction in files:
        entry = entries[prediction.path]
        task = LeaderboardTask(entry, splits[prediction.path])
        check_same_data(prediction, task.revision)
        for split in splits[prediction.path]:
            file = SearchResultsFile(
                model_name=model_name, reranker_name=reranker_name, benchmark_version=entry.version,
                task_type=entry.task_type, domain=entry.domain, language=entry.language, dataset_name=entry.dataset,
                split=split, search_results=prediction.run("default", split), dataset_revision=task.revision)
            check_file(file, task, prediction.path)
            file.search_results = {qid: _top(docs, top_k) for qid, docs in file.search_results.items()}
            file.top_k = top_k
            out.append(file)
    return out


def package_submission(predictions: Path, out: Path, *, model_name: str | None = None,
                       reranker_name: str | None = None, top_k: int | None = None, overwrite: bool = False,
                       dev_only: bool = False) -> Path:
    """Write ``<out>/<model>_<reranker>.zip`` from the prediction files in ``predictions``; returns its path.

    ``top_k`` defaults to 1,000 results per query for a retriever and 100 after a reranker; each member
    records it and the data fingerprint its rankings were computed on. ``dev_only`` packages the dev
    rankings only (a package for checking, not for the leaderboard, which scores test). Raises
    :class:`OptionError` for an ``out`` that is a file or an existing zip (unless ``overwrite``), and
    :class:`DatasetError` for anything the leaderboard would read otherwise than ``mteb run`` scored
    (see :mod:`airbench_mteb.submission.validate`), rankings of other data, mixed models or versions,
    or non-AIR-Bench tasks.
    """
    if out.exists() and not out.is_dir():
        raise OptionError(f"{out}: the output folder of the zip (--out) is a file, not a folder")
    files = submission_files(predictions, model_name=model_name, reranker_name=reranker_name, top_k=top_k,
                             dev_only=dev_only)
    target = out / f"{files[0].model_name}_{files[0].reranker_name}.zip"
    if target.exists() and not overwrite:
        raise OptionError(f"{target}: the package already exists; pass overwrite (--overwrite) to replace it")
    with atomic_write(target, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            archive.writestr(file.member_path, file.to_json())
    return target
