"""The leaderboard of one benchmark version and split (:class:`Leaderboard`), and its renderings: JSON
(``leaderboard.json``, also what the page reads), Markdown and CSV; and the legend."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import Correction
from airbench_mteb.report.leaderboard.table import (
    DEFAULT_METRICS,
    MISSING_AVERAGE,
    TAB_TITLES,
    Cell,
    Interval,
    Tab,
)
from airbench_mteb.report.leaderboard.uncertainty import INTERVAL_METRICS
from airbench_mteb.report.text_format import adjusted_text, markdown_text, percent_text

FORMAT = "airbench-mteb leaderboard"
CSV_FIELDS = ("tab", "metric", "retriever", "reranker", "column", "value", "ci_low", "ci_high", "judged_at_10",
              "closed_book", "rank", "group")


@dataclass(frozen=True)
class Leaderboard:
    """The tables of one benchmark version on one split: ``tabs[task type][metric]``."""

    version: str
    split: str
    tabs: Mapping[str, Mapping[str, Tab]]
    plugin_version: str
    fingerprints: Mapping[str, str]  # task -> the data fingerprint its results were computed on
    resampling: Resampling  # of the intervals and the rank groups' tests
    correction: Correction  # of the rank groups' p-values
    alpha: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    def tab(self, task_type: str, metric: str | None = None) -> Tab:
        return self.tabs[task_type][metric or DEFAULT_METRICS[task_type]]

    # Its renderings (:class:`~airbench_mteb.report.protocol.Report`): this module's functions below.
    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    def to_markdown(self) -> str:
        return to_markdown(self)

    def to_csv(self) -> str:
        return to_csv(self)


def legend(board: Leaderboard) -> list[str]:
    """What each column and mark means: one sentence per item (the page, the Markdown); the choices read off the
    board's record."""
    resampling = board.resampling
    return [
        "Columns: a QA column is <domain>_<lang>, a Long-Doc column <domain>_<lang>_<dataset>; each cell is the "
        f"metric x 100 on the {board.split} split, rounded to 2 decimals, as the AIR-Bench leaderboard shows it.",
        "Average: the mean of the row's selected columns, -1 when any of them is missing (not run, or closed-book), "
        "rounded to 2 decimals; a domain or language filter recomputes it from the shown cells, as the "
        "leaderboard does.",
        "Rank: the rank of the Average, best first; equal Averages share the better rank.",
        f"Interval ([low, high] or ± on hover): a {percent_text(resampling.level)} bootstrap confidence interval "
        f"({resampling.method}, {resampling.n_resamples:,} resamples, seed {resampling.seed}) over the queries of "
        "the cell's task; an Average's resamples the queries within each column's task (stratified bootstrap). "
        f"Only metrics kept per query have them: {', '.join(INTERVAL_METRICS)}.",
        "Judged@10: the share of the top 10 documents that has a relevance label (any, 0 included), in %; a low "
        "share means the score rests on unlabelled documents.",
        "Group: rows in the order of their Average; each is compared with the row above by a two-sided paired "
        f"sign-flip test of the difference of their Averages ({resampling.n_resamples:,} sign vectors, exact when "
        f"fewer), p-values {adjusted_text(board.correction)} over those comparisons; a row not significantly different (alpha "
        f"{board.alpha}) shares the group of the row above. Rows with Average -1 get none.",
        "closed-book: the split was searched without its qrels (AIR-Bench test qrels are gated), so there is no "
        "score; package the rankings for the AIR-Bench leaderboard (airbench-mteb package-submission).",
    ]


