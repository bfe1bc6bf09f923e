"""Per-query scores kept beside MTEB's results file, tied to it by model, task, split, subset and data.

MTEB averages its per-query retrieval measures and drops them; a confidence interval or a paired test
between models needs them. A plugin task holds them in a :class:`PendingScores` while it is scored, and its
results writer (``tasks.base.PluginRetrievalTask.write_result``) calls :meth:`PendingScores.write` right after it
has written ``<results>/<model>/<revision>/<Task>.json``: the vectors go to ``<Task>.per_query.json.gz``
beside it. MTEB's ``ResultCache`` reads ``*.json`` files only, so it never takes this file for a
task result.

The file records the model (name and revision), the task and the data fingerprint the scores were
computed on (the results' ``dataset_revision``); :func:`read_kept` checks all of them against the
results file it is read for, so vectors of another model, task or data are never paired.

Each split and subset's score dict in the results file also records the SHA-256 of its per-query scores
(``per_query_sha256``, :meth:`QueryScores.digest`), so :func:`check_bound` refuses any edit of them, even
one that keeps every mean (two queries' values swapped). Results written before the digest existed have
none: their per-query scores are accepted as before, held to the results only by their means; results of a
version that writes the digest (they carry ``judged_at_10``, ``ndcg_at_10_tie_neutral``) without one are refused.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write

logger = logging.getLogger(__name__)

PER_QUERY_SUFFIX = ".per_query.json.gz"
FORMAT = "airbench-mteb per-query scores"
FORMAT_VERSION = 1
RERUN_HINT = "rerun the model with --overwrite-strategy always (overwrite_strategy=\"always\") to keep them"
DIGEST_KEY = "per_query_sha256"  # in a split and subset's score dict: the digest of its per-query scores
# Keys only versions that write the digest write: a score dict with one of them and no digest lost it to an edit.
DIGEST_WRITERS_KEYS = ("ndcg_at_10_tie_neutral", "judged_at_10")


@dataclass(frozen=True)
class QueryScores:
    """One split and subset: a value per query and metric (``metrics[name][i]`` is ``query_ids[i]``'s),
    and for a co*cktail ``mixed`` subset the same per source target (``by_source``)."""

    query_ids: tuple[str, ...]
    metrics: Mapping[str, np.ndarray]
    by_source: Mapping[str, QueryScores] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, values in self.metrics.items():
            if len(values) != len(self.query_ids):
                raise ValueError(f"{name}: {len(values)} values for {len(self.query_ids)} queries")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"query_ids": list(self.query_ids),
                                "metrics": {name: np.asarray(values, dtype=float).tolist()
                                            for name, values in self.metrics.items()}}
        if self.by_source:
            data["by_source"] = {source: scores.to_json() for source, scores in self.by_source.items()}
        return data

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`to_json` (keys sorted; floats as Python writes them, which
        read back to the same floats), so the scores read from a file give the digest of those written."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @classmethod
    def from_json(cls, data: Any, path: Path, where: str) -> QueryScores:
        try:
            return cls(tuple(data["query_ids"]),
                       {name: np.asarray(values, dtype=float) for name, values in data["metrics"].items()},
                       {source: cls.from_json(scores, path, f"{where}/{source}")
                        for source, scores in data.get("by_source", {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise DatasetError(f"malformed per-query scores of {where} ({type(error).__name__}: {error})",
                               path=path) from None


@dataclass
class KeptScores:
    """Every kept vector of one model on one task: ``scores[split][subset]``."""

    model_name: str
    model_revision: str | None
    task_name: str
    dataset_revision: str
    scores: dict[str, dict[str, QueryScores]] = field(default_factory=dict)

    @property
    def identity(self) -> tuple[str, str | None, str, str]:
        return self.model_name, self.model_revision, self.task_name, self.dataset_revision

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "model_name": self.model_name,
                "model_revision": self.model_revision, "task_name": self.task_name,
                "dataset_revision": self.dataset_revision,
                "scores": {split: {subset: scores.to_json() for subset, scores in subsets.items()}
                           for split, subsets in self.scores.items()}}


def per_query_path(results_path: Path) -> Path:
    """``<Task>.per_query.json.gz`` beside ``<Task>.json``."""
    return results_path.with_name(results_path.name.removesuffix(".json") + PER_QUERY_SUFFIX)


class PendingScores:
    """The per-query scores of the evaluations in progress, until their results files are written.

    MTEB's results writer sees a result, not the task that computed it, so the task hands its vectors over
    through this object: :meth:`hold` while a split and subset is scored, :meth:`write` right after the results
    file is written. The plugin's task base class owns the one instance (``PluginRetrievalTask.pending_scores``).
    """

    def __init__(self) -> None:
        # (task name, dataset revision) -> the scores of the model evaluated last on it
        self._kept: dict[tuple[str, str], KeptScores] = {}

    def hold(self, model_name: str, model_revision: str | None, task_name: str, dataset_revision: str, split: str,
             subset: str, scores: QueryScores) -> None:
        """Hold the per-query scores of one split and subset until :meth:`write` writes them."""
        key = (task_name, dataset_revision)
        kept = self._kept.get(key)
        if kept is None or kept.identity != (model_name, model_revision, task_name, dataset_revision):
            kept = self._kept[key] = KeptScores(model_name, model_revision, task_name, dataset_revision)
        kept.scores.setdefault(split, {})[subset] = scores

    def write(self, task_name: str, dataset_revision: str, results_path: Path) -> Path | None:
        """Write the scores held for the results just written to ``results_path``; returns the file written.

        Splits kept earlier for the same model, task and data stay (MTEB merges a new split into the
        results file the same way); a file of another model revision or other data is replaced.
        """
        kept = self._kept.get((task_name, dataset_revision))
        folder = kept.model_name.replace("/", "__").replace(" ", "_") if kept else None
        if kept is None or folder not in results_path.parts:  # not scored here (cached, closed-book) or another model
            return None
        del self._kept[(task_name, dataset_revision)]
        path = per_query_path(results_path)
        if path.is_file():
            try:
                earlier = read_kept(path)
            except DatasetError as error:
                logger.warning("%s; replacing it", error)
            else:
                if earlier.identity == kept.identity:
                    for split, subsets in earlier.scores.items():
                        kept.scores[split] = {**subsets, **kept.scores.get(split, {})}
        payload = json.dumps(kept.to_json(), separators=(",", ":")).encode("utf-8")
        with atomic_write(path, "wb") as handle:
            handle.write(gzip.compress(payload, mtime=0))  # mtime 0: the same scores give the same bytes
        return path


def read_kept(path: Path) -> KeptScores:
    """The kept scores in ``path``; a missing or malformed file is a :class:`DatasetError` naming it."""
    if not path.is_file():
        raise DatasetError(f"no per-query scores kept (written by an older version, or removed): {RERUN_HINT}",
                           path=path)
    try:
        data = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"cannot read the per-query scores ({error}): {RERUN_HINT}", path=path) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DatasetError(f"not a per-query scores file (no \"format\": {FORMAT!r})", path=path)
    if data.get("version") != FORMAT_VERSION:
        raise DatasetError(f"per-query scores of format version {data.get('version')!r}; this version reads "
                           f"{FORMAT_VERSION}: {RERUN_HINT}", path=path)
    splits = data.get("scores")
    if not isinstance(splits, dict) or not all(isinstance(subsets, dict) for subsets in splits.values()):
        raise DatasetError("malformed per-query scores (\"scores\" is not {split: {subset: ...}})", path=path)
    return KeptScores(str(data.get("model_name")), data.get("model_revision"), str(data.get("task_name")),
                      str(data.get("dataset_revision")),
                      {split: {subset: QueryScores.from_json(scores, path, f"{split}/{subset}")
                               for subset, scores in subsets.items()} for split, subsets in splits.items()})


def check_bound(scores: QueryScores, row: Mapping[str, Any], where: str, path: Path, results_path: Path) -> None:
    """``scores`` (of ``where``, read from ``path``) are those the score dict ``row`` of ``results_path`` was
    written with: their digest (over every vector: each metric, tie-neutral ones included, and each source's) is
    the row's ``per_query_sha256``. A row without one binds nothing here when it was written before the digest
    existed (the caller holds those scores to the row's means); a row of a version that writes it
    (:data:`DIGEST_WRITERS_KEYS`) must have it.

    Raises:
        DatasetError: the digests differ, or the digest is missing from a row that must have one (the per-query
            file, or the results file, was edited or replaced).
    """
    recorded = row.get(DIGEST_KEY)
    if recorded is None and any(key in row for key in DIGEST_WRITERS_KEYS):
        written_by = next(key for key in DIGEST_WRITERS_KEYS if key in row)
        raise DatasetError(f"{where} of the results file {results_path} has no {DIGEST_KEY}, though it was written "
                           f"by a version that writes one (it has {written_by}): the file was edited; {RERUN_HINT}",
                           path=path)
    if recorded is not None and recorded != scores.digest():
        raise DatasetError(f"the per-query scores of {where} are not those the results file {results_path} was "
                           f"written with (their SHA-256 differs from its {DIGEST_KEY}): the file was edited or "
                           f"replaced; {RERUN_HINT}", path=path)


def read_kept_for(results_path: Path, model_name: str, model_revision: str | None, task_name: str,
                  dataset_revision: str) -> KeptScores:
    """The scores kept beside ``results_path``, checked to be of this model, task and data
    (``model_revision`` None: the revision is not known beside the results, only the folder ties it)."""
    path = per_query_path(results_path)
    kept = read_kept(path)
    expected = {"model": model_name, "model revision": model_revision, "task": task_name}
    found = {"model": kept.model_name, "model revision": kept.model_revision, "task": kept.task_name}
    for what, value in expected.items():
        if found[what] != value and not (what == "model revision" and value is None):
            raise DatasetError(f"per-query scores of {what} {found[what]!r}, but the results file beside them is "
                               f"of {value!r}: {RERUN_HINT}", path=path)
    if kept.dataset_revision != dataset_revision:
        raise DatasetError(f"per-query scores computed on other data ({kept.dataset_revision!r}) than the results "
                           f"file beside them ({dataset_revision!r}): {RERUN_HINT}", path=path)
    return kept

