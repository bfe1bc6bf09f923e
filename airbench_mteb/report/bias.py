"""`airbench-mteb report --plot bias`: ranking performance against source bias, as in Cocktail's Figure 1.

Reads MTEB results of source-bias tasks (:func:`airbench_mteb.results.reading.read_results`,
experiments included; the reference source is the one the task declares first) and plots, for
each model, NDCG@1 on the mixed corpus (every copy relevant, the ``mixed`` setting's main score)
against Relative Δ NDCG@1 from the same ranking: one small point per dataset and one large point
per model at its mean over datasets. Left of the dashed
line a model prefers LLM-generated text, right of it human-written text. A Relative Δ computed
with its uncertainty (:mod:`airbench_mteb.metrics.bias_uncertainty`) is drawn with its confidence
interval as a horizontal error bar, and beside it (hollow, its bar dashed) the tie-neutral Relative Δ (expected
over every order of exactly tied scores, with its interval) where the result has it. Writes ``bias.png`` and the
plotted numbers as ``bias.csv``; the CSV also holds each tie-neutral Δ's p-value, the conventional Δ with every
tie broken toward the reference and toward the compared source, and the share of queries whose top k such a tie
decides (:mod:`airbench_mteb.metrics.tie_neutral`).
"""

from __future__ import annotations

import csv
import functools
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.metrics.ndsr import ndsr_key
from airbench_mteb.metrics.source_bias import SourceBias, SourceScores, unflatten
from airbench_mteb.report import ReportRequest, register_plot
from airbench_mteb.report.figures import png, pyplot
from airbench_mteb.report.protocol import write_files
from airbench_mteb.results.reading import ModelTaskResult, read_results

if TYPE_CHECKING:
    from mteb.results import TaskResult

MIXED = "mixed"
CUTOFF = 1  # the paper's headline cut-off
SUMMARY_CUTOFFS = (1, 3, 5)  # the cut-offs of Cocktail's tables


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
    # the Relative Δ's confidence interval and "no bias" p-value; None in results written without them
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    delta_p_value: float | None = None
    # the same Δ expected over every order of exactly tied scores, with its interval and p-value; the
    # conventional Δ with every tie between sources broken toward the reference / toward the compared source;
    # the share of queries whose top k such a tie decides. None in results written without them.
    tie_neutral_delta: float | None = None
    tie_neutral_ci_low: float | None = None
    tie_neutral_ci_high: float | None = None
    tie_neutral_p_value: float | None = None
    delta_ties_to_reference: float | None = None
    delta_ties_to_compared: float | None = None
    tie_decided_share: float | None = None


def declared_reference_and_split(task_name: str) -> tuple[str, str | None] | None:
    """(reference source, paper split) of a source-bias task as its class declares them; None if mteb
    does not know the task here (e.g. a ``--sources`` folder evaluated in another process)."""
    import mteb

    from airbench_mteb.tasks.cocktail import CocktailTask, SourceBiasTask

    try:
        task = mteb.get_task(task_name)
    except KeyError:
        return None
    if not isinstance(task, SourceBiasTask):
        return None
    return task.sources[0][0], task.entry.paper_split if isinstance(task, CocktailTask) else None


def points_of(found: ModelTaskResult, reference: str | None = None, k: int = CUTOFF) -> list[BiasPoint]:
    """The bias points of one result: its ``mixed`` subset on the paper's split, else ``test`` (none if absent).

    The reference source is the one the task declares; ``reference`` names it for a task mteb
    does not know here.
    """
    result = found.result
    mixed = {split: row for split, rows in result.scores.items() for row in rows
             if row.get("hf_subset") == MIXED and _has_relative_delta(row.get("source_bias"))}
    if not mixed:
        return []
    declared = declared_reference_and_split(result.task_name)
    paper_split: str | None = None
    if declared is not None:
        reference, paper_split = declared
    elif reference is None:
        raise OptionError(f"{found.path}: {result.task_name} is not a source-bias task known here, so its reference "
                          "source is unknown; name it (--reference, e.g. human)")
    split = next((s for s in (paper_split, "test") if s in mixed), min(mixed))
    row = mixed[split]
    try:
        bias = unflatten(row["source_bias"], reference)
    except ValueError as error:
        raise DatasetError(f"{result.task_name}/{split}/{MIXED}: {error}", path=found.path) from None
    reference_share = bias.sources[reference].share[k]
    points = []
    for other in bias.compared:
        points.append(BiasPoint(
            model=found.label if len(bias.compared) == 1 else f"{found.label} vs {other}", task=result.task_name,
            split=split, compared=other, ndcg=100 * row[f"ndcg_at_{k}"],
            relative_delta=bias.sources[other].relative_delta["ndcg"][k], reference_share=reference_share,
            **_interval(bias.sources[other], k, "delta_"), **_ties(bias, other, k)))
    return points