def _interval(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def _cell_json(cell: Cell) -> dict[str, Any]:
    return {"value": cell.value, "shown": cell.shown, "ci": _interval(cell.interval),
            "judged_at_10": None if cell.judged_at_10 is None else cell.judged_at_10 * 100,
            "closed_book": cell.closed_book}


def _tab_json(tab: Tab) -> dict[str, Any]:
    return {"intervals": tab.metric in INTERVAL_METRICS,
            "rows": [{"retriever": row.retriever, "reranker": row.reranker, "average": row.average, "rank": row.rank,
                      "average_ci": _interval(row.average_interval), "group": row.group,
                      "cells": {name: _cell_json(cell) for name, cell in row.cells.items()}} for row in tab.rows],
            "group_tests": [{"upper": t.upper, "lower": t.lower, "p_value": t.p_value, "p_adjusted": t.p_adjusted}
                            for t in tab.tests]}


def to_json(board: Leaderboard) -> dict[str, Any]:
    tabs = {}
    for task_type, by_metric in board.tabs.items():
        first = next(iter(by_metric.values()))
        tabs[task_type] = {
            "title": TAB_TITLES[task_type], "default_metric": DEFAULT_METRICS[task_type],
            "domains": list(first.domains), "langs": list(first.langs),
            "columns": [asdict(c) for c in first.columns],
            "closed_book_columns": [asdict(c) for c in first.closed_book],
            "metrics": {metric: _tab_json(tab) for metric, tab in by_metric.items()}}
    return {"format": FORMAT, "version": board.version, "split": board.split, "plugin_version": board.plugin_version,
            "fingerprints": dict(board.fingerprints),
            "resampling": {"method": board.resampling.method, "level": board.resampling.level,
                           **board.resampling.draws(), "alpha": board.alpha, "correction": board.correction},
            "legend": legend(board), "notes": list(board.notes), "tabs": tabs}


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _md_cell(cell: Cell | None) -> str:
    if cell is None:
        return "–"
    if cell.closed_book:
        return "closed-book"
    text = _number(cell.shown)
    return text + (f" [{cell.interval.low:.2f}, {cell.interval.high:.2f}]" if cell.interval else "")


def _md_average(average: float | None, interval: Interval | None) -> str:
    if average is None or average == MISSING_AVERAGE:
        return "–" if average is None else "-1"
    return f"{average:.2f}" + (f" [{interval.low:.2f}, {interval.high:.2f}]" if interval else "")


def to_markdown(board: Leaderboard) -> str:
    """Each tab at its default metric (nDCG@10 for QA, Recall@10 for Long-Doc), then the legend."""
    lines = [f"# AIR-Bench leaderboard: {board.version}, {board.split} split", ""]
    for task_type in board.tabs:
        tab = board.tab(task_type)
        names = [c.name for c in (*tab.columns, *tab.closed_book)]
        lines += [f"## {TAB_TITLES[task_type]} ({tab.metric})", "",
                  "| Rank | Group | Retriever | Reranker | Average | " + " | ".join(names) + " |",
                  "|---" * (5 + len(names)) + "|"]
        for row in tab.rows:
            lines.append(f"| {'' if row.rank is None else row.rank} | {'' if row.group is None else row.group} | "
                         f"{markdown_text(row.retriever)} | {markdown_text(row.reranker)} | "
                         f"{_md_average(row.average, row.average_interval)} | "
                         + " | ".join(_md_cell(row.cells.get(name)) for name in names) + " |")
        lines.append("")
    lines += [f"- {item}" for item in legend(board)]
    lines += [f"- {note}" for note in board.notes]
    lines += ["", f"airbench-mteb {board.plugin_version}; data: "
              + ", ".join(f"{task} {fingerprint}" for task, fingerprint in board.fingerprints.items())]
    return "\n".join(lines) + "\n"


def to_csv(board: Leaderboard) -> str:
    """One line per tab, metric, row and column (and one per row for its Average, column ``Average``); every text
    quoted (a name holding a comma, quote or newline stays one field)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    writer.writeheader()
    for task_type, by_metric in board.tabs.items():
        for metric, tab in by_metric.items():
            for row in tab.rows:
                base = {"tab": task_type, "metric": metric, "retriever": row.retriever, "reranker": row.reranker}
                average_ci = _interval(row.average_interval) or ["", ""]
                writer.writerow({**base, "column": "Average", "value": "" if row.average is None else row.average, "ci_low": average_ci[0],
                                 "ci_high": average_ci[1], "rank": "" if row.rank is None else row.rank,
                                 "group": "" if row.group is None else row.group})
                for name, cell in row.cells.items():
                    ci = _interval(cell.interval) or ["", ""]
                    writer.writerow({**base, "column": name, "value": "" if cell.value is None else cell.value,
                                     "ci_low": ci[0], "ci_high": ci[1],
                                     "judged_at_10": "" if cell.judged_at_10 is None else cell.judged_at_10 * 100,
                                     "closed_book": cell.closed_book})
    return buffer.getvalue()
