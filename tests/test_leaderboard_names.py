"""Names are data in the leaderboard's output: never a path part, never markup; the output set written whole.

Boards are built from typed records (no model runs), written by ``write_leaderboard``, and read back as the
AIR-Bench app's loader reads them (``tests/test_leaderboard.py``'s oracle), as a Markdown table's reader
splits rows (unescaped ``|``) and as ``csv`` reads them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.folder_names import FOLDER_BYTES, check_distinct, folder_name
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.report import protocol as writer_module
from airbench_mteb.report.leaderboard.board import Leaderboard
from airbench_mteb.report.leaderboard.output import write_leaderboard
from airbench_mteb.report.leaderboard.table import Cell, Column, Row, Tab, leaderboard_average

VERSION = "AIR-Bench_24.05"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
COLUMNS = (Column("news_en", "AIR-Bench_24.05_qa_news_en", "news", "en", "default"),
           Column("news_zh", "AIR-Bench_24.05_qa_news_zh", "news", "zh", "default"))
HOSTILE = ["..", ".", "", "a/../../b", "/abs/path", "x" * 300, "語" * 100, "<b>bold</b>",
           '<img src=x onerror="alert(1)">', "pipe|name", "new\nline", "co*cktail *and* co*cktail", "NoReranker.",
           "a/b", "a__b", "Model"]


def board_of(rows: dict[tuple[str, str], tuple[float, float]]) -> Leaderboard:
    """A QA tab at nDCG@10 with the given rows' two scores (0-1)."""
    built = tuple(Row(retriever, reranker, {c.name: Cell(score) for c, score in zip(COLUMNS, scores, strict=True)},
                      leaderboard_average([s * 100 for s in scores]), 1)
                  for (retriever, reranker), scores in rows.items())
    tab = Tab("qa", "ndcg_at_10", COLUMNS, built)
    return Leaderboard(VERSION, "dev", {"qa": {"ndcg_at_10": tab}}, "test", {}, Resampling(n_resamples=99), "holm", 0.05)


def app_rows(out: Path) -> list[tuple[str, str]]:
    """The rows the app's loader finds: every results*.json under the version folder, one per timestamp."""
    by_timestamp = {}
    for root, _, files in os.walk(out / "eval_results" / VERSION):
        for name in files:
            if name.startswith("results") and name.endswith(".json"):
                items = json.loads(Path(root, name).read_text(encoding="utf-8"))
                by_timestamp[items[0]["config"]["timestamp"]] = (items[0]["config"]["retrieval_model"],
                                                                 items[0]["config"]["reranking_model"])
    return sorted(by_timestamp.values())


def test_hostile_names_stay_inside_their_folders_and_are_each_one_row(tmp_path: Path) -> None:
    rows = {(name, reranker): (0.5, 0.25) for name in HOSTILE for reranker in ("NoReranker", "..")}
    out = tmp_path / "out"
    paths = write_leaderboard(board_of(rows), out, start=START)
    version = (out / "eval_results" / VERSION).resolve()
    files = [p for p in paths if p.name.startswith("results_")]
    assert len(files) == len(rows)
    for path in files:
        assert path.resolve().parent.parent.parent == version, path  # <version>/<retriever>/<reranker>/file
        assert all(len(part.encode()) <= 255 for part in path.parts)
    assert sorted(p.resolve() for p in (out / "eval_results").rglob("results_*.json")) == sorted(
        p.resolve() for p in files)
    assert app_rows(out) == sorted(rows)


