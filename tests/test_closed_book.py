"""Closed-book splits (qrels withheld, as AIR-Bench test is): retrieved and saved, never scored."""

from __future__ import annotations

import json
import logging
import math
import zipfile
from pathlib import Path

import pytest

from airbench_mteb.cli import main
from tests.closed_book_run import NEWS_EN, closed_book_mirror, mirror_query_ids, run_bm25


@pytest.fixture(scope="module")
def mirror(airbench_mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return closed_book_mirror(airbench_mirror, tmp_path_factory.mktemp("closed_book_mirror"))


def _results(folder: Path) -> dict:
    (path,) = folder.glob(f"results/airbench-mteb__bm25/*/{NEWS_EN}.json")
    return json.loads(path.read_text())["scores"]


def test_mteb_run_scores_dev_saves_test_and_the_package_reproduces_dev(
        mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(mirror))  # restored after `run --data-dir` sets it
    predictions, results = tmp_path / "P", tmp_path / "R"
    with caplog.at_level(logging.WARNING, logger="airbench_mteb"):
        assert main(["run", "-m", "airbench-mteb/bm25", "-t", NEWS_EN, "--eval-splits", "dev", "test",
                     "--prediction-folder", str(predictions), "--output-folder", str(results),
                     "--data-dir", str(mirror)]) == 0
    scores = _results(results)
    dev, test = scores["dev"][0], scores["test"][0]
    assert 0 < dev["ndcg_at_10"] <= 1 and dev["main_score"] == dev["ndcg_at_10"]
    # no made-up numbers: the test split has its main score as NaN, no other metric, and says why
    assert math.isnan(test["main_score"]) and math.isnan(test["ndcg_at_10"])
    assert set(test) - {"hf_subset", "languages", "mteb_version", "evaluation_time"} == {"ndcg_at_10", "main_score",
                                                                                          "closed_book"}
    marker = test["closed_book"]
    assert marker["queries"] == 12 and marker["top_k"] == 1000
    assert marker["predictions"] == str(predictions / f"{NEWS_EN}_predictions.json")
    message = [r.getMessage() for r in caplog.records if "no qrels here" in r.getMessage()]
    assert len(message) == 1 and "package-submission" in message[0] and "\n" not in message[0]
    saved = json.loads((predictions / f"{NEWS_EN}_predictions.json").read_text())["default"]
    assert sorted(saved["test"]) == sorted(mirror_query_ids(mirror, NEWS_EN, "test"))  # no query dropped

    capsys.readouterr()
    assert main(["package-submission", "--predictions", str(predictions), "--out", str(tmp_path / "zip"),
                 "--data-dir", str(mirror)]) == 0
    package = Path(capsys.readouterr().out.strip())
    with zipfile.ZipFile(package) as archive:
        assert sorted(archive.namelist()) == ["qa/news/en_default_dev.json", "qa/news/en_default_test.json"]
        assert json.loads(archive.read("qa/news/en_default_test.json"))["search_results"] == saved["test"]
    assert main(["score-submission", str(package), "--data-dir", str(mirror), "--output",
                 str(tmp_path / "scores.json")]) == 0
    (scored,) = json.loads((tmp_path / "scores.json").read_text())
    assert scored["scores"]["ndcg_at_10"] == pytest.approx(dev["ndcg_at_10"], abs=1e-6)


def test_closed_book_rankings_equal_those_of_the_same_split_with_qrels(mirror: Path, airbench_mirror: Path,
                                                                       tmp_path: Path) -> None:
    closed = run_bm25(mirror, tmp_path / "closed", [NEWS_EN], ["test"])
    open_book = run_bm25(airbench_mirror, tmp_path / "open", [NEWS_EN], ["test"])
    read = lambda run: json.loads((run.predictions / f"{NEWS_EN}_predictions.json").read_text())  # noqa: E731
    assert read(closed)["default"]["test"] == read(open_book)["default"]["test"]
    scored = open_book.scores("airbench-mteb__bm25", NEWS_EN, "test")
    assert "closed_book" not in scored and 0 < scored["ndcg_at_10"] <= 1  # with qrels: scored as before


def test_without_a_prediction_folder_nothing_is_searched_and_the_message_says_so(
        mirror: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import mteb

    from tests.closed_book_run import data_dir

    with data_dir(mirror), caplog.at_level(logging.WARNING, logger="airbench_mteb"):
        result = mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), mteb.get_tasks(tasks=[NEWS_EN], eval_splits=["test"]),
                               cache=None, show_progress_bar=False)
    (test,) = result.task_results[0].scores["test"]
    assert math.isnan(test["main_score"])
    assert test["closed_book"]["predictions"] is None and test["closed_book"]["top_k"] == 0
    assert any("--prediction-folder" in r.getMessage() for r in caplog.records)