def _interval(figures: SourceScores, k: int, prefix: str) -> dict[str, float]:
    uncertainty = figures.uncertainty.get("ndcg", {}).get(k)
    if uncertainty is None:
        return {}
    return {f"{prefix}ci_low": uncertainty.ci_low, f"{prefix}ci_high": uncertainty.ci_high,
            f"{prefix}p_value": uncertainty.p_value}


def _ties(bias: SourceBias, other: str, k: int) -> dict[str, float]:
    """A point's tie-neutral fields (none in results written without them)."""
    figures = bias.sources[other]
    fields: dict[str, float] = {}
    if figures.tie_neutral is not None:
        fields["tie_neutral_delta"] = figures.tie_neutral.relative_delta["ndcg"][k]
        fields.update(_interval(figures.tie_neutral, k, "tie_neutral_"))
    if figures.ties_to:
        fields["delta_ties_to_reference"] = figures.ties_to[bias.reference]["ndcg"][k]
        fields["delta_ties_to_compared"] = figures.ties_to[other]["ndcg"][k]
    if bias.ties is not None:
        fields["tie_decided_share"] = bias.ties.share(k)
    return fields


def collect_points(results: Path, models: Sequence[str] | None = None, tasks: Sequence[str] | None = None,
                   reference: str | None = None) -> list[BiasPoint]:
    """Every bias point under ``results`` (the latest result of a model on a task)."""
    points = [point for found in read_results(results, models, tasks).found for point in points_of(found, reference)]
    return sorted(points, key=lambda p: (p.model, p.task))


def bias_summary_table(result: TaskResult, sources: Sequence[str], cutoffs: Sequence[int] = SUMMARY_CUTOFFS) -> str:
    """Aligned text, one row per split and setting: NDCG@k, and for ``mixed`` the Relative Δ@k of each
    compared source (with its 95 % confidence interval when the results hold one, e.g. ``+6.2 [-5.4, +17.3]``)
    and the reference's share@k (``sources[0]`` is the reference); then :func:`tie_summary` and
    :func:`exposure_summary`. A split without qrels has no NDCG or Δ: its cells are empty."""
    reference, *others = sources
    header = ["task", "split", "setting", *(f"ndcg@{k}" for k in cutoffs),
              *(f"Δ{k}:{other}" for other in others for k in cutoffs), *(f"share@{k}:{reference}" for k in cutoffs)]
    rows = [header]
    for split, subsets in result.scores.items():
        for scores in subsets:
            bias = _bias_of(result, split, scores.get("source_bias"), sources)
            rows.append([result.task_name, split, scores["hf_subset"], *(_ndcg_cell(scores, k) for k in cutoffs),
                         *(_delta_cell(bias.sources[other], k) if bias else "" for other in others for k in cutoffs),
                         *(f"{bias.sources[reference].share[k]:.3f}" if bias else "" for k in cutoffs)])
    notes = [note for note in (tie_summary(result, sources, cutoffs), exposure_summary(result, sources, cutoffs)) if note]
    return "\n\n".join([_aligned(rows), *notes])


def _ndcg_cell(scores: Mapping[str, Any], k: int) -> str:
    value = scores.get(f"ndcg_at_{k}")
    return "" if value is None or math.isnan(value) else f"{100 * value:.1f}"


def _has_relative_delta(flat: Mapping[str, Any] | None) -> bool:
    """Whether ``source_bias`` scores hold the Relative Δ figures (not so without qrels: source exposure only)."""
    return bool(flat) and any(key.startswith("share_at_") for key in flat)


