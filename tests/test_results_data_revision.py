"""Results remember the data they came from: a rerun on other data never reports the old numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mteb
import pytest
from mteb.cache import ResultCache

from airbench_mteb.catalog import airbench_entries
from airbench_mteb.data import DatasetError
from airbench_mteb.data.airbench_source import mirror_file

NAME = "AIR-Bench_24.05_qa_news_en"


def _run(mirror: Path, results: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> mteb.TaskResult:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(mirror))
    tasks = mteb.get_tasks(tasks=[NAME], eval_splits=["dev"])
    result = mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), tasks, cache=ResultCache(results),
                           show_progress_bar=False, **kwargs)
    return result.task_results[0]


def test_a_rerun_on_other_data_refuses_the_old_scores_and_recomputes_when_asked(
        airbench_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in airbench_entries() if e.task_name == NAME)
    other = tmp_path / "other"
    shutil.copytree(airbench_mirror, other)
    qrels = mirror_file(other, entry, entry.qrels_location("dev"))
    # the other mirror judges a different document relevant for every query: its scores must differ
    rows = [json.loads(line) for line in qrels.read_text().splitlines()]
    qrels.write_text("".join(json.dumps({**r, "relevance": 1 - r["relevance"]}) + "\n" for r in rows))
    results = tmp_path / "results"

    first = _run(airbench_mirror, results, monkeypatch)
    assert first.dataset_revision.startswith("mirror-")
    again = _run(airbench_mirror, results, monkeypatch)  # same data: MTEB's cached result, same numbers
    assert again.get_score() == first.get_score()

    with pytest.raises(DatasetError, match=r"computed on other data.*--overwrite-strategy always"):
        _run(other, results, monkeypatch)
    recomputed = _run(other, results, monkeypatch, overwrite_strategy="always")
    assert recomputed.dataset_revision != first.dataset_revision
    assert recomputed.get_score() != pytest.approx(first.get_score())
