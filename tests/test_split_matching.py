"""Requested splits are matched to each task's own, before any work starts (issue 14, finding 10)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mteb
import pytest

from airbench_mteb.cli import main

QA = "AIR-Bench_24.05_qa_news_en"  # dev and test
LONG_DOC = "AIR-Bench_24.05_long-doc_arxiv_en_llama2"  # dev only


def test_dev_test_over_a_qa_and_a_long_doc_task_evaluates_each_on_its_own_splits(airbench_mirror: Path,
                                                                                tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert main(["run", "-m", "airbench-mteb/bm25", "-t", QA, LONG_DOC, "--eval-splits", "dev", "test",
                 "--data-dir", str(airbench_mirror), "--output-folder", str(out)]) == 0
    splits = {path.stem: set(json.loads(path.read_text())["scores"]) for path in out.rglob("AIR-Bench_*.json")}
    assert splits == {QA: {"dev", "test"}, LONG_DOC: {"dev"}}


def test_a_task_with_none_of_the_requested_splits_is_skipped_before_loading(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        (task,) = mteb.get_tasks(tasks=[LONG_DOC], eval_splits=["test"])
    assert list(task.eval_splits) == []
    assert f"{LONG_DOC}: skipped, it has none of the requested splits test (its splits: dev)" in caplog.text
    task.load_data()  # nothing to read: no mirror is even set
    assert task.dataset == {}
