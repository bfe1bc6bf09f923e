"""IRSC plots and tables: SSCI heatmaps (paper Fig. 3/4), radar charts (Fig. 2), summary tables (Table 1).

``heatmap`` reads the output of ``airbench-mteb compare`` (:func:`airbench_mteb.report.compare.read_comparison`);
``radar`` and ``table`` read MTEB results (:func:`airbench_mteb.results.reading.read_results`).
One figure or table section per language setting (subset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from airbench_mteb.catalog.irsc import SETTINGS, irsc_catalog
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.metrics.pairwise import PairwiseComparison
from airbench_mteb.metrics.resampling import with_interval
from airbench_mteb.report import ReportRequest, register_plot
from airbench_mteb.report.compare import read_comparison
from airbench_mteb.report.figures import png, pyplot
from airbench_mteb.report.intervals import mean_interval, recorded_interval
from airbench_mteb.report.protocol import Extra, write_files
from airbench_mteb.results.reading import ModelTaskResult, read_results, selected, short_model

# Table 1 / Figure 2 of the paper: r@10, m@10 (MRR) and n@10; the radar plots their mean
SAVED = {"dpi": 130, "bbox_inches": "tight"}  # how each figure becomes its PNG
PAPER_METRICS = (("recall_at_10", "R@10"), ("mrr_at_10", "MRR@10"), ("ndcg_at_10", "nDCG@10"))
SETTING_TITLES = {"en": "English", "zh": "Chinese", "mixed": "Mixed-Language", "c2e": "C2E (Chinese queries, "
                  "English corpus)", "e2c": "E2C (English queries, Chinese corpus)"}

INTERVAL_NOTE = ("Brackets: the 95 % confidence interval of the score, a bootstrap over the task's queries "
                 "(method, resamples and seed: `ci_method`, `ci_n_resamples`, `ci_seed` in the results). "
                 "Two models whose intervals overlap may still differ: `airbench-mteb significance` tests the pair.")

Scores = dict[str, dict[str, dict[str, dict[str, float]]]]  # model -> task -> subset -> metric -> value


def task_labels() -> dict[str, str]:
    """IRSC task name -> short label, in the paper's order (Query, Title, Part, Keyword, Summary)."""
    return {entry.name: entry.label for entry in irsc_catalog().tasks}


def read_irsc_results(results: Path, models: Sequence[str] | None = None, tasks: Sequence[str] | None = None,
                      split: str = "test") -> Scores:
    """IRSC scores of the selected models and tasks on ``split``, by model label, task and subset."""
    wanted = [task for task in task_labels() if selected(task, tasks)]
    scores: Scores = {}
    for found in read_results(results, models, wanted).found:
        for entry in found.result.scores.get(split, []):
            scores.setdefault(found.label, {}).setdefault(found.result.task_name, {})[entry["hf_subset"]] = entry
    if not scores:
        raise DatasetError("no IRSC results (IRSC*Retrieval.json) for the selected models and tasks", path=results)
    return scores


