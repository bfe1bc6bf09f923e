"""The AIR-Bench leaderboard's table as typed records, and the rules its app computes it by.

The rules are those of the ``AIR-Bench/leaderboard`` Space (facts read from its ``src/models.py``,
``src/utils.py``, ``src/benchmarks.py``; AIR-Bench paper, arXiv 2412.13102):

- a column per dataset: QA ``<domain>_<lang>``, Long-Doc ``<domain>_<lang>_<dataset>``, made safe
  (``-`` -> ``_``, lower case, only letters, digits and ``_`` kept): :func:`column_name`;
- a cell is the metric's value x 100;
- Average = the mean of the row's selected columns, **-1 when any of them is missing**, rounded to 2
  decimals as pandas rounds (``numpy.round``: x * 100 rounded half to even, / 100): :func:`leaderboard_average`;
  the first table averages the unrounded cells, a domain or language filter averages the cells as
  shown (already rounded to 2 decimals), as the app's ``select_columns`` does on its displayed frame;
- Rank = the rank of the Average, descending, ties sharing the best rank (pandas ``method="min"``):
  :func:`leaderboard_ranks`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

MISSING_AVERAGE = -1.0  # the app's Average of a row that lacks a selected column
NO_RERANKER = "NoReranker"  # the app's name of a first stage used alone
DEFAULT_METRICS = {"qa": "ndcg_at_10", "long-doc": "recall_at_10"}
# Every metric the app's metric selector offers (its METRIC_LIST), in its order.
LEADERBOARD_METRICS = tuple(f"{measure}_at_{k}" for measure in ("ndcg", "map", "recall", "precision", "mrr")
                            for k in (1, 3, 5, 10, 100, 1000))
TAB_TITLES = {"qa": "QA", "long-doc": "Long-Doc"}


def safe_name(name: str) -> str:
    """The app's column key: ``-`` as ``_``, lower case, only letters, digits and ``_`` kept."""
    return "".join(ch.lower() for ch in name.replace("-", "_") if ch.isalnum() or ch == "_")


def column_name(domain: str, lang: str, dataset: str) -> str:
    """``<domain>_<lang>`` (a QA dataset, ``default``) or ``<domain>_<lang>_<dataset>`` (Long-Doc), made safe."""
    return safe_name(f"{domain}_{lang}" if dataset == "default" else f"{domain}_{lang}_{dataset}")


def round2(value: float) -> float:
    """pandas' ``round(decimals=2)``: ``numpy.round``, the value x 100 rounded half to even, / 100."""
    return float(np.round(value, 2))


def leaderboard_average(values: Sequence[float | None]) -> float | None:
    """The app's Average of one row's selected cells: -1 when any is missing, else their mean as pandas takes it
    (numpy's pairwise sum / n), rounded to 2 decimals; None when no column is selected (pandas' mean of nothing,
    NaN: the app shows an empty cell and ranks nothing)."""
    if not values:
        return None
    if any(value is None for value in values):
        return MISSING_AVERAGE
    return round2(float(np.sum(np.asarray(values, dtype=float))) / len(values))


def leaderboard_ranks(averages: Sequence[float | None]) -> list[int | None]:
    """Rank of each Average, descending, tied Averages sharing the best rank: 1 + how many are strictly higher
    (pandas' ``rank(ascending=False, method="min")``; no Average, no rank)."""
    known = [average for average in averages if average is not None]
    return [None if average is None else 1 + sum(other > average for other in known) for average in averages]


@dataclass(frozen=True)
class Column:
    """One dataset of a tab: the app's column key and where it comes from."""

    name: str  # column_name(domain, lang, dataset)
    task: str  # the MTEB task, e.g. AIR-Bench_24.05_qa_news_en
    domain: str
    lang: str
    dataset: str


@dataclass(frozen=True)
class Interval:
    """A 95 % bootstrap confidence interval (x 100) and how it was computed."""

    low: float
    high: float
    method: str


@dataclass(frozen=True)
class Cell:
    """One row's score in one column (MTEB's, 0-1; shown x 100), its interval and Judged@10 (the share of the top 10
    that has a label); ``closed_book`` when the split was searched without qrels, so there is no score."""

    score: float | None = None
    interval: Interval | None = None  # x 100
    judged_at_10: float | None = None  # 0-1
    closed_book: bool = False

    @property
    def value(self) -> float | None:
        """The score x 100, as the app reads it from a result file."""
        return None if self.score is None else self.score * 100

    @property
    def shown(self) -> float | None:
        """The value as the app shows it: rounded to 2 decimals."""
        return None if self.value is None else round2(self.value)


@dataclass(frozen=True)
class Row:
    """One retriever (and reranker): its cells by column name, Average, Rank, the Average's interval and rank group."""

    retriever: str
    reranker: str
    cells: Mapping[str, Cell]
    average: float | None  # None: no column to average (every one closed-book)
    rank: int | None
    average_interval: Interval | None = None
    group: int | None = None  # rows sharing a group are not significantly different from the one above

    def value(self, column: str) -> float | None:
        cell = self.cells.get(column)
        return None if cell is None else cell.value


@dataclass(frozen=True)
class GroupTest:
    """The paired test of a row against the row above it (by Average), and its Holm-adjusted p-value."""

    upper: str  # "<retriever> / <reranker>"
    lower: str
    p_value: float
    p_adjusted: float


@dataclass(frozen=True)
class Tab:
    """One tab (QA or Long-Doc) of one metric: its columns and rows, rows best first."""

    task_type: str  # "qa" or "long-doc"
    metric: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    tests: tuple[GroupTest, ...] = ()  # empty when the metric has no per-query values
    closed_book: tuple[Column, ...] = ()  # columns no run has a value in (searched without qrels): not averaged

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(sorted({c.domain for c in self.columns}))

    @property
    def langs(self) -> tuple[str, ...]:
        return tuple(sorted({c.lang for c in self.columns}))

    def selected(self, domains: Sequence[str] | None = None, langs: Sequence[str] | None = None) -> list[Column]:
        """The columns a domain and language filter keeps (None: every domain or language), in the tab's order."""
        return [c for c in self.columns
                if (domains is None or c.domain in domains) and (langs is None or c.lang in langs)]

    def filtered_averages(self, domains: Sequence[str] | None = None,
                          langs: Sequence[str] | None = None) -> dict[tuple[str, str], float | None]:
        """Each row's Average over the filter's columns, as the app's filter recomputes it (the shown cells)."""
        columns = self.selected(domains, langs)
        return {(row.retriever, row.reranker): leaderboard_average(
                    [None if (cell := row.cells.get(c.name)) is None else cell.shown for c in columns])
                for row in self.rows}
