"""`airbench-mteb report --plot bias`: ranking performance against source bias, as in Cocktail's Figure 1.

Reads MTEB results of source-bias tasks (``<results>/[results/]<model>/<revision>/<Task>.json``,
experiments included) and plots, for each model, NDCG@1 on the mixed corpus (every copy relevant,
the ``mixed`` setting's main score) against Relative Δ NDCG@1 from the same ranking: one small
point per dataset and one large point per model at its mean over datasets. Left of the dashed
line a model prefers LLM-generated text, right of it human-written text. Writes ``bias.png`` and
the plotted numbers as ``bias.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path

from airbench_mteb.data.files import atomic_write
from airbench_mteb.report import register_plot

MIXED = "mixed"
CUTOFF = 1  # the paper's headline cut-off


@dataclass(frozen=True)
class BiasPoint:
    """One model on one dataset: NDCG@k (mixed) and Relative Δ NDCG@k, both in percent."""

    model: str
    task: str
    split: str
    compared: str  # the source compared with the reference, e.g. "llm"
    ndcg: float
    relative_delta: float
    reference_share: float  # share of the reference source in the top k


def result_files(results: Path) -> Iterator[Path]:
    """Task result files under an MTEB results folder or a ResultCache root (holding ``results/``)."""
    root = results / "results" if (results / "results").is_dir() else results
    if not root.is_dir():
        raise SystemExit(f"report --plot bias: results folder {results} not found")
    yield from sorted(p for p in root.rglob("*.json") if p.name != "model_meta.json")


def model_label(result_file: Path) -> str:
    """The model's name (plus its experiment kwargs, e.g. BM25 parameters) from ``model_meta.json``."""
    meta_path = result_file.parent / "model_meta.json"
    if not meta_path.is_file():
        return result_file.parent.parent.name.replace("__", "/")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    kwargs = meta.get("experiment_kwargs") or {}
    suffix = f" ({', '.join(f'{k}={v}' for k, v in sorted(kwargs.items()))})" if kwargs else ""
    return f"{meta['name']}{suffix}"


def _preferred_split(task_name: str, splits: Sequence[str]) -> str:
    from airbench_mteb.data.cocktail_source import cocktail_entries

    paper = {e.task_name: e.paper_split for e in cocktail_entries()}.get(task_name)
    for split in (paper, "test"):
        if split in splits:
            return split
    return sorted(splits)[0]


def points_of(result_file: Path, k: int = CUTOFF) -> list[BiasPoint]:
    """The bias points of one result file: its ``mixed`` subset on the preferred split (none if absent)."""
    data = json.loads(result_file.read_text(encoding="utf-8"))
    scores = {split: rows for split, rows in data.get("scores", {}).items()
              if any(row.get("hf_subset") == MIXED and "source_bias" in row for row in rows)}
    if not scores:
        return []
    split = _preferred_split(data["task_name"], list(scores))
    mixed = next(row for row in scores[split] if row.get("hf_subset") == MIXED)
    bias = mixed["source_bias"]
    prefix = f"relative_delta_ndcg_at_{k}_"
    shares = [key for key in bias if key.startswith(f"share_at_{k}_")]
    compared = sorted(key.removeprefix(prefix) for key in bias if key.startswith(prefix))
    # the reference is the one source never compared with itself
    reference = next(key.removeprefix(f"share_at_{k}_") for key in shares
                     if key.removeprefix(f"share_at_{k}_") not in compared)
    model = model_label(result_file)
    return [BiasPoint(model=model if len(compared) == 1 else f"{model} vs {other}", task=data["task_name"],
                      split=split, compared=other, ndcg=100 * mixed[f"ndcg_at_{k}"],
                      relative_delta=bias[prefix + other], reference_share=bias[f"share_at_{k}_{reference}"])
            for other in compared]


def collect_points(results: Path, models: Sequence[str] | None = None,
                   tasks: Sequence[str] | None = None) -> list[BiasPoint]:
    """Every bias point under ``results``; the most recent file wins for a model, task and split."""
    latest: dict[tuple[str, str, str], tuple[float, BiasPoint]] = {}
    for path in result_files(results):
        for point in points_of(path):
            if tasks and point.task not in tasks:
                continue
            if models and not any(point.model == m or point.model.startswith(f"{m} ") for m in models):
                continue
            key = (point.model, point.task, point.compared)
            mtime = path.stat().st_mtime
            if key not in latest or mtime >= latest[key][0]:
                latest[key] = (mtime, point)
    return sorted((point for _, point in latest.values()), key=lambda p: (p.model, p.task))


def write_csv(points: Sequence[BiasPoint], path: Path) -> Path:
    with atomic_write(path) as handle:
        writer = csv.writer(handle)
        writer.writerow([f.name for f in fields(BiasPoint)])
        writer.writerows(astuple(point) for point in points)
    return path


def draw(points: Sequence[BiasPoint], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = sorted({p.model for p in points})
    colors = plt.get_cmap("tab10")
    figure, axes = plt.subplots(figsize=(7.5, 5.5), dpi=150)
    for index, model in enumerate(models):
        mine = [p for p in points if p.model == model]
        color = colors(index % 10)
        axes.scatter([p.relative_delta for p in mine], [p.ndcg for p in mine], s=18, alpha=0.45, color=color)
        mean_delta = sum(p.relative_delta for p in mine) / len(mine)
        mean_ndcg = sum(p.ndcg for p in mine) / len(mine)
        axes.scatter([mean_delta], [mean_ndcg], s=120, color=color, edgecolors="black", zorder=3,
                     label=f"{model} ({len(mine)} dataset{'s' * (len(mine) > 1)})")
        axes.annotate(model, (mean_delta, mean_ndcg), textcoords="offset points", xytext=(7, 6), fontsize=8)
    axes.axvline(0, color="grey", linestyle="--", linewidth=1)
    axes.set_xlabel(f"Relative Δ NDCG@{CUTOFF} (%)   ← prefers LLM-generated · prefers human-written →")
    axes.set_ylabel(f"NDCG@{CUTOFF} on the mixed corpus (%)")
    axes.set_title("Ranking performance vs source bias (large points: mean over datasets)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="best")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as handle:
        figure.savefig(handle, format="png")
    plt.close(figure)
    return path


@register_plot("bias")
def bias_plot(args: argparse.Namespace) -> list[Path]:
    """Plot NDCG@1 (mixed) against Relative Δ NDCG@1 for every model under ``args.results``."""
    results, out = Path(args.results), Path(args.out)
    points = collect_points(results, getattr(args, "models", None), getattr(args, "tasks", None))
    if not points:
        raise SystemExit(f"report --plot bias: no result of a source-bias task (a 'mixed' subset with source_bias "
                         f"scores) under {results}; run e.g. `airbench-mteb bias -m MODEL -t CocktailNFCorpus`")
    return [draw(points, out / "bias.png"), write_csv(points, out / "bias.csv")]