def main_score_table(results: Path, models: Sequence[str], task_names: Sequence[str]) -> str:
    """Markdown, models x tasks: the main score (nDCG@10) averaged over the subsets, as MTEB's summary
    tables show it (``TaskResult.get_score``), and its mean over the tasks; rows in the order of ``models``.

    Each score shows its 95 % confidence interval in brackets when the results record one
    (:mod:`airbench_mteb.report.intervals`), e.g. ``0.7272 [0.70, 0.75]``.
    """
    position = {name: index for index, name in enumerate(models)}

    def row_order(found: ModelTaskResult) -> tuple[int, str]:
        return position.get(found.model, position.get(short_model(found.model), len(position))), found.label

    by_model: dict[str, dict[str, ModelTaskResult]] = {}
    for found in sorted(read_results(results, models, task_names).found, key=row_order):
        by_model.setdefault(found.label, {})[found.result.task_name] = found
    rows = [["Model", *[t.removeprefix("IRSC").removesuffix("Retrieval") for t in task_names], "Mean"]]
    for model, by_task in by_model.items():
        present = [by_task[t] for t in task_names if t in by_task]
        metric = _main_score(present[0].result.task_name) if present else None
        cells = [_score_cell([by_task[t]], metric) if t in by_task else "-" for t in task_names]
        rows.append([model, *cells, _score_cell(present, metric) if present else "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _main_score(task_name: str) -> str | None:
    """The task's main score name (the metric behind ``main_score``); None if mteb does not know the task here."""
    import mteb

    try:
        return mteb.get_task(task_name).metadata.main_score
    except KeyError:
        return None


def _score_cell(tasks: Sequence[ModelTaskResult], metric: str | None) -> str:
    """The mean over ``tasks`` of each one's main score, with its interval when there is one."""
    value = float(np.mean([found.result.get_score() for found in tasks]))
    return with_interval(value, None if metric is None else mean_interval(tasks, metric))


def _subsets(scores: Scores) -> list[str]:
    present = {s for tasks in scores.values() for subsets in tasks.values() for s in subsets}
    return [s for s in SETTINGS if s in present]


def _tasks_in(scores: Scores, subset: str) -> list[str]:
    return [t for t in task_labels() if any(subset in tasks.get(t, {}) for tasks in scores.values())]


def paper_average(entry: dict[str, float]) -> float:
    """The radar value of Fig. 2: mean of Recall@10, MRR@10 and nDCG@10."""
    return float(np.mean([entry[metric] for metric, _ in PAPER_METRICS]))


@register_plot("table")
def summary_tables(request: ReportRequest) -> list[Path]:
    """``irsc_tables.md``: per language, models x tasks with R@10 / MRR@10 / nDCG@10 and their mean;
    each score with its 95 % confidence interval over queries in brackets when the results record one."""
    scores = read_irsc_results(request.results_folder("table"), request.models, request.tasks)
    labels = task_labels()
    lines = ["# IRSC results", ""]
    for subset in _subsets(scores):
        tasks = _tasks_in(scores, subset)
        header = ["Model"] + [f"{labels[t]} {short}" for t in tasks for _, short in PAPER_METRICS] + ["Average"]
        lines += [f"## {SETTING_TITLES[subset]}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        for model in sorted(scores):
            cells, values = [], []
            for task in tasks:
                entry = scores[model].get(task, {}).get(subset)
                for metric, _ in PAPER_METRICS:
                    if entry is None:
                        cells.append("-")
                    else:
                        cells.append(with_interval(entry[metric], recorded_interval(entry, metric)))
                        values.append(entry[metric])
            average = f"{np.mean(values):.4f}" if values else "-"
            lines.append(f"| {short_model(model)} | " + " | ".join(cells) + f" | {average} |")
        lines.append("")
    if any(recorded_interval(entry, metric) for tasks in scores.values() for subsets in tasks.values()
           for entry in subsets.values() for metric, _ in PAPER_METRICS):
        lines += [INTERVAL_NOTE, ""]
    return write_files(request.out, {"irsc_tables.md": "\n".join(lines)})


@register_plot("radar")
def radar_charts(request: ReportRequest) -> list[Path]:
    """``irsc_radar_<subset>.png``: every model over the IRSC tasks, value = mean(R@10, MRR@10, nDCG@10).

    A setting with fewer than three tasks (e.g. Chinese built offline) gets grouped bars instead:
    a radar of two axes is a line and hides one model behind the other.
    """
    plt = pyplot()
    scores = read_irsc_results(request.results_folder("radar"), request.models, request.tasks)
    labels = task_labels()
    figures: dict[str, Extra] = {}
    for subset in _subsets(scores):
        tasks = _tasks_in(scores, subset)
        values = {model: [paper_average(scores[model][t][subset]) if subset in scores[model].get(t, {}) else 0.0
                          for t in tasks] for model in sorted(scores)}
        if len(tasks) >= 3:
            figure, axis = plt.subplots(figsize=(5.5, 5.5), subplot_kw={"polar": True})
            angles = np.linspace(0, 2 * np.pi, len(tasks), endpoint=False).tolist()
            for model, row in values.items():
                axis.plot(angles + angles[:1], row + row[:1], linewidth=2, label=short_model(model))
                axis.fill(angles + angles[:1], row + row[:1], alpha=0.15)
            axis.set_xticks(angles)
            axis.set_xticklabels([labels[t] for t in tasks], fontsize=11)
            axis.set_yticks([0.2, 0.4, 0.6, 0.8, 1.0])
            axis.tick_params(axis="y", labelsize=8)
            axis.set_rlabel_position(180 / len(tasks))  # between the first two axes
            axis.yaxis.set_zorder(5)  # the scale stays readable where a model's line crosses it
            for tick in axis.get_yticklabels():
                tick.set_bbox({"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 0.5})
            legend = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.06)}
        else:
            figure, axis = plt.subplots(figsize=(5.5, 4))
            width = 0.8 / len(values)
            for offset, (model, row) in enumerate(values.items()):
                positions = np.arange(len(tasks)) + (offset - (len(values) - 1) / 2) * width
                bars = axis.bar(positions, row, width, label=short_model(model))
                axis.bar_label(bars, fmt="%.3f", fontsize=8)
            axis.set_xticks(range(len(tasks)), [labels[t] for t in tasks], fontsize=11)
            legend = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.1)}
        axis.set_ylim(0, 1)
        axis.set_title(f"IRSC {SETTING_TITLES[subset]}\nmean of R@10, MRR@10, nDCG@10", fontsize=11, pad=18)
        axis.legend(ncol=2, fontsize=9, frameon=False, **legend)
        figures[f"irsc_radar_{subset}.png"] = png(figure, **SAVED)
    return write_files(request.out, figures)


@dataclass(frozen=True)
class HeatmapPanel:
    """One task's SSCI matrix as drawn: the selected models, values, and (when computed) intervals and marks."""

    task: str
    models: list[str]
    ssci: np.ndarray
    low: np.ndarray | None  # SSCI interval bounds
    high: np.ndarray | None
    not_significant: np.ndarray | None  # off-diagonal cells whose RCCI is not significant after correction

    def label(self, row: int, col: int) -> str:
        """The cell's text: SSCI, its interval on a second line, and a dagger when the pair's RCCI is not significant."""
        text = f"{self.ssci[row, col]:.3f}"
        if self.low is not None and self.high is not None and row != col:
            text += f"\n[{self.low[row, col]:.2f}, {self.high[row, col]:.2f}]"
        return text + ("†" if self.not_significant is not None and self.not_significant[row, col] else "")


def heatmap_panel(task: str, comparison: PairwiseComparison, models: Sequence[str] | None) -> HeatmapPanel:
    """The panel of ``comparison`` restricted to the selected ``models`` (all when None)."""
    keep = [i for i, m in enumerate(comparison.models) if selected(m, models)]
    cells = np.ix_(keep, keep)
    uncertainty = comparison.uncertainty
    if uncertainty is None:
        return HeatmapPanel(task, [comparison.models[i] for i in keep], comparison.ssci[cells], None, None, None)
    not_significant = ~uncertainty.rcci_significant()[cells]
    np.fill_diagonal(not_significant, False)
    return HeatmapPanel(task, [comparison.models[i] for i in keep], comparison.ssci[cells], uncertainty.ssci_low[cells],
                        uncertainty.ssci_high[cells], not_significant)


def heatmap_legend(comparisons: Sequence[PairwiseComparison]) -> str:
    """The figure's second title line saying what the brackets and marks mean; empty without uncertainty."""
    found = [c.uncertainty for c in comparisons if c.uncertainty is not None]
    if not found:
        return ""
    first = found[0]
    return (f"[ ]: {first.resampling.level:.0%} bootstrap CI over queries · † hatched: RCCI not significant "
            f"({first.correction.capitalize()}-adjusted sign-flip test, p ≥ {first.alpha})")


@register_plot("heatmap")
def ssci_heatmaps(request: ReportRequest) -> list[Path]:
    """``irsc_ssci_<subset>.png``: one SSCI matrix per task (blue: models agree, red: they diverge).

    When the comparison holds its uncertainty, each cell also shows its confidence interval, and a
    pair whose RCCI is not significant (neither model finds the first correct document earlier
    beyond chance) is hatched and marked with a dagger.
    """
    if request.predictions is None:
        raise OptionError("the heatmap reads `airbench-mteb compare` output: give its folder (--predictions)")
    comparisons = read_comparison(request.predictions).matrices
    labels = task_labels()
    plt = pyplot()
    figures: dict[str, Extra] = {}
    for subset in SETTINGS:
        tasks = [t for t in labels if subset in comparisons.get(t, {}) and selected(t, request.tasks)]
        if not tasks:
            continue
        shown = [heatmap_panel(task, comparisons[task][subset], request.models) for task in tasks]
        top = max(float(panel.ssci.max()) for panel in shown) or 1.0
        size = max(len(panel.models) for panel in shown)
        figure, axes = plt.subplots(1, len(shown), figsize=(1.2 + (1.1 + 0.9 * size) * len(shown), 1.6 + 0.9 * size),
                                    squeeze=False)
        for column, (axis, panel) in enumerate(zip(axes[0], shown, strict=True)):
            image = axis.imshow(panel.ssci, cmap="coolwarm", vmin=0, vmax=top)
            names = [short_model(m) for m in panel.models]
            axis.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=9)
            # model names on the first matrix only: the rows are the same models in every panel
            axis.set_yticks(range(len(names)), names if column == 0 else [""] * len(names), fontsize=9)
            for (row, col), value in np.ndenumerate(panel.ssci):
                axis.text(col, row, panel.label(row, col), ha="center", va="center",
                          fontsize=9 if panel.low is None else 7, color="white" if value > 0.6 * top else "black")
                if panel.not_significant is not None and panel.not_significant[row, col]:
                    axis.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, hatch="///",
                                                 edgecolor="dimgrey", linewidth=0))
            axis.set_title(f"{labels[panel.task]} ({comparisons[panel.task][subset].num_queries} q)", fontsize=10)
        figure.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="SSCI")
        legend = heatmap_legend([comparisons[task][subset] for task in tasks])
        figure.suptitle(f"SSCI, IRSC {SETTING_TITLES[subset]} (smaller = more consistent)"
                        + (f"\n{legend}" if legend else ""), fontsize=11 if not legend else 9)
        figures[f"irsc_ssci_{subset}.png"] = png(figure, **SAVED)
    if not figures:
        raise DatasetError("the comparison has no IRSC task for the selected tasks", path=request.predictions)
    return write_files(request.out, figures)
