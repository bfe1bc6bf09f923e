"""``score-submission``: score a leaderboard package (zip or folder) against the local qrels, as ``mteb run`` does."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.metrics.retrieval import evaluate_run
from airbench_mteb.submission.datasets import entry_of, load_split
from airbench_mteb.submission.layout import SearchResultsFile, parse_search_results


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
    first = files[0]
    for file in files[1:]:
        if (file.model_name, file.reranker_name, file.benchmark_version) != (
                first.model_name, first.reranker_name, first.benchmark_version):
            raise DatasetError(f"one package holds one model, reranker and version: {file.member_path} says "
                               f"{file.model_name}/{file.reranker_name}/{file.benchmark_version}, "
                               f"{first.member_path} {first.model_name}/{first.reranker_name}/{first.benchmark_version}",
                               path=path)
    return files


def _members(path: Path) -> Iterator[tuple[str, str, bytes]]:
    if path.is_dir():
        for file in sorted(path.glob("*/*/*.json")):
            yield file.relative_to(path).as_posix(), str(file), file.read_bytes()
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in sorted(archive.namelist()):
                if name.endswith(".json"):
                    yield name, f"{path}:{name}", archive.read(name)
    else:
        raise DatasetError("neither a zip file nor a folder", path=path)


def score_submission(path: Path, split: str = "dev") -> list[SubmissionScore]:
    """MTEB's retrieval scores (the task's cut-offs and settings) of every ``split`` file of the package.

    Files of other splits are skipped; a ``split`` whose qrels are not available locally raises.
    """
    from mteb import get_task

    results = []
    for file in read_package(path):
        if file.split != split:
            continue
        entry = entry_of(file.benchmark_version, file.task_type, file.domain, file.language, file.dataset_name)
        if entry is None:
            raise DatasetError(f"{file.benchmark_version} has no {file.task_type} dataset {file.dataset_name!r} in "
                               f"domain {file.domain!r}, language {file.language!r}", path=f"{path}:{file.member_path}")
        qrels = load_split(entry, split).qrels
        if not qrels:
            raise DatasetError(f"no local qrels for {entry.task_name} {split}: only the leaderboard can score it",
                               path=f"{path}:{file.member_path}")
        task = get_task(entry.task_name)
        scores = evaluate_run(qrels, file.search_results, task.k_values, ignore_identical_ids=task.ignore_identical_ids)
        results.append(SubmissionScore(task_name=entry.task_name, split=split, member=file.member_path,
                                       main_score=task.metadata.main_score, scores=scores))
    return results
