"""`airbench-mteb compare` (SSCI/RCCI of N models).

``compare`` reads the per-query rankings MTEB saves with ``prediction_folder=`` /
``--prediction-folder`` (``<folder>/<Task>_predictions.json``: ``{"mteb_model_meta": {...},
<subset>: {<split>: {query id: {doc id: score}}}}``), one folder per model, and writes per task
and subset the N x N SSCI and RCCI matrices (CSV), all of them in ``comparison.json`` and a
Markdown summary. Runs of one task and subset must cover the same queries.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.metrics.pairwise import PairwiseComparison, Qrels, Run, compare_runs

PREDICTIONS_SUFFIX = "_predictions.json"
COMPARISON_FILE = "comparison.json"


# ---------------------------------------------------------------- compare

@dataclass
class ModelPredictions:
    model: str
    folder: Path
    runs: dict[str, dict[str, dict[str, Run]]]  # task -> subset -> split -> run


def prediction_folders(paths: list[Path]) -> list[Path]:
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


def read_predictions(folder: Path, tasks: list[str] | None = None) -> ModelPredictions:
    model: str | None = None
    runs: dict[str, dict[str, dict[str, Run]]] = {}
    for path in sorted(folder.glob(f"*{PREDICTIONS_SUFFIX}")):
        task = path.name[: -len(PREDICTIONS_SUFFIX)]
        if tasks is not None and task not in tasks:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise DatasetError(f"malformed JSON ({error.msg})", path=path, line=error.lineno) from None
        name = (data.get("mteb_model_meta") or {}).get("model_name")
        if not name:
            raise DatasetError("no mteb_model_meta.model_name: not an MTEB predictions file", path=path)
        if model is not None and name != model:
            raise DatasetError(f"holds predictions of {name!r}, but this folder's other files are of {model!r}; "
                               "use one prediction folder per model", path=path)
        model = name
        runs[task] = {subset: splits for subset, splits in data.items() if subset != "mteb_model_meta"}
    if model is None:
        raise DatasetError("no predictions of the requested tasks", path=folder)
    return ModelPredictions(model, folder, runs)


def _check_same_queries(task: str, subset: str, runs: Mapping[str, Run]) -> None:
    (first, reference), *others = runs.items()
    for model, run in others:
        if set(run) != set(reference):
            only_first = sorted(set(reference) - set(run))[:5]
            only_other = sorted(set(run) - set(reference))[:5]
            raise DatasetError(f"{task}/{subset}: the runs of {first!r} ({len(reference)} queries) and {model!r} "
                               f"({len(run)} queries) cover different queries (only in {first!r}: {only_first}; "
                               f"only in {model!r}: {only_other}); evaluate both on the same data before comparing")


def task_qrels(task_name: str, subset: str, split: str) -> Qrels:
    """The qrels of one task subset, loaded the way the task loads them (needs its data)."""
    import mteb

    task = mteb.get_task(task_name)
    loader = getattr(task, "load_split", None)
    if loader is not None:  # plugin tasks: no need to build MTEB datasets for the whole task
        return loader(subset, split).qrels
    task.load_data()
    return task.dataset[subset][split]["relevant_docs"]


def compare_predictions(models: list[ModelPredictions], split: str = "test", depth: int = 10,
                        qrels_of: Callable[[str, str, str], Qrels] = task_qrels,
                        ) -> tuple[dict[str, dict[str, PairwiseComparison]], list[str]]:
    """SSCI/RCCI per task and subset that every model has; also the notes on what was left out."""
    names = [m.model for m in models]
    if len(set(names)) != len(names):
        raise DatasetError(f"the same model appears twice among the prediction folders: {names}")
    if len(models) < 2:
        raise DatasetError(f"comparing needs the predictions of at least two models, got {names}")
    notes: list[str] = []
    results: dict[str, dict[str, PairwiseComparison]] = {}
    all_tasks = sorted({t for m in models for t in m.runs})
    for task in all_tasks:
        missing = [m.model for m in models if task not in m.runs]
        if missing:
            notes.append(f"{task}: skipped, no predictions from {missing}")
            continue
        subsets = sorted({s for m in models for s in m.runs[task]})
        for subset in subsets:
            lacking = [m.model for m in models if split not in m.runs[task].get(subset, {})]
            if lacking:
                notes.append(f"{task}/{subset}: skipped, no {split} predictions from {lacking}")
                continue
            runs = {m.model: m.runs[task][subset][split] for m in models}
            _check_same_queries(task, subset, runs)
            qrels = qrels_of(task, subset, split)
            unjudged = sorted(set(next(iter(runs.values()))) - set(qrels))[:5]
            if unjudged:
                raise DatasetError(f"{task}/{subset}: the runs answer queries the data has no qrels for "
                                   f"(e.g. {unjudged}); were they made from another build of the data?")
            judged = {q: docs for q, docs in qrels.items() if q in next(iter(runs.values()))}
            results.setdefault(task, {})[subset] = compare_runs(runs, judged, depth)
    if not results:
        raise DatasetError("nothing to compare: " + "; ".join(notes))
    return results, notes


def write_comparison(results: Mapping[str, Mapping[str, PairwiseComparison]], out: Path, split: str,
                     depth: int) -> list[Path]:
    written = []
    for task, subsets in results.items():
        for subset, comparison in subsets.items():
            for index in ("ssci", "rcci"):
                path = out / task / f"{subset}_{index}.csv"
                with atomic_write(path) as handle:
                    handle.write(comparison.to_csv(index))
                written.append(path)
    payload = {"split": split, "depth": depth,
               "comparisons": {t: {s: c.to_dict() for s, c in subsets.items()} for t, subsets in results.items()}}
    with atomic_write(out / COMPARISON_FILE) as handle:
        handle.write(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    sections = [f"# SSCI and RCCI (top {depth}, split {split})", ""]
    for task, subsets in results.items():
        for subset, comparison in subsets.items():
            sections += [f"## {task} / {subset} ({comparison.num_queries} queries)", "",
                         comparison.to_markdown("ssci"), "", comparison.to_markdown("rcci"), ""]
    with atomic_write(out / "comparison.md") as handle:
        handle.write("\n".join(sections))
    return [out / COMPARISON_FILE, out / "comparison.md", *written]


def read_comparison(path: Path) -> dict[str, dict[str, PairwiseComparison]]:
    """``comparison.json`` (or the folder holding it) back into comparison objects."""
    path = path / COMPARISON_FILE if path.is_dir() else path
    if not path.is_file():
        raise DatasetError(f"no {COMPARISON_FILE}: run `airbench-mteb compare --out DIR` first", path=path)
    data = json.loads(path.read_text(encoding="utf-8"))
    return {task: {subset: PairwiseComparison.from_dict(c) for subset, c in subsets.items()}
            for task, subsets in data["comparisons"].items()}


def compare(args: argparse.Namespace) -> int:
    from airbench_mteb.commands.run import apply_data_dir

    apply_data_dir(args)
    models = [read_predictions(folder, args.tasks) for folder in prediction_folders(args.predictions)]
    results, notes = compare_predictions(models, split=args.split, depth=args.depth)
    for note in notes:
        print(note, file=sys.stderr)
    for path in write_comparison(results, args.out, args.split, args.depth):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    from airbench_mteb.commands.run import add_data_dir_argument

    comparer = subparsers.add_parser(
        "compare", help="SSCI and RCCI between models from their MTEB prediction files",
        description="Reads <Task>_predictions.json of each model (mteb run --prediction-folder), loads the qrels "
                    "from the task data and writes N x N SSCI/RCCI matrices per task and subset.")
    comparer.add_argument("--predictions", type=Path, nargs="+", required=True,
                          help="one prediction folder per model, or a folder of such folders")
    comparer.add_argument("--out", type=Path, required=True)
    comparer.add_argument("--tasks", nargs="*", default=None, help="only these tasks")
    comparer.add_argument("--split", default="test")
    comparer.add_argument("--depth", type=int, default=10, help="ranks compared per query (n + 1)")
    add_data_dir_argument(comparer)
    comparer.set_defaults(func=compare)
