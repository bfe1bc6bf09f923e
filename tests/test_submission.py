"""Leaderboard packages: the official layout, dev scores equal to `mteb run`, and errors that name the culprit."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import pytrec_eval

from airbench_mteb.cli import main
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.submission import package_submission, score_submission
from tests.closed_book_run import (
    ARXIV_LLAMA2,
    FINANCE_ZH_2404,
    NEWS_EN,
    Run,
    closed_book_mirror,
    data_dir,
    mirror_qrels,
    mirror_query_ids,
    run_bm25,
)

# The fields of the official runner's search-results files (air-benchmark 0.1.0, Evaluator.save_search_results).
OFFICIAL_FIELDS = {"model_name", "reranker_name", "benchmark_version", "task_type", "domain", "language",
                   "dataset_name", "split", "search_results"}


@pytest.fixture(scope="module")
def bm25_run(airbench_mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    mirror = closed_book_mirror(airbench_mirror, tmp_path_factory.mktemp("closed_book_mirror"))
    return run_bm25(mirror, tmp_path_factory.mktemp("bm25"), [NEWS_EN, ARXIV_LLAMA2], ["dev", "test"])


@pytest.fixture(scope="module")
def package(bm25_run: Run, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with data_dir(bm25_run.mirror):
        return package_submission(bm25_run.predictions, tmp_path_factory.mktemp("package"))


def _pytrec_mean(qrels: dict, run: dict, measure: str) -> float:
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    key = measure.replace(".", "_")
    return sum(v[key] for v in per_query.values()) / len(per_query)


def test_package_has_the_leaderboard_layout(bm25_run: Run, package: Path) -> None:
    assert package.name == "bm25_NoReranker.zip"
    with zipfile.ZipFile(package) as archive:
        members = {name: json.loads(archive.read(name)) for name in archive.namelist()}
    assert set(members) == {"qa/news/en_default_dev.json", "qa/news/en_default_test.json",
                            "long-doc/arxiv/en_llama2_dev.json"}
    for name, data in members.items():
        assert set(data) == OFFICIAL_FIELDS
        assert name == f"{data['task_type']}/{data['domain']}/{data['language']}_{data['dataset_name']}_{data['split']}.json"
        assert (data["model_name"], data["reranker_name"], data["benchmark_version"]) == ("bm25", "NoReranker",
                                                                                            "AIR-Bench_24.05")
        task = NEWS_EN if data["task_type"] == "qa" else ARXIV_LLAMA2
        assert sorted(data["search_results"]) == sorted(mirror_query_ids(bm25_run.mirror, task, data["split"]))
        for docs in data["search_results"].values():
            assert 0 < len(docs) <= 1000
            assert list(docs.values()) == sorted(docs.values(), reverse=True)
    # the closed-book test split is packaged exactly as mteb predicted it
    predicted = json.loads((bm25_run.predictions / f"{NEWS_EN}_predictions.json").read_text())["default"]["test"]
    assert members["qa/news/en_default_test.json"]["search_results"] == predicted


def test_score_submission_reproduces_the_dev_scores_of_mteb_run(bm25_run: Run, package: Path) -> None:
    with data_dir(bm25_run.mirror):
        scores = {s.task_name: s for s in score_submission(package)}
    assert set(scores) == {NEWS_EN, ARXIV_LLAMA2}  # test files are skipped: no dev qrels for them
    for task, main_score in ((NEWS_EN, "ndcg_at_10"), (ARXIV_LLAMA2, "recall_at_10")):
        mteb_scores = bm25_run.scores("airbench-mteb__bm25", task, "dev")
        assert scores[task].main_score == main_score
        for metric in ("ndcg_at_10", "recall_at_10", "map_at_100", "mrr_at_10", "precision_at_1"):
            assert scores[task].scores[metric] == pytest.approx(mteb_scores[metric], abs=1e-6), (task, metric)


def test_score_submission_scores_a_worse_ranking_as_pytrec_eval_does(bm25_run: Run, package: Path,
                                                                      tmp_path: Path) -> None:
    # BM25 is perfect on the mirror: demote each query's best document to rank 3 so that scores move
    worse = tmp_path / "bm25_NoReranker.zip"
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(worse, "w") as target:
        for name in source.namelist():
            data = json.loads(source.read(name))
            for docs in data["search_results"].values():
                ranked = list(docs)
                if len(ranked) >= 3:
                    docs[ranked[0]], docs[ranked[2]] = docs[ranked[2]], docs[ranked[0]]
            target.writestr(name, json.dumps(data))
            if name == "qa/news/en_default_dev.json":
                news_dev = data["search_results"]
    with data_dir(bm25_run.mirror):
        scores = {s.task_name: s.scores for s in score_submission(worse)}
    qrels = mirror_qrels(bm25_run.mirror, NEWS_EN, "dev")
    for metric, measure in (("ndcg_at_10", "ndcg_cut.10"), ("map_at_10", "map_cut.10"), ("precision_at_1", "P.1")):
        independent = _pytrec_mean(qrels, news_dev, measure)
        assert scores[NEWS_EN][metric] == pytest.approx(independent, abs=1e-5)
    assert 0 < scores[NEWS_EN]["ndcg_at_10"] < 1


def test_score_submission_reads_a_folder_written_like_the_official_runner(bm25_run: Run, package: Path,
                                                                         tmp_path: Path) -> None:
    folder = tmp_path / "search_results" / "bm25" / "NoReranker"
    with zipfile.ZipFile(package) as archive:
        for name in archive.namelist():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(json.loads(archive.read(name)), indent=4))  # as its json.dump(indent=4)
    with data_dir(bm25_run.mirror):
        from_folder = {s.task_name: s.scores for s in score_submission(folder)}
        from_zip = {s.task_name: s.scores for s in score_submission(package)}
    assert from_folder == from_zip


def _copy_predictions(run: Run, tmp_path: Path) -> Path:
    folder = tmp_path / "predictions"
    shutil.copytree(run.predictions, folder)
    return folder


def _edit(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("case", ["mixed models", "not AIR-Bench", "missing query", "foreign query", "mixed versions"])
def test_package_refuses_bad_predictions_naming_the_file(bm25_run: Run, tmp_path: Path, case: str) -> None:
    folder = _copy_predictions(bm25_run, tmp_path)
    news = folder / f"{NEWS_EN}_predictions.json"
    culprit = news
    if case == "mixed models":
        _edit(news, lambda d: d["mteb_model_meta"].update(model_name="someone/else"))
    elif case == "not AIR-Bench":
        culprit = news.rename(folder / "CocktailNQUTD_predictions.json")
    elif case == "missing query":
        _edit(news, lambda d: d["default"]["test"].pop("q-test-3"))
    elif case == "foreign query":  # a dev query inside the test file (AIR-Bench issue #49)
        _edit(news, lambda d: d["default"]["test"].update({"q-dev-0": {"doc-1": 1.0}}))
    else:
        culprit = folder / f"{FINANCE_ZH_2404}_predictions.json"
        shutil.copy(news, culprit)
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError) as error:
        package_submission(folder, tmp_path / "out")
    assert culprit.name in str(error.value)
    if "query" in case:
        assert ("q-test-3" if case == "missing query" else "q-dev-0") in str(error.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_cli_builds_refuses_to_overwrite_and_scores(bm25_run: Run, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    args = ["package-submission", "--predictions", str(bm25_run.predictions), "--out", str(tmp_path),
            "--model-name", "my-bm25", "--data-dir", str(bm25_run.mirror)]
    assert main(args) == 0
    package = tmp_path / "my-bm25_NoReranker.zip"
    assert package.is_file()
    before = package.read_bytes()
    assert main(args) == 2
    assert str(package) in capsys.readouterr().err
    assert package.read_bytes() == before
    assert main([*args, "--overwrite", "--top-k", "100"]) == 0
    with zipfile.ZipFile(package) as archive:
        data = json.loads(archive.read("qa/news/en_default_dev.json"))
    assert data["model_name"] == "my-bm25" and max(len(d) for d in data["search_results"].values()) <= 100
    capsys.readouterr()
    assert main(["score-submission", str(package), "--data-dir", str(bm25_run.mirror)]) == 0
    lines = capsys.readouterr().out.splitlines()
    mteb_ndcg = bm25_run.scores("airbench-mteb__bm25", NEWS_EN, "dev")["ndcg_at_10"]
    assert f"{NEWS_EN}\tdev\tndcg_at_10\t{mteb_ndcg:.5f}" in lines


def test_score_submission_refuses_a_misplaced_file(bm25_run: Run, package: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(bad, "w") as target:
        for name in source.namelist():
            target.writestr(name.replace("qa/news/", "qa/law/"), source.read(name))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match=r"qa/law/en_default_dev\.json"):
        score_submission(bad)


@pytest.mark.parametrize(("case", "message"), [
    ("no split", "field 'split'"), ("infinite score", "not a finite number"),
    ("unknown dataset", "no qa dataset 'nowhere'"), ("mixed models", "one model, reranker and version")])
def test_score_submission_names_the_bad_file(bm25_run: Run, package: Path, tmp_path: Path, case: str,
                                             message: str) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(bad, "w") as target:
        for name in source.namelist():
            data = json.loads(source.read(name))
            if name == "qa/news/en_default_dev.json":
                if case == "no split":
                    del data["split"]
                elif case == "infinite score":
                    docs = next(iter(data["search_results"].values()))
                    docs[next(iter(docs))] = float("inf")
                elif case == "unknown dataset":
                    data["dataset_name"], name = "nowhere", "qa/news/en_nowhere_dev.json"
                else:
                    data["model_name"] = "other"
            target.writestr(name, json.dumps(data))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError) as error:
        score_submission(bad)
    assert message in str(error.value)
    assert "qa/news/en_" in str(error.value)
