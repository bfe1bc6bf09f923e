"""The consistency check's files: ``consistency.json``, ``consistency.md`` and one PNG per metric.

The plot shows each model's score on the human set (x) against the generated set (y) with the intervals its
results carry, the rank agreement in the title; and the distribution of Spearman's rho over the robustness
study's random subsets of generated queries, beside the full set's rho and interval."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import IO

from airbench_mteb.report.consistency import HUMAN, ConsistencyReport, MetricConsistency, ModelScore
from airbench_mteb.report.figures import png, pyplot
from airbench_mteb.report.protocol import write_report_files

STEM = "consistency"
FILES = (f"{STEM}.json", f"{STEM}.md")
COLOURS = {"generated": "tab:blue", "without QC": "tab:orange"}


def _error(scores: tuple[ModelScore, ...]) -> list[list[float]] | None:
    """Asymmetric error bars from the recorded intervals; None where any model has none."""
    if any(s.ci_low is None or s.ci_high is None for s in scores):
        return None
    return [[s.score - float(s.ci_low) for s in scores], [float(s.ci_high) - s.score for s in scores]]


def _title(metric: MetricConsistency) -> str:
    return "\n".join(f"{a.name}: rho {a.spearman_rho:+.2f} [{a.spearman_ci[0]:+.2f}, {a.spearman_ci[1]:+.2f}], "
                     f"tau {a.kendall_tau:+.2f} [{a.kendall_ci[0]:+.2f}, {a.kendall_ci[1]:+.2f}]"
                     for a in metric.agreements)


def plot_consistency(report: ConsistencyReport, metric: MetricConsistency, handle: IO[bytes]) -> None:
    """Draw ``metric``'s figure as PNG into ``handle``."""
    plt = pyplot()
    figure, (scores_axis, rho_axis) = plt.subplots(1, 2, figsize=(13, 5.5))
    human = metric.scores[HUMAN]
    x = [s.score for s in human]
    for agreement in metric.agreements:
        generated = metric.scores[agreement.name]
        scores_axis.errorbar(x, [s.score for s in generated], xerr=_error(human), yerr=_error(generated), fmt="o",
                             color=COLOURS.get(agreement.name), capsize=3, label=agreement.name)
        for on_human, on_generated, label in zip(human, generated, report.models, strict=True):
            scores_axis.annotate(label, (on_human.score, on_generated.score), fontsize=7, xytext=(4, 3),
                                 textcoords="offset points")
    scores_axis.set_xlabel(f"{report.human} ({metric.metrics[HUMAN]})")
    scores_axis.set_ylabel(f"generated ({metric.metric})")
    scores_axis.set_title(_title(metric), fontsize=9)
    scores_axis.legend(fontsize=8)
    for agreement in metric.agreements:
        finite = [rho for rho in agreement.subset_rhos if math.isfinite(rho)]
        colour = COLOURS.get(agreement.name)
        rho_axis.hist(finite, bins=min(20, max(5, len(finite) // 2)), range=(-1, 1), alpha=0.5, color=colour,
                      label=f"{agreement.name}: {len(agreement.subset_rhos)} subsets of {agreement.subset_size}")
        if all(math.isfinite(v) for v in (agreement.spearman_rho, *agreement.spearman_ci)):
            rho_axis.axvline(agreement.spearman_rho, color=colour, linestyle="--")
            rho_axis.axvspan(*agreement.spearman_ci, color=colour, alpha=0.12)
    rho_axis.set_xlim(-1.05, 1.05)
    rho_axis.set_xlabel("Spearman rho with the human ranking (dashed: full set, shaded: its interval)")
    rho_axis.set_ylabel("subsets")
    rho_axis.legend(fontsize=8)
    figure.tight_layout()
    png(figure, dpi=110)(handle)


def write_consistency(report: ConsistencyReport, out: Path) -> list[Path]:
    """``consistency.json``, ``consistency.md`` and ``consistency_<metric>.png`` in ``out``; returns their paths."""
    plots = {f"{STEM}_{metric.metric}.png": partial(plot_consistency, report, metric) for metric in report.metrics}
    return write_report_files(report, out, STEM, plots)
