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
# ... and this plugin's two additions, which the leaderboard's reader ignores (it reads fields by name)
PLUGIN_FIELDS = {"dataset_revision", "top_k"}


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
    revisions = {task: json.loads((bm25_run.predictions / f"{task}_predictions.json").read_text())["dataset_revision"]
                 for task in (NEWS_EN, ARXIV_LLAMA2)}
    for name, data in members.items():
        assert set(data) == OFFICIAL_FIELDS | PLUGIN_FIELDS
        assert data["top_k"] == 1000
        assert data["dataset_revision"] == revisions[NEWS_EN if data["task_type"] == "qa" else ARXIV_LLAMA2]
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


# --- issue 18: one validator for both commands, predictions tied to their data ------------------------------------

def _rezip(package: Path, target: Path, edit: Callable[[str, dict], None] = lambda name, data: None,
           extra: tuple[tuple[str, bytes], ...] = ()) -> Path:
    """A copy of ``package`` with ``edit`` applied to every member's JSON, and ``extra`` members appended."""
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(target, "w") as out:
        for name in source.namelist():
            data = json.loads(source.read(name))
            edit(name, data)
            out.writestr(name, json.dumps(data))
        for name, raw in extra:
            out.writestr(name, raw)
    return target


def _news_dev(edit: Callable[[dict], None]) -> Callable[[str, dict], None]:
    return lambda name, data: edit(data) if name == "qa/news/en_default_dev.json" else None


def test_package_refuses_predictions_of_other_data(bm25_run: Run, tmp_path: Path) -> None:
    """Finding 2: after the corpus changed, the old rankings are not packaged (they scored 0.30984 on the new data)."""
    from airbench_mteb.data.airbench_source import mirror_file
    from tests.closed_book_run import entry

    changed = tmp_path / "mirror"
    shutil.copytree(bm25_run.mirror, changed)
    news = entry(NEWS_EN)
    corpus = mirror_file(changed, news, news.corpus_location())
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("doc-0", "doc-0-renamed", 1), encoding="utf-8")
    recorded = json.loads((bm25_run.predictions / f"{NEWS_EN}_predictions.json").read_text())["dataset_revision"]
    with data_dir(changed), pytest.raises(DatasetError) as error:
        package_submission(bm25_run.predictions, tmp_path / "out")
    assert recorded in str(error.value) and "mirror-" in str(error.value).replace(recorded, "")
    assert f"{NEWS_EN}_predictions.json" in str(error.value)


def test_package_refuses_predictions_that_do_not_name_their_data(bm25_run: Run, tmp_path: Path) -> None:
    folder = _copy_predictions(bm25_run, tmp_path)
    _edit(folder / f"{ARXIV_LLAMA2}_predictions.json", lambda d: d.pop("dataset_revision"))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match="--prediction-folder") as error:
        package_submission(folder, tmp_path / "out")
    assert f"{ARXIV_LLAMA2}_predictions.json" in str(error.value)


def test_score_submission_checks_the_data_of_each_member(bm25_run: Run, package: Path, tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """A member computed on other data is refused; an official script's member (no dataset_revision, no top_k) is
    scored as it is, with one warning line."""
    other = _rezip(package, tmp_path / "other.zip", _news_dev(lambda d: d.update(dataset_revision="mirror-0123")))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match="'mirror-0123'") as error:
        score_submission(other)
    assert "qa/news/en_default_dev.json" in str(error.value)

    def strip(name: str, data: dict) -> None:
        for field in PLUGIN_FIELDS:
            del data[field]
    official = _rezip(package, tmp_path / "official.zip", strip)
    with data_dir(bm25_run.mirror):
        assert ({s.task_name: s.scores for s in score_submission(official)}
                == {s.task_name: s.scores for s in score_submission(package)})
    warnings = [r.getMessage() for r in caplog.records if "do not say which data" in r.getMessage()]
    assert warnings == [f"{official}: 3 of 3 files do not say which data they were computed on (made by the official "
                        "scripts?); scored as they are"]


def test_score_submission_scores_every_query_of_the_split(bm25_run: Run, package: Path, tmp_path: Path) -> None:
    """Finding 3: a dev file without some queries was scored over the others only (0.37624 where mteb run said
    0.30984); now it is refused as package-submission refuses it. A query with no results counts as a miss."""
    partial = _rezip(package, tmp_path / "partial.zip", _news_dev(lambda d: d["search_results"].pop("q-dev-4")))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match=r"1 of the 12 queries .*'q-dev-4'") as error:
        score_submission(partial)
    assert "qa/news/en_default_dev.json" in str(error.value)
    emptied = _rezip(package, tmp_path / "emptied.zip", _news_dev(lambda d: d["search_results"].update({"q-dev-4": {}})))
    with data_dir(bm25_run.mirror):
        scores = {s.task_name: s.scores for s in score_submission(emptied)}
    assert scores[NEWS_EN]["ndcg_at_10"] == pytest.approx(11 / 12, abs=1e-5)  # BM25 is perfect on the mirror


def test_score_submission_refuses_a_zip_with_a_member_twice(bm25_run: Run, package: Path, tmp_path: Path) -> None:
    """Finding 3: a zip holding one member name twice was scored twice."""
    with zipfile.ZipFile(package) as archive:
        repeated = ("qa/news/en_default_dev.json", archive.read("qa/news/en_default_dev.json"))
    twice = _rezip(package, tmp_path / "twice.zip", extra=(repeated,))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match=r"member qa/news/en_default_dev\.json is in "
                                                                      "the zip 2 times"):
        score_submission(twice)