def _bias_of(result: TaskResult, split: str, flat: Mapping[str, Any] | None, sources: Sequence[str]) -> SourceBias | None:
    """:func:`_summary_bias` of scores that hold Relative Δ figures; None for others."""
    return _summary_bias(result, split, flat, sources) if _has_relative_delta(flat) else None


def exposure_summary(result: TaskResult, sources: Sequence[str], cutoffs: Sequence[int] = SUMMARY_CUTOFFS) -> str:
    """ΔNDSR@k (:mod:`airbench_mteb.metrics.ndsr`) of each compared source, with its t-test's p-value, in the
    paper's tie order and, where the results hold it, tie-neutral, per split of the ``mixed`` setting; empty for
    results written without it."""
    reference, *others = sources
    found = [(split, scores, flat) for split, subsets in result.scores.items() for scores in subsets
             if "ndsr_queries" in (flat := scores.get("source_bias") or {})]
    if not found:
        return ""
    neutral = all(ndsr_key(cutoffs[0], others[0], tie_neutral=True, delta=True) in flat for *_, flat in found)
    forms = (False, True) if neutral else (False,)
    rows = [["task", "split", "setting", *(f"ΔNDSR@{k}:{other}{' tie-neutral' * form}" for form in forms
                                           for other in others for k in cutoffs)]]
    rows += [[result.task_name, split, f"{scores['hf_subset']} ({flat['ndsr_queries']} queries)",
              *(_ndsr_cell(flat, k, other, form) for form in forms for other in others for k in cutoffs)]
             for split, scores, flat in found]
    legend = (f"ΔNDSR@k: normalized discounted source ratio of {reference} minus that of the compared source in the "
              f"top k (Huang et al., arXiv 2604.06163; no qrels needed; > 0 favours {reference}), p: one-sample "
              "t-test over queries; exact ties ranked by document id ascending, as that paper does (trec_eval, and "
              "the Relative Δ above: descending)")
    return "\n".join([_aligned(rows), legend + ("; tie-neutral: expected over every order of exactly tied scores"
                                                 if neutral else "")])


def _ndsr_cell(flat: Mapping[str, Any], k: int, source: str, tie_neutral: bool) -> str:
    key = ndsr_key(k, source, tie_neutral=tie_neutral, delta=True)
    if key not in flat:
        return ""
    p_value = flat[ndsr_key(k, source, tie_neutral=tie_neutral, delta=True, stat="p_value")]
    return f"{flat[key]:+.3f} (p {p_value:.2g})"


