"""The one validator of leaderboard packages: what ``package-submission`` writes and ``score-submission``
reads pass the same checks, made as the AIR-Bench leaderboard will read the files.

The leaderboard (air-benchmark's ``Evaluator.evaluate_results``, run by its backend on the unzipped
package) reads each ``<task_type>/<domain>/*.json`` of the test split by field name, ignoring other
fields, and scores ``search_results`` with pytrec_eval over the queries the file holds: a query left
out is skipped rather than counted as a miss, which raises the mean. Hence the checks:

- every query of the split has results (``{}`` for a query nothing was found for) and no query id
  belongs to another split;
- every score is a finite number (no NaN, infinity, bool, string or null), every document is listed
  once per query (a repeated JSON key is refused when the file is read) and is an id of the corpus;
- no query has more results than the ``top_k`` the file records as kept;
- a zip holds each member once; a package holds one model, reranker and benchmark version;
- the rankings were computed on the data the task reads now (``dataset_revision``, when recorded);
- every dataset with a test split has its test file, unless the package is declared dev-only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Any

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.predictions import SHOWN_IDS, check_rankings, check_scores
from airbench_mteb.ir_types import Run
from airbench_mteb.submission.datasets import LeaderboardTask, SplitData
from airbench_mteb.submission.layout import SearchResultsFile


def check_file(file: SearchResultsFile, task: LeaderboardTask, origin: str | Path) -> None:
    """One file as the leaderboard will score it: computed on the task's data as it is now (when the file
    says which data), and its rankings (:func:`check_run`) against its split."""
    if file.dataset_revision is not None and file.dataset_revision != task.revision:
        raise DatasetError(f"these rankings of {task.entry.task_name} were computed on other data (dataset revision "
                           f"{file.dataset_revision!r}); the task reads {task.revision!r} now: rerun the model with "
                           "--prediction-folder and package again", path=origin)
    check_run(file.search_results, task.split(file.split), origin, top_k=file.top_k)


def check_run(run: dict[str, Any], split: SplitData, origin: str | Path, *, top_k: int | None = None) -> Run:
    """``run`` ({qid: {docid: score}}) if the leaderboard would score it as ``mteb run`` scores the split: read as
    every reader of rankings reads them (:func:`~airbench_mteb.data.predictions.check_rankings`), and every query of
    the split ranked; else a :class:`DatasetError` naming the query and document at fault."""
    check_scores(run, path=origin)
    missing = [q for q in split.query_ids if q not in run]  # first: rankings of another split lack them all
    if missing:
        raise DatasetError(f"{len(missing)} of the {len(split.query_ids)} queries of {split.label} have no search "
                           f"results (first: {missing[:SHOWN_IDS]}); rank every query of the split ({{}} for a query "
                           "nothing was found for)", path=origin, item_id=missing[0])
    check_rankings(run, split.query_ids, split.corpus, path=origin, label=split.label)
    if top_k is not None:
        _check_depth(run, top_k, origin)
    return run


def _check_depth(run: dict[str, Any], top_k: int, origin: str | Path) -> None:
    for qid, docs in run.items():
        if len(docs) > top_k:
            raise DatasetError(f"{len(docs)} results, more than the top_k {top_k} the file records as kept",
                               path=origin, item_id=qid)


def check_members(names: list[str], origin: Path) -> None:
    """A zip lists each member once: unzipped, a second copy would replace the first; read, both would count."""
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise DatasetError(f"member {repeated[0]} is in the zip {Counter(names)[repeated[0]]} times "
                           f"({len(repeated)} repeated member names); zip each file once", path=origin)


def check_one_submission(files: list[SearchResultsFile], origin: Path) -> None:
    """One model, reranker and benchmark version per package (the leaderboard files it under one of each)."""
    first = files[0]
    for file in files[1:]:
        if (file.model_name, file.reranker_name, file.benchmark_version) != (
                first.model_name, first.reranker_name, first.benchmark_version):
            raise DatasetError(f"one package holds one model, reranker and version: {file.member_path} says "
                               f"{file.model_name}/{file.reranker_name}/{file.benchmark_version}, "
                               f"{first.member_path} {first.model_name}/{first.reranker_name}/{first.benchmark_version}",
                               path=origin)


def check_test_present(entry: AirBenchEntry, splits: Collection[str], origin: str | Path, *, dev_only: bool) -> None:
    """The leaderboard scores test only: a dataset with a test split needs its test rankings, unless the package
    is declared dev-only (``--dev-only``: for checking on dev, not for the leaderboard)."""
    if dev_only or "test" not in entry.splits or "test" in splits:
        return
    raise DatasetError(f"no test rankings of {entry.task_name}, and the leaderboard scores test only: rank its test "
                       "split too (--eval-splits dev test), or pass --dev-only for a package that is not for the "
                       "leaderboard", path=origin)
