"""Quiet when asked: with MTEB's ``show_progress_bar=False`` a plugin model draws no progress bar."""

from __future__ import annotations

from pathlib import Path

import mteb
import pytest

SHARED_DATA = Path("/work/shared/data")
BAR_MARKS = ("it/s]", "s/it]", "%|")  # what any tqdm bar line carries


def _evaluate_bm25(show_progress_bar: bool) -> float:
    task = mteb.get_task("CocktailNQUTD", hf_subsets=["human"])  # 800 documents, 80 queries
    results = mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), [task], cache=None,
                            show_progress_bar=show_progress_bar)
    return results.task_results[0].get_score()


def test_a_quiet_bm25_evaluation_prints_no_bar(monkeypatch: pytest.MonkeyPatch,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(SHARED_DATA))
    loud_score = _evaluate_bm25(show_progress_bar=True)
    loud = capfd.readouterr().err
    assert "BM25 index corpus" in loud and "BM25 search" in loud  # the bars exist: their absence below counts

    quiet_score = _evaluate_bm25(show_progress_bar=False)
    quiet = capfd.readouterr().err
    assert not [mark for mark in BAR_MARKS if mark in quiet], quiet[-500:]
    assert "BM25" not in quiet
    assert quiet_score == loud_score > 0
