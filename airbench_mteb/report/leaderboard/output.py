"""Writing the leaderboard: ``leaderboard.json``, ``.md``, ``.csv``, ``leaderboard.html`` and the app's result files.

The whole set is made before anything is written, then written by the report writer
(:func:`airbench_mteb.report.protocol.write_files`): the four files beside their targets, the result files into a
staging folder that replaces ``eval_results/<version>/`` as a whole. A failure before the set is in place leaves
the previous output as it was; a rerun leaves no result file of an earlier run behind (each would be a
row in the app).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from airbench_mteb.report.leaderboard.board import Leaderboard
from airbench_mteb.report.leaderboard.eval_results import EVAL_RESULTS, eval_result_files
from airbench_mteb.report.leaderboard.page import render_page
from airbench_mteb.report.protocol import json_text, renderings, write_files

STEM = "leaderboard"
FILES = (f"{STEM}.json", f"{STEM}.md", f"{STEM}.csv", f"{STEM}.html")


def output_texts(board: Leaderboard, start: datetime) -> tuple[dict[str, str], dict[PurePosixPath, str]]:
    """(the four files' texts by name, the result files' texts by path under ``eval_results/<version>/``)."""
    tops = {**renderings(board, STEM), FILES[-1]: render_page(board.to_json())}
    version = PurePosixPath(EVAL_RESULTS, board.version)
    results = {relative.relative_to(version): json_text(content)
               for relative, content in eval_result_files(board, start)}
    return tops, results


def write_leaderboard(board: Leaderboard, out: Path, *, start: datetime | None = None) -> list[Path]:
    """The four files in ``out`` and one result file per row under ``out/eval_results/<version>/...`` (replacing
    that folder), their timestamps from ``start`` (default: now, UTC); returns the paths written."""
    tops, results = output_texts(board, start or datetime.now(timezone.utc))
    return write_files(out, tops, {str(PurePosixPath(EVAL_RESULTS, board.version)): results})
