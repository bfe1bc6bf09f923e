"""The AIR-Bench leaderboard, offline, for your own runs: the library behind ``airbench-mteb leaderboard``.

:func:`leaderboard` builds the leaderboard's table (:mod:`.table`: QA and Long-Doc tabs, every metric,
Average and Rank by the app's rules; :mod:`.board`: the :class:`Leaderboard` of those tabs and its renderings) from
MTEB results, with what the app lacks (:mod:`.uncertainty`);
:func:`write_leaderboard` writes ``leaderboard.json``, ``.md``, ``.csv``, ``leaderboard.html`` and the
result files the app itself reads (:mod:`.eval_results`).
"""

from airbench_mteb.report.leaderboard.board import Leaderboard
from airbench_mteb.report.leaderboard.build import leaderboard
from airbench_mteb.report.leaderboard.table import Cell, Column, GroupTest, Interval, Row, Tab

__all__ = ["Cell", "Column", "GroupTest", "Interval", "Leaderboard", "Row", "Tab", "leaderboard"]
