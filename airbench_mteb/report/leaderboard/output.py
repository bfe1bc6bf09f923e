"""Writing the leaderboard: ``leaderboard.json``, ``.md``, ``.csv``, ``leaderboard.html`` and the app's result files."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from airbench_mteb.data.files import atomic_write, make_folder
from airbench_mteb.report.leaderboard.eval_results import EVAL_RESULTS, eval_result_files
from airbench_mteb.report.leaderboard.page import render_page
from airbench_mteb.report.leaderboard.render import to_csv, to_json, to_markdown
from airbench_mteb.report.leaderboard.table import Leaderboard

FILES = ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "leaderboard.html")


def write_leaderboard(board: Leaderboard, out: Path, *, start: datetime | None = None) -> list[Path]:
    """The four files in ``out`` and one result file per row under ``out/eval_results/<version>/...``, their
    timestamps from ``start`` (default: now, UTC), replacing the result files an earlier run wrote there; returns
    the paths written."""
    make_folder(out)
    data = to_json(board)
    texts = (json.dumps(data, indent=1, ensure_ascii=False) + "\n", to_markdown(board), to_csv(board),
             render_page(data))
    paths = [out / name for name in FILES]
    for path, text in zip(paths, texts, strict=True):
        with atomic_write(path) as handle:
            handle.write(text)
    # an earlier run's files would stay beside the new ones, each its own row in the app
    for old in sorted((out / EVAL_RESULTS / board.version).glob("*/*/results_*.json")):
        old.unlink()
    for relative, content in eval_result_files(board, start or datetime.now(timezone.utc)):
        path = out.joinpath(*relative.parts)
        make_folder(path.parent)
        with atomic_write(path) as handle:
            handle.write(json.dumps(content, indent=1, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths
