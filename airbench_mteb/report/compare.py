"""SSCI and RCCI between N models (IRSC seed, section 3.3) from their MTEB prediction files.

Each model's rankings are the files MTEB saves with ``prediction_folder=`` / ``--prediction-folder``
(:mod:`airbench_mteb.data.predictions`), one folder per model; the qrels come from the task
itself. Per task and subset every model has, :func:`compare_predictions` gives the N x N
matrices, with a bootstrap confidence interval over queries for every SSCI and RCCI cell and
RCCI's paired test (Holm-adjusted over the model pairs by default) unless told not to; the
:class:`Comparison` renders itself (:class:`~airbench_mteb.report.protocol.Report`),
:func:`write_comparison` writes it (CSV per matrix and per pair, ``comparison.json``, a Markdown
summary) and :func:`read_comparison` reads them back for the heatmap (those written with ``--no-ci``
included). Runs of one task and subset must cover the same queries, and are read as every reader of rankings reads
them (:func:`~airbench_mteb.data.predictions.check_rankings`: finite scores, queries of the split, documents of the
corpus).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.files import read_json
from airbench_mteb.data.predictions import (
    PREDICTIONS_SUFFIX,
    Predictions,
    check_rankings,
    check_same_data,
    one_model,
    read_predictions,
)
from airbench_mteb.metrics.pairwise import PairwiseComparison, Qrels, Run, compare_runs
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import Correction
from airbench_mteb.models.arguments import model_label
from airbench_mteb.report.pairwise_tables import legend, matrix_csv, matrix_markdown, pairs_csv, pairs_markdown
from airbench_mteb.report.protocol import write_report_files
from airbench_mteb.report.text_format import markdown_text

STEM = "comparison"
COMPARISON_FILE = f"{STEM}.json"


@dataclass(frozen=True)
class ModelPredictions:
    """One model's prediction files, by task."""

    model: str  # its label: the name and its arguments (models.arguments.model_label)
    folder: Path
    tasks: Mapping[str, Predictions]


@dataclass(frozen=True)
class Comparison:
    """SSCI/RCCI matrices per task and subset, with what was left out and why, and how their uncertainty was
    computed (``resampling`` None: without intervals and tests, or read back from a file, whose matrices each keep
    their own record)."""

    split: str
    depth: int
    matrices: Mapping[str, Mapping[str, PairwiseComparison]]  # task -> subset -> matrices
    notes: Sequence[str] = field(default_factory=tuple)
    resampling: Resampling | None = None
    correction: Correction = "holm"  # of RCCI's p-values over the model pairs of each matrix
    alpha: float = 0.05

    def to_json(self) -> dict[str, object]:
        return {"split": self.split, "depth": self.depth,
                "comparisons": {t: {s: c.to_json() for s, c in subsets.items()} for t, subsets in self.matrices.items()}}

    def to_markdown(self) -> str:
        sections = [f"# SSCI and RCCI (top {self.depth}, split {markdown_text(self.split)})", ""]
        for task, subsets in self.matrices.items():
            for subset, matrices in subsets.items():
                sections += [f"## {markdown_text(task)} / {markdown_text(subset)} ({matrices.num_queries} queries)",
                             "", matrix_markdown(matrices, "ssci", markdown_text), "",
                             matrix_markdown(matrices, "rcci", markdown_text), ""]
                if matrices.uncertainty is not None:
                    sections += [pairs_markdown(matrices, markdown_text), "", legend(matrices), ""]
        return "\n".join(sections)

    def csv_files(self) -> dict[str, str]:
        """``<task>/<subset>_{ssci,rcci}.csv`` (the N x N matrices) and ``<task>/<subset>_pairs.csv`` (one row per
        model pair, with the intervals and p-values when computed): their texts by path."""
        return {f"{task}/{subset}_{name}.csv": text for task, subsets in self.matrices.items()
                for subset, matrices in subsets.items()
                for name, text in (("ssci", matrix_csv(matrices, "ssci")), ("rcci", matrix_csv(matrices, "rcci")),
                                   ("pairs", pairs_csv(matrices)))}


def prediction_folders(paths: Sequence[Path]) -> list[Path]:
    """Each path is one model's prediction folder, or a folder of such folders (one per model)."""
    folders: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise DatasetError("prediction folder not found", path=path)
        if any(path.glob(f"*{PREDICTIONS_SUFFIX}")):
            folders.append(path)
            continue
        children = sorted(p for p in path.iterdir() if p.is_dir() and any(p.glob(f"*{PREDICTIONS_SUFFIX}")))
        if not children:
            raise DatasetError(f"no *{PREDICTIONS_SUFFIX} files here or in its subfolders", path=path)
        folders.extend(children)
    return folders


def read_model_predictions(folder: Path, tasks: Sequence[str] | None = None) -> ModelPredictions:
    """The prediction files of ``tasks`` (all if None) in one model's folder; two models in it are an error."""
    paths = sorted(folder.glob(f"*{PREDICTIONS_SUFFIX}"))
    files = [read_predictions(p) for p in paths if tasks is None or p.name.removesuffix(PREDICTIONS_SUFFIX) in tasks]
    if not files:
        raise DatasetError("no predictions of the requested tasks", path=folder)
    model, _ = one_model(files)
    return ModelPredictions(model_label(model, files[0].experiment_kwargs), folder, {f.task_name: f for f in files})


