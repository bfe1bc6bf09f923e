"""Per-query scores kept beside a results file, and the one rule by which every report trusts them.

The file's format and its writer are :mod:`airbench_mteb.data.per_query`. A report trusts a per-query file only as
far as it reproduces the results file beside it: it must be of that result's model (its name, and its revision where
``model_meta.json`` records one), task and data, and hold scores of every split and subset the results file scored
(:func:`read_kept_file`: a report never leaves out a subset whose file disagrees); on every split and subset read
(:func:`held_scores`), its digest must be the one the results' score dict records (``per_query_sha256``: any edit is
refused, even one that keeps every mean, such as two queries' values swapped), no query may be scored twice, each
metric's values must be finite and average to the results' score (to within half a unit of the last decimal MTEB
keeps of that metric, :func:`~airbench_mteb.metrics.per_query.stored_decimals`, plus 1e-9), and a mixed subset's
per-source vectors must score the same queries. Anything else is a :class:`DatasetError` naming the file, in the
same one line whichever command reads it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.per_query import DIGEST_KEY, RERUN_HINT, KeptScores, QueryScores, per_query_path, read_kept
from airbench_mteb.metrics.per_query import stored_decimals
from airbench_mteb.results.reading import ModelTaskResult
from airbench_mteb.tasks.closed_book import CLOSED_BOOK

_MATCH = 1e-9  # how far a per-query mean may be from its results score beyond that rounding


class NotKeptError(DatasetError):
    """A metric the per-query file keeps no values of (a report may show the score without an interval)."""


@dataclass(frozen=True)
class KeptFile:
    """The per-query scores kept beside one result (``path``), checked to be its model's, on its data."""

    found: ModelTaskResult
    record: KeptScores
    path: Path


def read_kept_file(found: ModelTaskResult) -> KeptFile:
    """The per-query scores kept beside ``found``'s results file, of its model, task and data.

    Raises:
        DatasetError: no such file, a malformed one, or one of another model, model revision, task or data.
    """
    path = per_query_path(found.path)
    kept = read_kept(path)
    expected = {"model": found.model, "model revision": found.meta_revision, "task": found.result.task_name}
    actual = {"model": kept.model_name, "model revision": kept.model_revision, "task": kept.task_name}
    for what, value in expected.items():
        if actual[what] != value and not (what == "model revision" and value is None):
            raise DatasetError(f"per-query scores of {what} {actual[what]!r}, but the results file beside them is "
                               f"of {value!r}: {RERUN_HINT}", path=path)
    if kept.dataset_revision != found.result.dataset_revision:
        raise DatasetError(f"per-query scores computed on other data ({kept.dataset_revision!r}) than the results "
                           f"file beside them ({found.result.dataset_revision!r}): {RERUN_HINT}", path=path)
    file = KeptFile(found, kept, path)
    for split, rows in found.result.scores.items():  # every report refuses a file whose subsets are not the results'
        for row in rows:
            if CLOSED_BOOK not in row:
                _subset_scores(file, split, row["hf_subset"])
    return file


def _subset_scores(kept: KeptFile, split: str, subset: str) -> QueryScores:
    """The kept scores of a split and subset the results file scored; their absence is a DatasetError naming the
    file (the results' subsets renamed, or scores of another run)."""
    scores = kept.record.scores.get(split, {}).get(subset)
    if scores is None:
        raise DatasetError(f"no per-query scores of {split}/{subset} for {kept.found.label} (its results file "
                           f"{kept.found.path} scored it): {RERUN_HINT}", path=kept.path)
    return scores


def held_scores(kept: KeptFile, split: str, subset: str, metrics: Sequence[str]) -> QueryScores:
    """The kept scores of ``metrics`` on one split and subset, held to their results file (module docstring).

    Raises:
        NotKeptError: a metric without per-query values.
        DatasetError: a closed-book split (searched, never scored), no kept scores of that split and subset, or
            scores that do not reproduce the results file; each names the file.
    """
    found, where = kept.found, f"{split}/{subset}"
    row = next(s for s in found.result.scores[split] if s["hf_subset"] == subset)
    if CLOSED_BOOK in row:
        raise DatasetError(f"{kept.record.task_name} {where} is closed-book for {found.label} (searched, not scored: "
                           "no qrels), so it has no per-query scores; compare a scored split", path=found.path)
    scores = _subset_scores(kept, split, subset)
    missing = [metric for metric in metrics if metric not in scores.metrics]
    if missing:
        raise NotKeptError(f"metric {missing[0]!r} has no per-query values for {kept.record.task_name} {where} "
                           f"(kept: {', '.join(scores.metrics)})", path=kept.path)
    _check_digest(scores, row, where, kept.path, found.path)
    twice = next((qid for qid, count in Counter(scores.query_ids).items() if count > 1), None)
    if twice is not None:
        raise DatasetError(f"query {twice!r} is scored twice in {where}: {RERUN_HINT}", path=kept.path)
    for metric in metrics:
        _check_values(scores, metric, where, kept.path)
        _check_mean(scores.metrics[metric], row.get(metric), metric, where, kept.path, found.path)
    for source, source_scores in scores.by_source.items():
        if source_scores.query_ids != scores.query_ids:
            raise DatasetError(f"per-query scores of source {source!r} ({where}/{source}) are of other queries than "
                               f"{where}'s ({len(source_scores.query_ids)} against {len(scores.query_ids)}): "
                               f"{RERUN_HINT}", path=kept.path)
        for metric in source_scores.metrics:
            _check_values(source_scores, metric, f"{where}/{source}", kept.path)
    return scores