def _markdown_rows(text: str) -> list[list[str]]:
    """A Markdown table's rows as a GFM reader splits them: at ``|`` not escaped by a backslash."""
    lines = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| Rank")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def _unescaped(cell: str) -> str:
    """What a Markdown reader shows of an escaped cell: backslash escapes and the entities undone."""
    text = re.sub(r"\\(.)", r"\1", cell)
    text = re.sub(r"&#x([0-9A-F]+);", lambda m: chr(int(m.group(1), 16)), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def test_markdown_escapes_names_and_csv_quotes_them(tmp_path: Path) -> None:
    rows = {(name, "NoReranker"): (0.5, 0.25) for name in HOSTILE}
    write_leaderboard(board_of(rows), tmp_path, start=START)
    markdown = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    assert "<b>" not in markdown and "<img" not in markdown
    table = _markdown_rows(markdown)
    assert len(table) == len(rows) and {len(row) for row in table} == {5 + len(COLUMNS)}
    assert sorted(_unescaped(row[2]) for row in table) == sorted(name for name, _ in rows)
    assert not any(re.search(r"(?<!\\)[*_`]", row[2]) for row in table)  # no emphasis or code from a name
    with (tmp_path / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        read = list(csv.DictReader(handle))
    assert {line["retriever"] for line in read} == {name for name, _ in rows}
    assert all(line.startswith('"qa"') for line in (tmp_path / "leaderboard.csv").read_text().splitlines()[1:]
               if line.startswith('"'))
    html = (tmp_path / "leaderboard.html").read_text(encoding="utf-8")
    assert "<b>bold" not in html and "<img src=x" not in html


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_a_folder_name_is_one_bounded_path_part(name: str) -> None:
    folder = folder_name(name)
    assert folder and "/" not in folder and not folder.startswith(".") and "\x00" not in folder
    assert len(folder.encode("utf-8")) <= FOLDER_BYTES


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=2, max_size=6, unique=True))
def test_names_get_distinct_folders_or_are_refused(names: list[str]) -> None:
    try:
        folders = check_distinct("models", [(name,) for name in names])
    except DatasetError as error:
        assert "would share the folder" in str(error) and "\n" not in str(error)
        return
    assert len({folder[0].casefold() for folder in folders.values()}) == len(names)


def test_names_that_only_differ_in_case_are_refused() -> None:
    with pytest.raises(DatasetError, match="would share the folder"):
        check_distinct("rows", [("Model", "NoReranker"), ("model", "NoReranker")])


@pytest.mark.parametrize("failing_write", [1, 3, 5])  # a result file, the last of them, a top file
def test_a_failure_leaves_the_previous_output_and_a_rerun_leaves_no_stale_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_write: int) -> None:
    out = tmp_path / "out"
    write_leaderboard(board_of({("a", "NoReranker"): (0.5, 0.5), ("b", "NoReranker"): (0.1, 0.2)}), out, start=START)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    calls = []
    safe_write = writer_module.atomic_write

    def failing(path: Path) -> object:
        calls.append(path)
        if len(calls) == failing_write:
            raise OSError("disk full")
        return safe_write(path)
    monkeypatch.setattr(writer_module, "atomic_write", failing)  # the leaderboard's files go through the one writer
    rows = {("c", "NoReranker"): (0.5, 0.5), ("d", "NoReranker"): (0.5, 0.5), ("e", "x"): (0.5, 0.5)}
    with pytest.raises(OSError, match="disk full"):
        write_leaderboard(board_of(rows), out, start=START)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    monkeypatch.undo()
    write_leaderboard(board_of({("c", "NoReranker"): (0.5, 0.5)}), out, start=START)
    assert app_rows(out) == [("c", "NoReranker")]
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]  # no staging left


def test_a_refused_write_makes_no_folder(tmp_path: Path) -> None:
    (tmp_path / "leaderboard.json").mkdir()  # in the way of a file: refused before anything is made
    with pytest.raises(DatasetError, match=r"leaderboard\.json"):
        write_leaderboard(board_of({("a", "NoReranker"): (0.5, 0.5)}), tmp_path, start=START)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leaderboard.json"]


def test_csv_quoting_round_trips_every_text() -> None:
    from airbench_mteb.report.leaderboard.board import to_csv

    names = {(name, "NoReranker"): (0.5, 0.25) for name in ('a,"b"', "line\r\nbreak", "=1+1")}
    read = list(csv.DictReader(io.StringIO(to_csv(board_of(names)), newline="")))
    assert {line["retriever"] for line in read} == {name for name, _ in names}
