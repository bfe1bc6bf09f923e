"""Closed-book splits (qrels withheld, as AIR-Bench test is): retrieved and saved, never scored."""

from __future__ import annotations

import json
import logging
import math
import zipfile
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from airbench_mteb.cli import main
from airbench_mteb.data.airbench_source import mirror_file
from airbench_mteb.data.errors import DatasetError
from tests.closed_book_run import NEWS_EN, closed_book_mirror, mirror_qrels, mirror_query_ids, run_bm25


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
    saved = json.loads((predictions / f"{NEWS_EN}_predictions.json").read_text())["default"]
    assert sorted(saved["test"]) == sorted(mirror_query_ids(mirror, NEWS_EN, "test"))  # no query dropped
    kept = max(len(docs) for docs in saved["test"].values())  # the depth kept: all 1,000 asked, as many as matched
    marker = test["closed_book"]
    assert marker["queries"] == 12 and marker["top_k"] == kept
    assert marker["predictions"] == str(predictions / f"{NEWS_EN}_predictions.json")
    message = [r.getMessage() for r in caplog.records if "no qrels here" in r.getMessage()]
    assert len(message) == 1 and "package-submission" in message[0] and "\n" not in message[0]
    assert f"the top {kept} of each of its 12 queries" in message[0]

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


def test_a_closed_book_run_says_the_same_in_its_log_and_its_summary(
        mirror: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 36: the log said "nothing retrieved" and the summary "test closed-book (searched, not scored)"
    base = ["run", "-m", "airbench-mteb/bm25", "-t", NEWS_EN, "--eval-splits", "test", "--data-dir", str(mirror)]
    with caplog.at_level(logging.WARNING, logger="airbench_mteb"):
        assert main([*base, "--output-folder", str(tmp_path / "R1")]) == 0
    (logged,) = [r.getMessage() for r in caplog.records if "no qrels here" in r.getMessage()]
    (summary,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(NEWS_EN)]
    assert "not searched (no --prediction-folder to keep its rankings)" in logged
    assert "test closed-book, not scored: not searched (no --prediction-folder to keep its rankings)" in summary
    assert "searched," not in logged + summary

    caplog.clear()
    predictions = tmp_path / "P" / f"{NEWS_EN}_predictions.json"
    with caplog.at_level(logging.WARNING, logger="airbench_mteb"):
        assert main([*base, "--output-folder", str(tmp_path / "R2"), "--prediction-folder", str(tmp_path / "P")]) == 0
    (logged,) = [r.getMessage() for r in caplog.records if "no qrels here" in r.getMessage()]
    (summary,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(NEWS_EN)]
    kept = max(len(docs) for docs in json.loads(predictions.read_text())["default"]["test"].values())
    said = f"searched, the top {kept} of each of its 12 queries saved in {predictions}"
    assert said in logged and f"test closed-book, not scored: {said}" in summary


TEST_QRELS = "AIR-Bench/qrels-qa_news_en"


def _refused(kind: str) -> Exception:
    """What the installed ``datasets``/``huggingface_hub`` raise when the hub refuses a token the test qrels."""
    import httpx
    from datasets.exceptions import DatasetNotFoundError
    from huggingface_hub.errors import GatedRepoError

    url = f"https://huggingface.co/api/datasets/{TEST_QRELS}"
    if kind == "private":  # datasets.load: RepositoryNotFoundError -> DatasetNotFoundError
        return DatasetNotFoundError(f"Dataset '{TEST_QRELS}' doesn't exist on the Hub or cannot be accessed.")
    if kind == "gated":  # datasets.load: GatedRepoError (403) -> DatasetNotFoundError
        return DatasetNotFoundError(f"Dataset '{TEST_QRELS}' is a gated dataset on the Hub. Visit the dataset page "
                                    f"at https://huggingface.co/datasets/{TEST_QRELS} to ask for access.")
    return GatedRepoError(f"403 Client Error. Cannot access gated repo for url {url}.",  # from a file download
                          response=httpx.Response(403, request=httpx.Request("GET", url)))


def _hub_serving(mirror: Path, folder: Path, test_qrels: Exception, calls: list) -> Any:
    """``datasets.load_dataset`` as the hub answers a user with a saved token: the mirror's splits as memory-mapped
    Arrow, and ``test_qrels`` raised for the test qrels."""
    from datasets import Dataset, load_from_disk

    from tests.closed_book_run import entry, read_jsonl

    news = entry(NEWS_EN)

    def load_dataset(path: str, name: str, *, split: str, revision: str, token: str | None) -> Dataset:
        calls.append((path, split, token))
        if (path, split) == news.qrels_location("test"):
            raise test_qrels
        saved = folder / f"{path}_{split}".replace("/", "_")
        if not saved.exists():
            Dataset.from_list(read_jsonl(mirror_file(mirror, news, (path, split)))).save_to_disk(saved)
        return load_from_disk(saved)

    return load_dataset


def _hub_run(mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test_qrels: Exception,
             calls: list) -> Any:
    import datasets
    import huggingface_hub
    import mteb

    monkeypatch.delenv("AIRBENCH_MTEB_DATA_DIR", raising=False)  # the hub branch
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_saved_by_login")
    monkeypatch.setattr(datasets, "load_dataset", _hub_serving(mirror, tmp_path / "hub", test_qrels, calls))
    return mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), mteb.get_tasks(tasks=[NEWS_EN], eval_splits=["dev", "test"]),
                         cache=None, prediction_folder=tmp_path / "P", show_progress_bar=False)


@pytest.mark.parametrize("refusal", ["private", "gated", "gated-file"])
def test_a_saved_token_refused_the_test_qrels_scores_dev_and_searches_test_closed_book(
        mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        refusal: str) -> None:
    # before: the refusal stopped the whole task with DatasetError, dev scores lost
    calls: list = []
    with caplog.at_level(logging.INFO, logger="airbench_mteb"):
        result = _hub_run(mirror, tmp_path, monkeypatch, _refused(refusal), calls)
    assert (TEST_QRELS, "qrels_default_test", "hf_saved_by_login") in calls  # the saved token was tried

    scores = result.task_results[0].scores
    saved = json.loads((tmp_path / "P" / f"{NEWS_EN}_predictions.json").read_text())["default"]
    qrels = mirror_qrels(mirror, NEWS_EN, "dev")
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(saved["dev"])
    assert scores["dev"][0]["ndcg_at_10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in per_query.values()) / 12,
                                                           abs=1e-5)
    (test,) = scores["test"]
    assert math.isnan(test["main_score"]) and test["closed_book"]["queries"] == 12
    assert sorted(saved["test"]) == sorted(mirror_query_ids(mirror, NEWS_EN, "test"))
    refused = [r.getMessage() for r in caplog.records if "cannot read" in r.getMessage()]
    assert len(refused) == 1 and TEST_QRELS in refused[0] and "closed-book" in refused[0]


def test_an_unreachable_hub_is_still_an_error_not_a_closed_book_split(
        mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    down = ConnectionError(f"Couldn't reach '{TEST_QRELS}' on the Hub (ConnectError)")
    with pytest.raises(DatasetError, match=f"{TEST_QRELS}.*Couldn't reach"):
        _hub_run(mirror, tmp_path, monkeypatch, down, [])