def _check_same_queries(task: str, subset: str, runs: Mapping[str, Run]) -> None:
    (first, reference), *others = runs.items()
    for model, run in others:
        if set(run) != set(reference):
            only_first = sorted(set(reference) - set(run))[:5]
            only_other = sorted(set(run) - set(reference))[:5]
            raise DatasetError(f"{task}/{subset}: the runs of {first!r} ({len(reference)} queries) and {model!r} "
                               f"({len(run)} queries) cover different queries (only in {first!r}: {only_first}; "
                               f"only in {model!r}: {only_other}); evaluate both on the same data before comparing")


@dataclass(frozen=True)
class TaskSplit:
    """What one task subset's split holds, as the task loads it: the rankings are checked against it."""

    query_ids: frozenset[str]
    qrels: Qrels
    corpus: Any  # a dict by id or a ``datasets`` corpus (data.arrow_corpus.unknown_ids reads both)


def task_split(task_name: str, subset: str, split: str, predictions: Sequence[Predictions] = ()) -> TaskSplit:
    """The queries, qrels and corpus of one task subset, loaded the way the task loads them (needs its data); each
    of ``predictions`` must come from the data the task reads now."""
    import mteb

    task = mteb.get_task(task_name)
    pin = getattr(task, "pin_data_revision", None)
    if pin is not None:  # plugin tasks know the fingerprint of what they read
        pin()
        for prediction in predictions:
            check_same_data(prediction, task.metadata.revision)
    loader = getattr(task, "load_split", None)
    if loader is not None:  # plugin tasks: no need to build MTEB datasets for the whole task
        data = loader(subset, split)
        return TaskSplit(frozenset(data.queries), data.qrels, data.corpus)
    task.load_data()
    data = task.dataset[subset][split]
    return TaskSplit(frozenset(map(str, data["queries"]["id"])), data["relevant_docs"], data["corpus"])


def compare_predictions(models: Sequence[ModelPredictions], split: str = "test", depth: int = 10,
                        resampling: Resampling | None = None, correction: Correction = "holm",
                        alpha: float = 0.05) -> Comparison:
    """SSCI/RCCI over the top ``depth`` per task and subset that every model has predictions of; with
    ``resampling`` their uncertainty too, RCCI's p-values adjusted by ``correction`` and judged at ``alpha``."""
    names = [m.model for m in models]
    if len(set(names)) != len(names):
        raise OptionError(f"the same model appears twice among the prediction folders (--predictions): {names}")
    if len(models) < 2:
        raise OptionError(f"comparing needs the predictions of at least two models (--predictions), got {names}")
    notes: list[str] = []
    matrices: dict[str, dict[str, PairwiseComparison]] = {}
    for task in sorted({t for m in models for t in m.tasks}):
        missing = [m.model for m in models if task not in m.tasks]
        if missing:
            notes.append(f"{task}: skipped, no predictions from {missing}")
            continue
        for subset in sorted({s for m in models for s in m.tasks[task].runs}):
            lacking = [m.model for m in models if split not in m.tasks[task].runs.get(subset, {})]
            if lacking:
                notes.append(f"{task}/{subset}: skipped, no {split} predictions from {lacking}")
                continue
            data = task_split(task, subset, split, [m.tasks[task] for m in models])
            runs = {m.model: check_rankings(m.tasks[task].run(subset, split), data.query_ids, data.corpus,
                                            path=m.tasks[task].path, label=f"{task} {split}", where=f"{subset}/{split}: ")
                    for m in models}
            _check_same_queries(task, subset, runs)
            queries = next(iter(runs.values()))
            qrels = data.qrels
            unjudged = sorted(set(queries) - set(qrels))[:5]
            if unjudged:
                raise DatasetError(f"{task}/{subset}: the runs answer queries the data has no qrels for "
                                   f"(e.g. {unjudged}); were they made from another build of the data?")
            judged = {q: docs for q, docs in qrels.items() if q in queries}
            matrices.setdefault(task, {})[subset] = compare_runs(runs, judged, depth, resampling, correction, alpha)
    if not matrices:
        raise DatasetError("nothing to compare: " + "; ".join(notes))
    return Comparison(split, depth, matrices, tuple(notes), resampling, correction, alpha)


def write_comparison(comparison: Comparison, out: Path) -> list[Path]:
    """``comparison.json``, ``comparison.md`` and the matrices' CSV files (:meth:`Comparison.csv_files`) under
    ``out``, all or none; returns their paths."""
    return write_report_files(comparison, out, STEM, comparison.csv_files())


def read_comparison(path: Path) -> Comparison:
    """``comparison.json`` (or the folder holding it) back into a :class:`Comparison`."""
    path = path / COMPARISON_FILE if path.is_dir() else path
    if not path.is_file():
        raise DatasetError(f"no {COMPARISON_FILE}: run `airbench-mteb compare --out DIR` first", path=path)
    data = read_json(path)
    where = "the file"
    try:
        matrices: dict[str, dict[str, PairwiseComparison]] = {}
        for task, subsets in data["comparisons"].items():
            for subset, found in subsets.items():
                where = f"{task}/{subset}"
                matrices.setdefault(task, {})[subset] = PairwiseComparison.from_json(found)
        return Comparison(data["split"], data["depth"], matrices)
    except KeyError as error:
        problem = f"no {error.args[0]!r} entry"
    except (TypeError, ValueError, AttributeError) as error:
        problem = str(error)
    raise DatasetError(f"not a comparison written by `airbench-mteb compare`: {where}: {problem}", path=path)
