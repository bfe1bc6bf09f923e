"""An SSCI/RCCI comparison (:class:`~airbench_mteb.metrics.pairwise.PairwiseComparison`) as CSV and Markdown: the
N x N matrices, one row per model pair, and the legend of the brackets and daggers, read off its uncertainty's
record. ``airbench-mteb compare`` writes them (:mod:`airbench_mteb.report.compare`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from airbench_mteb.metrics.pairwise import PairwiseComparison
from airbench_mteb.metrics.resampling import with_interval
from airbench_mteb.report.text_format import adjusted_text


def matrix_csv(comparison: PairwiseComparison, index: str) -> str:
    """The N x N matrix of ``index`` ('ssci' or 'rcci') as CSV with model names as header and first column."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model", *comparison.models])
    for name, row in zip(comparison.models, comparison.matrix(index), strict=True):
        writer.writerow([name, *(f"{value:.6f}" for value in row)])
    return buffer.getvalue()


def pairs_csv(comparison: PairwiseComparison) -> str:
    """:meth:`~airbench_mteb.metrics.pairwise.PairwiseComparison.pairs` as CSV (numbers with 6 decimals)."""
    rows = comparison.pairs()
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: f"{value:.6f}" if isinstance(value, float) else value for key, value in row.items()}
                     for row in rows)
    return buffer.getvalue()


def _cell(comparison: PairwiseComparison, index: str, i: int, j: int) -> str:
    """One Markdown cell: the value, its interval in brackets when computed, and for RCCI a dagger when it is not
    significant."""
    value = comparison.matrix(index)[i, j]
    uncertainty = comparison.uncertainty
    if uncertainty is None or i == j:
        return with_interval(value, None)
    low, high = (bound[i, j] for bound in uncertainty.interval(index))
    dagger = "†" if index == "rcci" and not uncertainty.rcci_significant()[i, j] else ""
    return with_interval(value, (low, high)) + dagger


def matrix_markdown(comparison: PairwiseComparison, index: str, text: Callable[[str], str] = str) -> str:
    """The matrix as a Markdown table; ``text`` writes a model name (the report's escape, so none becomes markup)."""
    models = comparison.models
    lines = [f"| {index.upper()} (row vs column) | " + " | ".join(text(m) for m in models) + " |",
             "|" + "---|" * (len(models) + 1)]
    for i, name in enumerate(models):
        lines.append(f"| {text(name)} | " + " | ".join(_cell(comparison, index, i, j) for j in range(len(models)))
                     + " |")
    return "\n".join(lines)


def pairs_markdown(comparison: PairwiseComparison, text: Callable[[str], str] = str) -> str:
    """RCCI's tests per model pair as a Markdown table (empty without uncertainty); ``text`` as in
    :func:`matrix_markdown`."""
    if comparison.uncertainty is None:
        return ""
    lines = ["| model A | model B | RCCI (A vs B) | p | p adjusted |", "|---|---|---|---|---|"]
    lines += [f"| {text(row['model_a'])} | {text(row['model_b'])} | "
              f"{with_interval(row['rcci'], (row['rcci_ci_low'], row['rcci_ci_high']))} | "
              f"{row['rcci_p_value']:.4g} | {row['rcci_p_adjusted']:.4g} |" for row in comparison.pairs()]
    return "\n".join(lines)


def legend(comparison: PairwiseComparison) -> str:
    """What the brackets and daggers of :func:`matrix_markdown` mean; empty without uncertainty."""
    if comparison.uncertainty is None:
        return ""
    u, r = comparison.uncertainty, comparison.uncertainty.resampling
    pairs = len(comparison.models) * (len(comparison.models) - 1) // 2
    return (f"[low, high]: {r.level:.0%} bootstrap confidence interval over the {comparison.num_queries} queries "
            f"({r.method}, {r.n_resamples:,} resamples, seed {r.seed}). †: RCCI not significantly different "
            f"from 0 (two-sided sign-flip test, {r.n_resamples:,} resamples; {adjusted_text(u.correction)} "
            f"over the {pairs} model pairs, p ≥ {u.alpha}).")
