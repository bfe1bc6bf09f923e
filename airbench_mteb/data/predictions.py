"""MTEB's prediction files (``--prediction-folder``): ``<task>_predictions.json`` holding
``{"mteb_model_meta": {"model_name", "revision"}, <subset>: {<split>: {qid: {docid: score}}}}``.
A model loaded with arguments (MTEB's ``experiment_kwargs``) has them in ``mteb_model_meta`` too, so the
rankings of a run with arguments are never taken for the default run's.

Files the plugin's tasks write also hold ``"dataset_revision"``: the fingerprint of the data the
rankings were computed on (the results' ``dataset_revision``). Whatever consumes rankings (re-ranking,
leaderboard packages, significance tests) checks it against the data it reads now.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airbench_mteb.data.arrow_corpus import unknown_ids
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.ir_types import Run

PREDICTIONS_SUFFIX = "_predictions.json"
MODEL_META_KEY = "mteb_model_meta"
DATASET_REVISION_KEY = "dataset_revision"
_NOT_SUBSETS = (MODEL_META_KEY, DATASET_REVISION_KEY)
SHOWN_IDS = 5  # ids quoted in an error; the count says how many there are


@dataclass
class Predictions:
    path: Path
    task_name: str
    model_name: str
    revision: str | None
    runs: dict[str, dict[str, Run]]  # subset -> split -> run
    dataset_revision: str | None = None  # None: written by an older version or by another tool
    experiment_kwargs: dict[str, Any] | None = None  # the model's loader arguments; None: its defaults

    @property
    def model(self) -> tuple[str, str | None, dict[str, Any]]:
        """Which model, revision and arguments made these rankings."""
        return self.model_name, self.revision, self.experiment_kwargs or {}

    def to_json(self) -> dict[str, Any]:
        """The file's content, as MTEB writes it plus the data fingerprint."""
        meta = {"model_name": self.model_name, "revision": self.revision}
        return {MODEL_META_KEY: {**meta, "experiment_kwargs": self.experiment_kwargs} if self.experiment_kwargs else meta,
                DATASET_REVISION_KEY: self.dataset_revision, **self.runs}

    def run(self, subset: str, split: str) -> Run:
        run = self.runs.get(subset, {}).get(split)
        if not isinstance(run, dict):
            raise DatasetError(f"no predictions for subset {subset!r}, split {split!r} (it has "
                               f"{ {s: sorted(v) for s, v in self.runs.items()} })", path=self.path)
        for qid, docs in run.items():
            if not isinstance(docs, dict):
                raise DatasetError(f"the predictions of a query in {subset}/{split} are not an object {{docid: score}}",
                                   path=self.path, item_id=qid)
        return run


class DuplicateKeyError(ValueError):
    """A JSON object holding one key twice (``json`` would keep the last value without a word)."""

    def __init__(self, key: str, within: str | None) -> None:
        self.key, self.within = key, within
        super().__init__(f"{key!r} appears twice in one JSON object (only one value can count)")


def _first_repeated(keys: list[str]) -> str:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    raise AssertionError("no repeated key")


def loads_unique_keys(text: str | bytes) -> Any:
    """``json.loads`` that raises :class:`DuplicateKeyError` for an object holding a key twice, naming the key
    and the key of the object that holds it (a query and its repeated document)."""
    pending: list[tuple[str, dict[str, Any]]] = []  # (repeated key, its object), until its parent is parsed

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if pending:
            key, child = pending[0]
            within = next((name for name, item in pairs if item is child), None)
            if within is not None:
                raise DuplicateKeyError(key, within)
        elif len(value) < len(pairs):
            pending.append((_first_repeated([name for name, _ in pairs]), value))
        return value

    value = json.loads(text, object_pairs_hook=unique)
    if pending:  # the top-level object, or one inside an array
        raise DuplicateKeyError(pending[0][0], within=None)
    return value


def predictions_path(folder: Path, task_name: str) -> Path:
    return folder / f"{task_name}{PREDICTIONS_SUFFIX}"


def read_predictions(path: Path) -> Predictions:
    try:
        data: Any = loads_unique_keys(path.read_text(encoding="utf-8"))
    except DuplicateKeyError as error:
        raise DatasetError(str(error), path=path, item_id=error.within) from None
    except FileNotFoundError:
        raise DatasetError("no prediction file of this task: run the first stage with --prediction-folder on it",
                           path=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"cannot read this prediction file: {error}", path=path) from None
    meta = data.get(MODEL_META_KEY) if isinstance(data, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("model_name"), str):
        raise DatasetError("not an MTEB prediction file (no mteb_model_meta.model_name)", path=path)
    runs = {subset: splits for subset, splits in data.items() if subset not in _NOT_SUBSETS}
    dataset_revision = data.get(DATASET_REVISION_KEY)
    if dataset_revision is not None and not isinstance(dataset_revision, str):
        raise DatasetError(f"{DATASET_REVISION_KEY} must be a string, got {dataset_revision!r}", path=path)
    for subset, splits in runs.items():
        if not isinstance(splits, dict):
            raise DatasetError(f"subset {subset!r} is not an object {{split: run}}", path=path)
    experiment = meta.get("experiment_kwargs")
    if experiment is not None and not isinstance(experiment, dict):
        raise DatasetError(f"mteb_model_meta.experiment_kwargs must be an object, got {experiment!r}", path=path)
    return Predictions(path=path, task_name=path.name.removesuffix(PREDICTIONS_SUFFIX), model_name=meta["model_name"],
                       revision=meta.get("revision"), runs=runs, dataset_revision=dataset_revision,
                       experiment_kwargs=experiment)