def kept_vectors(found: ModelTaskResult, metric: str) -> list[np.ndarray] | None:
    """The per-query ``metric`` of every split and subset of ``found``'s scores, held to its results file; None
    where no per-query file is kept beside it, the file keeps no values of ``metric``, or a split and subset has
    fewer than two queries (no interval from them).

    Raises:
        DatasetError: a per-query file there that the results do not trust (:func:`held_scores`).
    """
    if not per_query_path(found.path).is_file():
        return None
    kept = read_kept_file(found)
    vectors = []
    for split, rows in found.result.scores.items():
        for row in rows:
            try:
                scores = held_scores(kept, split, row["hf_subset"], (metric,))
            except NotKeptError:
                return None
            if len(scores.query_ids) < 2:
                return None
            vectors.append(np.asarray(scores.metrics[metric], dtype=float))
    return vectors or None


def common_queries(where: str, scores: Mapping[str, QueryScores], kept: Mapping[str, KeptFile]) -> tuple[str, ...]:
    """The sorted query ids every model of ``scores`` (label -> its held scores on ``where``) scored.

    Raises:
        DatasetError: a query one model scored and another did not, naming both files: models are compared on the
            same queries, never with a value filled in.
    """
    (first, first_scores), *others = scores.items()
    for label, other in others:
        only = sorted(set(first_scores.query_ids) ^ set(other.query_ids))
        if only:
            holder = first if only[0] in first_scores.query_ids else label
            raise DatasetError(
                f"{where}: query {only[0]!r} is scored for {holder} only ({len(first_scores.query_ids)} queries in "
                f"{kept[first].path}, {len(other.query_ids)} in {kept[label].path}): models are compared on the "
                f"same queries; {RERUN_HINT}")
    return tuple(sorted(first_scores.query_ids))


def _check_digest(scores: QueryScores, row: Mapping[str, Any], where: str, path: Path, results_path: Path) -> None:
    """``scores`` (read from ``path``) are those the score dict ``row`` of ``results_path`` was written with: their
    digest (over every vector: each metric, tie-neutral ones included, and each source's) is its ``per_query_sha256``
    (every version that keeps per-query scores records it)."""
    recorded = row.get(DIGEST_KEY)
    if recorded is None:
        raise DatasetError(f"{where} of the results file {results_path} has no {DIGEST_KEY}: the file was edited; "
                           f"{RERUN_HINT}", path=path)
    if recorded != scores.digest():
        raise DatasetError(f"the per-query scores of {where} are not those the results file {results_path} was "
                           f"written with (their SHA-256 differs from its {DIGEST_KEY}): the file was edited or "
                           f"replaced; {RERUN_HINT}", path=path)


def _check_values(scores: QueryScores, metric: str, where: str, path: Path) -> None:
    values = scores.metrics[metric]
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise DatasetError(f"per-query {metric} of {where} is {values[bad[0]]} for query "
                           f"{scores.query_ids[bad[0]]!r}: every value must be a finite number; {RERUN_HINT}",
                           path=path)


def _check_mean(values: np.ndarray, score: Any, metric: str, where: str, path: Path, results_path: Path) -> None:
    """The per-query values average to the results' score (no query added, dropped or changed)."""
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise DatasetError(f"the results file {results_path} has no {metric} of {where} ({score!r}) to hold the "
                           f"per-query values to", path=path)
    mean = float(values.mean()) if values.size else math.nan
    rounding = 0.5 * 10.0**-stored_decimals(metric)  # the score is MTEB's mean rounded to that many decimals
    if not abs(mean - score) <= rounding + _MATCH:
        raise DatasetError(f"per-query {metric} of {where} average {mean!r} over {values.size} queries, but the "
                           f"results file {results_path} says {score!r}: {RERUN_HINT}", path=path)
