"""Per-query scores kept beside MTEB's results file, tied to it by model, task, split, subset and data.

MTEB averages its per-query retrieval measures and drops them; a confidence interval or a paired test
between models needs them. A plugin task holds them in a :class:`PendingScores` while it is scored, and its
results writer (``tasks.base.PluginRetrievalTask.write_result``) calls :meth:`PendingScores.write` right after it
has written ``<results>/<model>/<revision>/<Task>.json``: the vectors go to ``<Task>.per_query.json.gz``
beside it. MTEB's ``ResultCache`` reads ``*.json`` files only, so it never takes this file for a
task result.

The file records the model (name and revision), the task and the data fingerprint the scores were
computed on (the results' ``dataset_revision``), and each split and subset's score dict in the results file
records the SHA-256 of its per-query scores (``per_query_sha256``, :meth:`QueryScores.digest`). This module holds
the format, its writer and :func:`read_kept` (the format's reader, which the writer uses to merge splits); a report
reads a per-query file only through :mod:`airbench_mteb.results.kept`, which holds it to its results file by all of
these, so vectors of another model, task or data, or edited ones, are never paired.
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