def read_prediction_folder(folder: Path) -> list[Predictions]:
    """Every prediction file of a folder, sorted by name; a folder without any is an error."""
    paths = sorted(folder.glob(f"*{PREDICTIONS_SUFFIX}")) if folder.is_dir() else []
    if not paths:
        raise DatasetError(f"no MTEB prediction files (*{PREDICTIONS_SUFFIX}); run mteb with --prediction-folder",
                           path=folder)
    return [read_predictions(p) for p in paths]


def one_model(predictions: list[Predictions]) -> tuple[str, str | None]:
    """The (model name, revision) all the files share; files of two models (or of one model with other
    arguments) are an error naming both."""
    first = predictions[0]
    for other in predictions[1:]:
        if other.model != first.model:
            raise DatasetError(f"predictions of two models in one folder: {first.model_name} ({first.revision}"
                               f"{_arguments(first)}) in {first.path.name}, {other.model_name} ({other.revision}"
                               f"{_arguments(other)}) here", path=other.path)
    return first.model_name, first.revision


def _arguments(predictions: Predictions) -> str:
    return f", arguments {predictions.experiment_kwargs}" if predictions.experiment_kwargs else ""


def check_same_data(predictions: Predictions, current_revision: str) -> None:
    """Refuse rankings computed on other data than the task reads now, naming both fingerprints."""
    if predictions.dataset_revision is None:
        raise DatasetError(f"these rankings of {predictions.task_name} do not say which data they were computed on "
                           f"(written by an older version or another tool; this run reads {current_revision!r}): "
                           "rerun the model with --prediction-folder", path=predictions.path)
    if predictions.dataset_revision != current_revision:
        raise DatasetError(f"these rankings of {predictions.task_name} were computed on other data (dataset revision "
                           f"{predictions.dataset_revision!r}); the task reads {current_revision!r} now: rerun the "
                           "model with --prediction-folder (and --overwrite-strategy always)", path=predictions.path)


def check_scores(run: Mapping[str, Any], *, path: str | Path, where: str = "") -> Run:
    """``run`` ({qid: {docid: score}}) if every query maps to an object and every score is a finite number;
    else a DatasetError naming the query and document, with the score as the file writes it (``NaN``,
    ``"0.5"``, ``null``, ``true``). Every reader of rankings reads them through this (:func:`check_rankings`;
    re-ranking, which then finds its candidates in the corpus itself)."""
    for qid, docs in run.items():
        if not isinstance(docs, dict):
            raise DatasetError(f"{where}the results of a query are {type(docs).__name__} {docs!r:.40}, not an "
                               "object {docid: score}", path=path, item_id=qid)
        for doc_id, score in docs.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise DatasetError(f"{where}document {doc_id!r} has score {json.dumps(score)}, not a finite number",
                                   path=path, item_id=qid)
    return dict(run)


def check_rankings(run: Mapping[str, Any], query_ids: Collection[str], corpus: Any, *, path: str | Path, label: str,
                   where: str = "") -> Run:
    """``run`` ({qid: {docid: score}}) read as every reader of rankings reads them (``compare``, leaderboard
    packages): every score a finite number (:func:`check_scores`), every query one of ``query_ids`` (the split's) and
    every document one of ``corpus`` (a dict by id or a ``datasets`` corpus); else a DatasetError naming the file
    (``path``) and the query at fault. ``label`` names the split in messages (``<task> <split>``)."""
    run = check_scores(run, path=path, where=where)
    expected = query_ids if isinstance(query_ids, set | frozenset | Mapping) else set(query_ids)
    foreign = [qid for qid in run if qid not in expected]
    if foreign:
        raise DatasetError(f"{where}{len(foreign)} query ids are not queries of {label} (first: "
                           f"{foreign[:SHOWN_IDS]})", path=path, item_id=foreign[0])
    unknown = unknown_ids(corpus, (doc for docs in run.values() for doc in docs))
    if unknown:
        qid, doc = next((q, d) for q, docs in run.items() for d in docs if d in unknown)
        raise DatasetError(f"{where}document {doc!r} is not in the corpus of {label} ({len(unknown)} unknown document "
                           f"ids in all, first: {sorted(unknown)[:SHOWN_IDS]})", path=path, item_id=qid)
    return run