def _first_ranked(folder: Path, task: str, split: str) -> tuple[str, str]:
    run = json.loads((folder / f"{task}_predictions.json").read_text())["default"][split]
    qid = sorted(run)[0]
    return qid, next(iter(run[qid]))


@pytest.mark.parametrize(("case", "message"), [
    ("nan", "has score NaN"), ("infinity", "has score Infinity"), ("bool", "has score true"),
    ("string", 'has score "0.5"'), ("null", "has score null"), ("unknown document", "is not in the corpus"),
    ("duplicated document", "appears twice")])
def test_package_refuses_bad_rankings_naming_query_and_document(bm25_run: Run, tmp_path: Path, case: str,
                                                                message: str) -> None:
    """Findings 7 and 9: NaN/infinite scores were written as invalid JSON, a bool became 1.0, a string or null
    score was a traceback, unknown doc ids passed, a repeated doc key kept its last value."""
    folder = _copy_predictions(bm25_run, tmp_path)
    path = folder / f"{NEWS_EN}_predictions.json"
    qid, doc = _first_ranked(folder, NEWS_EN, "dev")
    values = {"nan": float("nan"), "infinity": float("inf"), "bool": True, "string": "0.5", "null": None}
    if case in values:
        _edit(path, lambda d: d["default"]["dev"][qid].update({doc: values[case]}))
    elif case == "unknown document":
        doc = "doc-nowhere"
        _edit(path, lambda d: d["default"]["dev"][qid].update({doc: 0.5}))
    else:
        text = path.read_text()
        path.write_text(text.replace(f'"{qid}": {{', f'"{qid}": {{"{doc}": 0.5, ', 1))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match=message) as error:
        package_submission(folder, tmp_path / "out")
    assert path.name in str(error.value) and repr(qid) in str(error.value) and repr(doc) in str(error.value)
    assert not (tmp_path / "out").exists()


def test_package_of_dev_rankings_only_needs_dev_only(bm25_run: Run, tmp_path: Path) -> None:
    """Finding 7: a folder with dev rankings only gave a zip without test (the leaderboard scores test)."""
    folder = _copy_predictions(bm25_run, tmp_path)
    _edit(folder / f"{NEWS_EN}_predictions.json", lambda d: d["default"].pop("test"))
    with data_dir(bm25_run.mirror):
        with pytest.raises(DatasetError, match=f"no test rankings of {NEWS_EN}"):
            package_submission(folder, tmp_path / "out")
        dev_only = package_submission(bm25_run.predictions, tmp_path / "out", dev_only=True)
        with zipfile.ZipFile(dev_only) as archive:
            assert sorted(archive.namelist()) == ["long-doc/arxiv/en_llama2_dev.json", "qa/news/en_default_dev.json"]
        with pytest.raises(DatasetError, match="--dev-only"):
            score_submission(dev_only)
        assert {s.task_name for s in score_submission(dev_only, dev_only=True)} == {NEWS_EN, ARXIV_LLAMA2}


def test_score_submission_refuses_more_results_than_the_recorded_top_k(bm25_run: Run, package: Path,
                                                                         tmp_path: Path) -> None:
    deeper = _rezip(package, tmp_path / "deeper.zip", _news_dev(lambda d: d.update(top_k=2)))
    with data_dir(bm25_run.mirror), pytest.raises(DatasetError, match="more than the top_k 2"):
        score_submission(deeper)


@pytest.mark.parametrize("case", ["string score", "null score", "model name with a slash", "out is a file",
                                  "empty search results", "output is a folder", "truncated zip", "missing path",
                                  "not a zip"])
def test_cli_says_one_line_naming_the_culprit(bm25_run: Run, package: Path, tmp_path: Path, case: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Findings 9 and 11: tracebacks, and one message for a damaged zip and a missing path."""
    folder = _copy_predictions(bm25_run, tmp_path)
    news = folder / f"{NEWS_EN}_predictions.json"
    qid, doc = _first_ranked(folder, NEWS_EN, "dev")
    pack = ["package-submission", "--predictions", str(folder), "--out", str(tmp_path / "out")]
    score = ["score-submission", str(package)]
    if case in ("string score", "null score"):
        _edit(news, lambda d: d["default"]["dev"][qid].update({doc: "high" if case == "string score" else None}))
        argv, culprit = pack, f"id {qid!r}: document {doc!r} has score"
    elif case == "model name with a slash":
        argv, culprit = [*pack, "--model-name", "a/b"], "'a/b'"
    elif case == "out is a file":
        (tmp_path / "out").write_text("")
        argv, culprit = pack, str(tmp_path / "out")
    elif case == "empty search results":
        emptied = _rezip(package, tmp_path / "emptied.zip", _news_dev(lambda d: d.update(search_results={})))
        argv, culprit = ["score-submission", str(emptied)], "12 of the 12 queries"
    elif case == "output is a folder":
        argv, culprit = [*score, "--output", str(tmp_path)], str(tmp_path)
    elif case == "truncated zip":
        (tmp_path / "cut.zip").write_bytes(package.read_bytes()[:200])
        argv, culprit = ["score-submission", str(tmp_path / "cut.zip")], "damaged zip file"
    elif case == "missing path":
        argv, culprit = ["score-submission", str(tmp_path / "nowhere.zip")], "not found"
    else:
        (tmp_path / "notes.txt").write_text("not a zip")
        argv, culprit = ["score-submission", str(tmp_path / "notes.txt")], "neither a zip file nor a folder"
    capsys.readouterr()
    assert main([*argv, "--data-dir", str(bm25_run.mirror)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and culprit in err, err
