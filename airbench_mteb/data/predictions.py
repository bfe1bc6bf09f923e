"""MTEB's prediction files (``--prediction-folder``): ``<task>_predictions.json`` holding
``{"mteb_model_meta": {"model_name", "revision"}, <subset>: {<split>: {qid: {docid: score}}}}``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError

PREDICTIONS_SUFFIX = "_predictions.json"
Run = dict[str, dict[str, float]]


@dataclass
class Predictions:
    path: Path
    task_name: str
    model_name: str
    revision: str | None
    runs: dict[str, dict[str, Run]]  # subset -> split -> run

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


def predictions_path(folder: Path, task_name: str) -> Path:
    return folder / f"{task_name}{PREDICTIONS_SUFFIX}"


def read_predictions(path: Path) -> Predictions:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError("no prediction file of this task: run the first stage with --prediction-folder on it",
                           path=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"cannot read this prediction file: {error}", path=path) from None
    meta = data.get("mteb_model_meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("model_name"), str):
        raise DatasetError("not an MTEB prediction file (no mteb_model_meta.model_name)", path=path)
    runs = {subset: splits for subset, splits in data.items() if subset != "mteb_model_meta"}
    for subset, splits in runs.items():
        if not isinstance(splits, dict):
            raise DatasetError(f"subset {subset!r} is not an object {{split: run}}", path=path)
    return Predictions(path=path, task_name=path.name.removesuffix(PREDICTIONS_SUFFIX), model_name=meta["model_name"],
                       revision=meta.get("revision"), runs=runs)


def read_prediction_folder(folder: Path) -> list[Predictions]:
    """Every prediction file of a folder, sorted by name; a folder without any is an error."""
    paths = sorted(folder.glob(f"*{PREDICTIONS_SUFFIX}")) if folder.is_dir() else []
    if not paths:
        raise DatasetError(f"no MTEB prediction files (*{PREDICTIONS_SUFFIX}); run mteb with --prediction-folder",
                           path=folder)
    return [read_predictions(p) for p in paths]


def one_model(predictions: list[Predictions]) -> tuple[str, str | None]:
    """The (model name, revision) all the files share; files of two models are an error naming both."""
    first = predictions[0]
    for other in predictions[1:]:
        if (other.model_name, other.revision) != (first.model_name, first.revision):
            raise DatasetError(f"predictions of two models in one folder: {first.model_name} ({first.revision}) in "
                               f"{first.path.name}, {other.model_name} ({other.revision}) here", path=other.path)
    return first.model_name, first.revision
