"""The paired-comparison report as Markdown, LaTeX (booktabs) and CSV (its JSON is ``to_json`` of the records).

The tables give each model's mean per task column with superscript letters of the models it is
significantly better than after correction; the Markdown adds every comparison's figures.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from airbench_mteb.report.bias_significance import bias_csv_rows, bias_latex, bias_markdown
from airbench_mteb.report.significance.records import (
    BENCHMARK_FAMILY,
    FAMILY,
    MAIN_SCORE,
    BenchmarkLevel,
    Comparison,
    ReportContent,
)
from airbench_mteb.report.text_format import correction_text, markdown_text, p_text, tex


def _letters(models: Sequence[str]) -> dict[str, str]:
    return {model: chr(ord("a") + i) if i < 26 else f"m{i + 1}" for i, model in enumerate(models)}


def _columns(report: ReportContent, metric: str) -> list[tuple[str, str, str]]:
    return list(dict.fromkeys((c.task, c.split, c.subset) for c in report.comparisons if c.metric == metric))


def _column_title(report: ReportContent, column: tuple[str, str, str]) -> str:
    task, split, subset = column
    same_task = {(s, sub) for t, s, sub in (
        (c.task, c.split, c.subset) for c in report.comparisons) if t == task}
    if len(same_task) == 1:
        return task
    splits = {s for s, _ in same_task}
    subsets = {sub for _, sub in same_task}
    return f"{task} ({', '.join(part for part, many in ((split, len(splits) > 1), (subset, len(subsets) > 1)) if many)})"


def _cells(report: ReportContent, metric: str) -> dict[tuple[str, tuple[str, str, str]], tuple[float, list[str]]]:
    """(model, column) -> (mean, letters of the models it is significantly better than after correction)."""
    letters = _letters(report.models)
    cells: dict[tuple[str, tuple[str, str, str]], tuple[float, list[str]]] = {}
    for c in report.comparisons:
        if c.metric != metric:
            continue
        column = (c.task, c.split, c.subset)
        for model, mean in ((c.model_a, c.mean_a), (c.model_b, c.mean_b)):
            cells.setdefault((model, column), (mean, []))
        if c.p_adjusted < report.alpha and c.difference != 0:
            winner, loser = (c.model_a, c.model_b) if c.difference > 0 else (c.model_b, c.model_a)
            cells[(winner, column)][1].append(letters[loser])
    return cells


def _benchmark_cells(level: BenchmarkLevel, alpha: float, models: Sequence[str]) -> dict[str, tuple[float, list[str]]]:
    letters = _letters(models)
    cells = {score.model: (score.mean, []) for score in level.models}
    for pair in level.comparisons:
        if pair.p_adjusted < alpha and pair.difference != 0:
            winner, loser = (pair.model_a, pair.model_b) if pair.difference > 0 else (pair.model_b, pair.model_a)
            cells[winner][1].append(letters[loser])
    return cells


def _metrics(report: ReportContent) -> list[str]:
    return list(dict.fromkeys(c.metric for c in report.comparisons))


def _method_sentence(report: ReportContent) -> str:
    resampling = report.resampling
    return (f"Two-sided paired randomization (sign-flip) test over queries, {resampling.n_resamples:,} seeded sign "
            f"vectors (seed {resampling.seed}; exact over the 2^k of the k queries that differ when that is fewer), "
            f"p = (count + 1) / (n + 1); "
            f"{correction_text(report.correction)} over {report.family_size} comparisons ({FAMILY}); "
            f"alpha = {report.alpha}. Intervals: paired bootstrap, {resampling.level:.0%}, "
            f"{resampling.n_resamples:,} resamples.")


def render_markdown(report: ReportContent) -> str:
    letters = _letters(report.models)
    lines = ["# Paired comparison of models", "", _method_sentence(report),
             "A superscript lists the models (by letter) the row's model is significantly better than after "
             "correction.", ""]
    for metric in _metrics(report):
        columns = _columns(report, metric)
        cells = _cells(report, metric)
        bench = next((b for b in report.benchmark if _benchmark_metric_matches(b, metric, report)), None)
        titles = [markdown_text(_column_title(report, column)) for column in columns] + (
            [f"{markdown_text(bench.benchmark)} mean"] if bench else [])
        lines += [f"## {metric}", "", "| model | " + " | ".join(titles) + " |", "|---" * (len(titles) + 1) + "|"]
        bench_cells = _benchmark_cells(bench, report.alpha, report.models) if bench else {}
        for model in report.models:
            row = [_md_cell(cells.get((model, column))) for column in columns]
            if bench:
                row.append(_md_cell(bench_cells.get(model)))
            lines.append(f"| {letters[model]}. {markdown_text(model)} | " + " | ".join(row) + " |")
        lines += ["", "| task | split | subset | A | B | A - B | CI | p | p adjusted | t-test p | effect size | "
                      "wins/ties/losses |", "|---" * 12 + "|"]
        for c in report.comparisons:
            if c.metric == metric:
                lines.append(f"| {markdown_text(c.task)} | {markdown_text(c.split)} | {markdown_text(c.subset)} | "
                             f"{letters[c.model_a]} | {letters[c.model_b]} | "
                             f"{c.difference:+.4f} | [{c.ci_low:+.4f}, {c.ci_high:+.4f}] | {p_text(c.p_value)} | "
                             f"{p_text(c.p_adjusted)} | {p_text(c.t_test_p_value)} | {_effect(c.effect_size)} | "
                             f"{c.wins}/{c.ties}/{c.losses} |")
        lines.append("")
    for bench in report.benchmark:
        lines += _benchmark_markdown(bench, letters)
    lines += bias_markdown(report.source_bias, letters)
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def _benchmark_metric_matches(bench: BenchmarkLevel, metric: str, report: ReportContent) -> bool:
    """The benchmark column goes into the table of its metric; a ``main_score`` mean into the table of the main
    score when every task shares it."""
    if bench.metric == metric:
        return True
    used = {c.metric for c in report.comparisons if c.task in bench.tasks}
    return bench.metric == MAIN_SCORE and used == {metric}


def _benchmark_markdown(bench: BenchmarkLevel, letters: Mapping[str, str]) -> list[str]:
    lines = [f"## {markdown_text(bench.benchmark)}: mean {bench.metric} over {len(bench.tasks)} tasks", "",
             "| model | mean | CI | rank | rank interval |", "|---|---|---|---|---|"]
    for score in bench.models:
        rank = "" if score.rank is None else str(score.rank)
        interval = "" if score.rank is None else f"[{score.rank_low}, {score.rank_high}]"
        lines.append(f"| {letters[score.model]}. {markdown_text(score.model)} | {score.mean:.4f} | "
                     f"[{score.ci_low:.4f}, {score.ci_high:.4f}] | {rank} | {interval} |")
    lines += ["", f"Stratified bootstrap (queries resampled within each task); {BENCHMARK_FAMILY}: "
                  f"{len(bench.comparisons)} comparisons.", "",
              "| A | B | A - B | CI | p | p adjusted |", "|---|---|---|---|---|---|"]
    for pair in bench.comparisons:
        lines.append(f"| {letters[pair.model_a]} | {letters[pair.model_b]} | {pair.difference:+.4f} | "
                     f"[{pair.ci_low:+.4f}, {pair.ci_high:+.4f}] | {p_text(pair.p_value)} | {p_text(pair.p_adjusted)} |")
    return [*lines, ""]


def _md_cell(cell: tuple[float, list[str]] | None) -> str:
    if cell is None:
        return ""
    mean, beaten = cell
    return f"{mean:.4f}" + (f"<sup>{''.join(sorted(beaten))}</sup>" if beaten else "")


def _effect(value: float) -> str:
    return f"{value:+.3f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def render_latex(report: ReportContent) -> str:
    letters = _letters(report.models)
    tables = []
    for metric in _metrics(report):
        columns = _columns(report, metric)
        cells = _cells(report, metric)
        bench = next((b for b in report.benchmark if _benchmark_metric_matches(b, metric, report)), None)
        bench_cells = _benchmark_cells(bench, report.alpha, report.models) if bench else {}
        keys: list[Any] = [*columns, *(["benchmark"] if bench else [])]
        values = {key: (bench_cells if key == "benchmark" else {m: cells.get((m, key)) for m in report.models})
                  for key in keys}
        best = {key: max((cell[0] for cell in values[key].values() if cell is not None), default=None) for key in keys}
        titles = [tex(_column_title(report, column)) for column in columns] + (
            [tex(f"{bench.benchmark} mean")] if bench else [])
        rows = []
        for model in report.models:
            row = [_tex_cell(values[key].get(model), best[key]) for key in keys]
            rows.append(f"({letters[model]}) {tex(model)} & " + " & ".join(row) + r" \\")
        caption = (f"{tex(metric)}. Best value per column in bold; a superscript lists the models (by letter) a row "
                   f"is significantly better than: two-sided paired randomization test, {report.resampling.n_resamples:,} "
                   f"permutations, {correction_text(report.correction)} over {report.family_size} comparisons, "
                   f"$\\alpha = {report.alpha}$.")
        tables.append("\n".join([
            r"\begin{table}[t]", r"\centering", f"\\caption{{{caption}}}",
            r"\begin{tabular}{l" + "r" * len(keys) + "}", r"\toprule",
            "Model & " + " & ".join(titles) + r" \\", r"\midrule", *rows, r"\bottomrule", r"\end{tabular}",
            r"\end{table}"]))
    tables.append(bias_latex(report.source_bias, report.correction, report.resampling))
    return "% requires \\usepackage{booktabs}\n" + "\n\n".join(table for table in tables if table) + "\n"


def _tex_cell(cell: tuple[float, list[str]] | None, best: float | None) -> str:
    if cell is None:
        return ""
    mean, beaten = cell
    number = f"{mean:.4f}"
    if best is not None and mean == best:
        number = f"\\textbf{{{number}}}"
    return number + (f"$^{{{''.join(sorted(beaten))}}}$" if beaten else "")


def render_csv(report: ReportContent) -> str:
    names = ["level", *(f.name for f in fields(Comparison))]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for c in report.comparisons:
        writer.writerow({"level": "task", **{k: "" if v is None else v for k, v in c.to_json().items()}})
    for bench in report.benchmark:
        for pair in bench.comparisons:
            writer.writerow({"level": "benchmark", "task": bench.benchmark, "metric": bench.metric,
                             "n_queries": bench.n_queries, **asdict(pair)})
    for row in bias_csv_rows(report.source_bias):
        writer.writerow(row)
    return buffer.getvalue()
