"""``score-submission``: check a leaderboard package (zip or folder) as the leaderboard will read it, and score
one split of it against the local qrels, as ``mteb run`` does."""

from __future__ import annotations

import logging
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.metrics.retrieval import evaluate_run
from airbench_mteb.submission.datasets import LeaderboardTask, entry_of
from airbench_mteb.submission.layout import SearchResultsFile, parse_search_results
from airbench_mteb.submission.validate import check_file, check_members, check_one_submission, check_test_present

logger = logging.getLogger(__name__)
_ZIP_MAGIC = b"PK"


@dataclass
class SubmissionScore:
    task_name: str
    split: str
    member: str
    main_score: str
    scores: dict[str, float]


def read_package(path: Path) -> list[SearchResultsFile]:
    """Every search-results file of a zip, or of a folder laid out like one (``<task_type>/<domain>/*.json``)."""
    files = [parse_search_results(text, origin, member) for member, origin, text in _members(path)]
    if not files:
        raise DatasetError("no search-results files (<task_type>/<domain>/<language>_<dataset>_<split>.json)",
                           path=path)
    check_one_submission(files, path)
    return files


def _members(path: Path) -> Iterator[tuple[str, str, bytes]]:
    if not path.exists():
        raise DatasetError("not found: give a package zip or the folder holding <task_type>/<domain>/", path=path)
    try:
        if path.is_dir():
            for file in sorted(path.glob("*/*/*.json")):
                yield file.relative_to(path).as_posix(), str(file), file.read_bytes()
        elif path.is_file():  # never opened otherwise: reading a FIFO would wait for a writer
            yield from _zip_members(path)
        else:
            raise DatasetError("neither a zip file nor a folder", path=path)
    except OSError as error:
        raise DatasetError(f"cannot read it: {error.strerror or error}", path=error.filename or path) from None


def _zip_members(path: Path) -> Iterator[tuple[str, str, bytes]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            check_members(names, path)
            for name in sorted(n for n in names if n.endswith(".json")):
                yield name, f"{path}:{name}", archive.read(name)
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        raise DatasetError(_not_a_zip(path, error), path=path) from None


def _not_a_zip(path: Path, error: BaseException) -> str:
    """A file that starts as a zip does but cannot be read is damaged (truncated, say); any other is no zip."""
    with path.open("rb") as handle:
        starts_as_zip = handle.read(len(_ZIP_MAGIC)) == _ZIP_MAGIC
    return f"a damaged zip file ({error})" if starts_as_zip else "neither a zip file nor a folder"


def _entry(file: SearchResultsFile, path: Path) -> AirBenchEntry:
    entry = entry_of(file.benchmark_version, file.task_type, file.domain, file.language, file.dataset_name)
    if entry is None:
        raise DatasetError(f"{file.benchmark_version} has no {file.task_type} dataset {file.dataset_name!r} in "
                           f"domain {file.domain!r}, language {file.language!r}", path=f"{path}:{file.member_path}")
    return entry


def _tasks(files: list[SearchResultsFile], path: Path, dev_only: bool) -> dict[str, LeaderboardTask]:
    """The task of every member (by member path), each task opened once for all its splits in the package."""
    entries = {file.member_path: _entry(file, path) for file in files}
    splits: dict[str, list[str]] = {}
    for file in files:
        splits.setdefault(entries[file.member_path].task_name, []).append(file.split)
    tasks = {}
    for entry in entries.values():
        if entry.task_name not in tasks:
            check_test_present(entry, splits[entry.task_name], path, dev_only=dev_only)
            tasks[entry.task_name] = LeaderboardTask(entry, splits[entry.task_name])
    return {member: tasks[entry.task_name] for member, entry in entries.items()}


def score_submission(path: Path, split: str = "dev", *, dev_only: bool = False) -> list[SubmissionScore]:
    """Check every file of the package (:mod:`airbench_mteb.submission.validate`), then MTEB's retrieval scores
    (the task's cut-offs and settings) of its ``split`` files over all the queries of that split.

    A package without test files is refused unless ``dev_only``; a ``split`` whose qrels are not available
    locally, or that the package does not hold, raises.
    """
    files = read_package(path)
    tasks = _tasks(files, path, dev_only)
    unrecorded = 0
    for file in files:
        check_file(file, tasks[file.member_path], f"{path}:{file.member_path}")
        unrecorded += file.dataset_revision is None
    if unrecorded:
        logger.warning("%s: %d of %d files do not say which data they were computed on (made by the official "
                       "scripts?); scored as they are", path, unrecorded, len(files))
    chosen = [f for f in files if f.split == split]
    if not chosen:
        raise DatasetError(f"holds no {split} files (its splits: {', '.join(sorted({f.split for f in files}))})",
                           path=path)
    return [_score(file, tasks[file.member_path], f"{path}:{file.member_path}") for file in chosen]


def _score(file: SearchResultsFile, task: LeaderboardTask, origin: str) -> SubmissionScore:
    qrels = task.split(file.split).qrels
    if not qrels:
        raise DatasetError(f"no local qrels for {task.entry.task_name} {file.split}: only the leaderboard can score it",
                           path=origin)
    mteb_task = task.task
    scores = evaluate_run(qrels, file.search_results, mteb_task.k_values,
                          ignore_identical_ids=mteb_task.ignore_identical_ids)
    return SubmissionScore(task_name=task.entry.task_name, split=file.split, member=file.member_path,
                           main_score=mteb_task.metadata.main_score, scores=scores)