def _aligned(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


def tie_summary(result: TaskResult, sources: Sequence[str], cutoffs: Sequence[int] = SUMMARY_CUTOFFS) -> str:
    """The tie-neutral side of :func:`bias_summary_table` (empty for results written without it): per split of
    the ``mixed`` setting, each Relative Δ@k expected over every order of exactly tied scores (with its interval),
    the conventional Δ with every tie between sources broken toward the compared source and toward the
    reference, and how many queries' top k such a tie decides; then one line for each Δ whose tie-neutral value
    is further from the conventional one than half the conventional interval's width."""
    reference, *others = sources
    header = ["task", "split", "setting", *(f"Δ{k}:{other} tie-neutral" for other in others for k in cutoffs),
              *(f"Δ{k}:{other} by tie order" for other in others for k in cutoffs),
              *(f"tie-decided@{k}" for k in cutoffs)]
    rows, notes = [header], []
    for split, subsets in result.scores.items():
        for scores in subsets:
            bias = _bias_of(result, split, scores.get("source_bias"), sources)
            if bias is None or bias.ties is None or any(bias.sources[o].tie_neutral is None for o in others):
                continue
            ties = bias.ties
            rows.append([result.task_name, split, scores["hf_subset"],
                         *(_delta_cell(bias.sources[other].tie_neutral, k) for other in others for k in cutoffs),
                         *(f"{bias.sources[other].ties_to[other]['ndcg'][k]:+.1f} to "
                           f"{bias.sources[other].ties_to[reference]['ndcg'][k]:+.1f}" for other in others
                           for k in cutoffs),
                         *(f"{ties.decided[k]}/{ties.queries}" for k in cutoffs)])
            notes += [note for other in others for k in cutoffs
                      if (note := _tie_note(result.task_name, split, bias, other, k))]
    if len(rows) == 1:
        return ""
    legend = (f"tie-neutral: expected over every order of exactly tied scores; by tie order: the conventional Δ "
              f"with every tie between sources broken toward the compared source, and toward {reference}; "
              f"tie-decided@k: queries whose top k an exact tie between sources decides")
    return "\n".join([_aligned(rows), legend, *notes])


def _tie_note(task: str, split: str, bias: SourceBias, other: str, k: int) -> str:
    """One line when the tie-neutral Δ@k is further from the conventional Δ than half its interval's width."""
    figures = bias.sources[other]
    uncertainty = figures.uncertainty.get("ndcg", {}).get(k)
    if uncertainty is None or figures.tie_neutral is None or bias.ties is None:
        return ""
    conventional, neutral = figures.relative_delta["ndcg"][k], figures.tie_neutral.relative_delta["ndcg"][k]
    if abs(neutral - conventional) <= (uncertainty.ci_high - uncertainty.ci_low) / 2:
        return ""
    return (f"{task} {split}: ties decide the top {k} of {bias.ties.decided[k]} of {bias.ties.queries} queries; the "
            f"conventional Δ{k}:{other} {conventional:+.1f} depends on document ids (tie-neutral {neutral:+.1f}, "
            f"{figures.ties_to[other]['ndcg'][k]:+.1f} to {figures.ties_to[bias.reference]['ndcg'][k]:+.1f} "
            "over tie orders)")


def _summary_bias(result: TaskResult, split: str, flat: Mapping[str, Any], sources: Sequence[str]) -> SourceBias:
    """The source-bias scores of a result as labelled by ``sources``; results whose labels differ (written
    under another label -> corpus file mapping) are refused in one line, not read half."""
    try:
        bias = unflatten(flat, sources[0])
        missing = [source for source in sources if source not in bias.sources]
    except ValueError:
        missing = list(sources)
    if missing:
        raise DatasetError(f"{result.task_name}/{split}/{MIXED}: the results hold no scores of the sources "
                           f"{', '.join(missing)} (written under other source labels); recompute with "
                           "--overwrite-strategy always, or write to another --output-folder")
    return bias


def _delta_cell(figures: SourceScores, k: int) -> str:
    delta = f"{figures.relative_delta['ndcg'][k]:+.1f}"
    uncertainty = figures.uncertainty.get("ndcg", {}).get(k)
    return delta if uncertainty is None else f"{delta} [{uncertainty.ci_low:+.1f}, {uncertainty.ci_high:+.1f}]"


def csv_text(points: Sequence[BiasPoint]) -> str:
    """The plot's points as CSV, one row a point, its fields as the header."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow([f.name for f in fields(BiasPoint)])
    writer.writerows(astuple(point) for point in points)
    return text.getvalue()


CONVENTIONAL, TIE_NEUTRAL = "conventional", "tie-neutral"


@dataclass(frozen=True)
class BiasMark:
    """One dataset's Relative Δ as the plot draws it: conventional or tie-neutral, at the dataset's NDCG, with its
    interval where the result has one."""

    model: str
    task: str
    kind: str  # CONVENTIONAL or TIE_NEUTRAL
    delta: float
    ndcg: float
    ci_low: float | None = None
    ci_high: float | None = None


def bias_marks(points: Sequence[BiasPoint]) -> list[BiasMark]:
    """What the plot draws per dataset: each point's conventional Δ and, beside it, its tie-neutral Δ (results
    written without it have none)."""
    marks = []
    for p in points:
        marks.append(BiasMark(p.model, p.task, CONVENTIONAL, p.relative_delta, p.ndcg, p.delta_ci_low, p.delta_ci_high))
        if p.tie_neutral_delta is not None:
            marks.append(BiasMark(p.model, p.task, TIE_NEUTRAL, p.tie_neutral_delta, p.ndcg, p.tie_neutral_ci_low,
                                  p.tie_neutral_ci_high))
    return marks


def _draw_marks(axes: Any, marks: Sequence[BiasMark], color: Any, tie_neutral: bool, below: Any) -> None:
    """One model's marks of one kind; tie-neutral ones hollow, their bars dashed and a few points lower (``below``)
    so that the two intervals of a dataset stay apart."""
    transform = below if tie_neutral else axes.transData
    axes.scatter([m.delta for m in marks], [m.ndcg for m in marks], s=18, alpha=0.6 if tie_neutral else 0.45,
                 marker="D" if tie_neutral else "o", facecolors="none" if tie_neutral else color, edgecolors=color,
                 transform=transform)
    with_ci = [m for m in marks if m.ci_low is not None and m.ci_high is not None]
    if with_ci:
        bars = axes.errorbar([m.delta for m in with_ci], [m.ndcg for m in with_ci], fmt="none", ecolor=color,
                             alpha=0.45, capsize=2, linewidth=1, transform=transform,
                             xerr=[[max(0.0, m.delta - m.ci_low) for m in with_ci],  # a bar, never < 0
                                   [max(0.0, m.ci_high - m.delta) for m in with_ci]])
        if tie_neutral:
            bars[2][0].set_linestyle("--")


def draw(points: Sequence[BiasPoint], handle: IO[bytes]) -> None:
    """The plot, as PNG, into ``handle``."""
    from matplotlib.transforms import offset_copy

    plt = pyplot()

    models = sorted({p.model for p in points})
    marks = bias_marks(points)
    colors = plt.get_cmap("tab10")
    figure, axes = plt.subplots(figsize=(7.5, 5.5), dpi=150)
    below = offset_copy(axes.transData, fig=figure, y=-4, units="points")
    for index, model in enumerate(models):
        mine = [p for p in points if p.model == model]
        color = colors(index % 10)
        for tie_neutral in (False, True):
            kind = [m for m in marks if m.model == model and (m.kind == TIE_NEUTRAL) == tie_neutral]
            if kind:
                _draw_marks(axes, kind, color, tie_neutral, below)
        mean_delta = sum(p.relative_delta for p in mine) / len(mine)
        mean_ndcg = sum(p.ndcg for p in mine) / len(mine)
        axes.scatter([mean_delta], [mean_ndcg], s=120, color=color, edgecolors="black", zorder=3,
                     label=f"{model} ({len(mine)} dataset{'s' * (len(mine) > 1)})")
        axes.annotate(model, (mean_delta, mean_ndcg), textcoords="offset points", xytext=(7, 6), fontsize=8)
    # marks drawn a few points lower are not in the data limits matplotlib scales to: every interval in view
    axes.update_datalim([(x, m.ndcg) for m in marks for x in (m.delta, m.ci_low, m.ci_high) if x is not None])
    axes.autoscale_view()
    axes.axvline(0, color="grey", linestyle="--", linewidth=1)
    axes.set_xlabel(f"Relative Δ NDCG@{CUTOFF} (%)   ← prefers LLM-generated · prefers human-written →")
    axes.set_ylabel(f"NDCG@{CUTOFF} on the mixed corpus (%)")
    notes = []
    if any(m.ci_low is not None for m in marks):
        notes.append("bars: 95 % confidence interval of a dataset's Relative Δ")
    if any(m.kind == TIE_NEUTRAL for m in marks):
        notes.append("hollow diamonds, dashed bars (just below): the tie-neutral Δ")
    axes.set_title("\n".join(["Ranking performance vs source bias (large points: mean over datasets)", *notes]),
                   fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="best")
    figure.tight_layout()
    png(figure)(handle)


@register_plot("bias")
def bias_plot(request: ReportRequest) -> list[Path]:
    """Plot NDCG@1 (mixed) against Relative Δ NDCG@1 for every selected model and task."""
    results = request.results_folder("bias")
    points = collect_points(results, request.models, request.tasks, request.reference)
    if not points:
        raise DatasetError("no result of a source-bias task (a 'mixed' subset with source_bias scores) for the "
                           "selected models and tasks; run e.g. `airbench-mteb bias -m MODEL -t CocktailNFCorpus`",
                           path=results)
    return write_files(request.out, {"bias.png": functools.partial(draw, points), "bias.csv": csv_text(points)})
