"""Results remember the data they came from: a rerun on other data never reports the old numbers."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import mteb
import pytest
from mteb.cache import ResultCache

from airbench_mteb.catalog import airbench_entries
from airbench_mteb.data import DatasetError
from airbench_mteb.data.airbench_source import mirror_file
from tests.conftest import SAMPLE_DATA

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


# --- issue 18, finding 1: every family's results are tied to the content of the files read ---------

def _cocktail_copy(tmp_path: Path) -> Path:
    """A data dir holding a copy of co*cktail's NQ-UTD (800 documents per source, 80 test queries)."""
    root = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA / "cocktail" / "nq-utd", root / "cocktail" / "nq-utd")
    return root


def _cocktail_bm25(root: Path, results: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> mteb.TaskResult:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(root))
    task = mteb.get_task("CocktailNQUTD", eval_splits=["test"], hf_subsets=["human"])
    return mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), [task], cache=ResultCache(results),
                         show_progress_bar=False, **kwargs).task_results[0]


def test_cocktail_rerun_after_qrels_lost_half_their_lines_refuses_the_old_score(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, results = _cocktail_copy(tmp_path), tmp_path / "results"
    first = _cocktail_bm25(root, results, monkeypatch)
    assert first.dataset_revision.startswith("files-")
    qrels = root / "cocktail" / "nq-utd" / "qrels" / "test.tsv"
    lines = qrels.read_text(encoding="utf-8").splitlines()
    qrels.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"CocktailNQUTD.*computed on other data"):
        _cocktail_bm25(root, results, monkeypatch)
    truth = _cocktail_bm25(root, results, monkeypatch, overwrite_strategy="always")
    assert truth.get_score() != pytest.approx(first.get_score())


def test_a_rerun_asking_for_other_intervals_refuses_results_computed_with_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, results = _cocktail_copy(tmp_path), tmp_path / "results"
    monkeypatch.setenv("AIRBENCH_MTEB_CI", "off")
    assert "ndcg_at_1_ci_low" not in _cocktail_bm25(root, results, monkeypatch).scores["test"][0]
    monkeypatch.setenv("AIRBENCH_MTEB_CI", "percentile")
    monkeypatch.setenv("AIRBENCH_MTEB_CI_RESAMPLES", "199")
    with pytest.raises(DatasetError, match=r"CocktailNQUTD.*computed with off; this run asks for percentile, 199"):
        _cocktail_bm25(root, results, monkeypatch)
    percentile = _cocktail_bm25(root, results, monkeypatch, overwrite_strategy="always").scores["test"][0]
    assert percentile["ci_method"] == "percentile" and percentile["ci_n_resamples"] == 199
    _same_intervals(_cocktail_bm25(root, results, monkeypatch).scores["test"][0], percentile)  # same settings
    monkeypatch.setenv("AIRBENCH_MTEB_CI", "bca")
    with pytest.raises(DatasetError, match=r"computed with percentile, 199 resamples.*asks for BCa, 199 resamples"):
        _cocktail_bm25(root, results, monkeypatch)
    monkeypatch.setenv("AIRBENCH_MTEB_CI", "off")  # intervals not asked for: the results with them serve
    _same_intervals(_cocktail_bm25(root, results, monkeypatch).scores["test"][0], percentile)


def _same_intervals(cached: dict, computed: dict) -> None:
    """The results file's row holds the intervals computed (its numbers rounded as mteb writes them)."""
    assert (cached["ci_method"], cached["ci_n_resamples"]) == (computed["ci_method"], computed["ci_n_resamples"])
    assert cached["ndcg_at_1_ci_low"] == pytest.approx(computed["ndcg_at_1_ci_low"], abs=1e-6)


def _task_revision(name: str, root: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> str:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(root))
    cls = type(mteb.get_task(name))
    return cls(**kwargs).data_revision()


def test_keep_titles_and_a_same_size_edit_with_mtime_restored_change_the_revision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _cocktail_copy(tmp_path)
    plain = _task_revision("CocktailNQUTD", root, monkeypatch)
    assert _task_revision("CocktailNQUTD", root, monkeypatch, keep_titles=True) != plain
    assert _task_revision("CocktailNQUTD", root, monkeypatch) == plain  # stable
    corpus = root / "cocktail" / "nq-utd" / "corpus" / "human.jsonl"
    before = corpus.stat()
    data = bytearray(corpus.read_bytes())
    at = data.index(b'"text": "') + len(b'"text": "')
    data[at] = ord("X") if data[at] != ord("X") else ord("Y")  # one letter: same size
    corpus.write_bytes(bytes(data))
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime set back, as `touch -r` would
    assert corpus.stat().st_size == before.st_size and corpus.stat().st_mtime_ns == before.st_mtime_ns
    assert _task_revision("CocktailNQUTD", root, monkeypatch) != plain


def test_a_copied_mirror_keeps_its_revision(airbench_mirror: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Identity from content, not from the path: results stay valid when the data move."""
    copy = Path(shutil.copytree(airbench_mirror, tmp_path / "moved"))
    assert _task_revision(NAME, copy, monkeypatch) == _task_revision(NAME, airbench_mirror, monkeypatch)


def test_an_irsc_rebuild_changes_the_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airbench_mteb.generation.irsc import BuildConfig, build_irsc
    from airbench_mteb.generation.irsc.sources import shipped_records

    records = list(shipped_records())
    build_irsc(records, tmp_path / "a", BuildConfig(per_task=8, corpus_limit=30, seed=1))
    build_irsc(records, tmp_path / "b", BuildConfig(per_task=8, corpus_limit=30, seed=2))
    first = _task_revision("IRSCTitleRetrieval", tmp_path / "a", monkeypatch)
    assert first.startswith("files-")
    assert _task_revision("IRSCTitleRetrieval", tmp_path / "b", monkeypatch) != first
    build_irsc(records, tmp_path / "a", BuildConfig(per_task=8, corpus_limit=30, seed=2))  # rebuilt in place
    assert _task_revision("IRSCTitleRetrieval", tmp_path / "a", monkeypatch) != first


# --- issue 18, finding 2: predictions carry the fingerprint of their data --------------------------

def test_predictions_record_their_data_and_a_consumer_refuses_other_data(
        airbench_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airbench_mteb.data.predictions import check_same_data, predictions_path, read_predictions

    predictions = tmp_path / "predictions"
    result = _run(airbench_mirror, tmp_path / "results", monkeypatch, prediction_folder=predictions)
    saved = read_predictions(predictions_path(predictions, NAME))
    assert saved.dataset_revision == result.dataset_revision
    check_same_data(saved, result.dataset_revision)  # same data: accepted
    with pytest.raises(DatasetError, match=r"computed on other data.*'mirror-"):
        check_same_data(saved, "mirror-0000000000000000")
    older = predictions_path(predictions, NAME)
    older.write_text(json.dumps({k: v for k, v in json.loads(older.read_text()).items() if k != "dataset_revision"}))
    with pytest.raises(DatasetError, match="do not say which data"):
        check_same_data(read_predictions(older), result.dataset_revision)


def test_in_process_memo_sees_a_same_size_rewrite(tmp_path: Path) -> None:
    from airbench_mteb.data.fingerprint import files_fingerprint

    path = tmp_path / "qrels.tsv"
    path.write_text("q1\td1\t1\n")
    first = files_fingerprint([path])
    stat = path.stat()
    path.write_text("q1\td1\t2\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert files_fingerprint([path]) != first
    assert files_fingerprint([tmp_path / "absent.tsv"]) != files_fingerprint([path])


def test_hub_data_are_identified_by_the_commit_their_branch_points_at(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch moves when the data change: the hub revision is the commit, asked of the hub or read from its cache."""
    import huggingface_hub
    import huggingface_hub.constants

    from airbench_mteb.data.hub_revision import hub_fingerprint, resolve_revision

    repos = ["AIR-Bench/qa_news_en", "AIR-Bench/qrels-qa_news_en-dev"]
    commits = {"AIR-Bench/qa_news_en": "a" * 40, "AIR-Bench/qrels-qa_news_en-dev": "b" * 40}

    class Info:
        def __init__(self, repo: str) -> None:
            self.sha = commits[repo]

    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", lambda self, repo, revision=None: Info(repo))
    resolve_revision.cache_clear()
    online = hub_fingerprint(repos, "main")
    commits["AIR-Bench/qrels-qa_news_en-dev"] = "c" * 40  # new qrels pushed to main
    resolve_revision.cache_clear()
    pushed = hub_fingerprint(repos, "main")
    assert pushed != online

    def offline(self: object, repo: str, revision: str | None = None) -> None:
        raise huggingface_hub.errors.OfflineModeIsEnabled("offline")

    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", offline)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    for repo in repos:  # the local hub cache knows the commits the cached files came from
        ref = tmp_path / f"datasets--{repo.replace('/', '--')}" / "refs" / "main"
        ref.parent.mkdir(parents=True)
        ref.write_text(commits[repo])
    resolve_revision.cache_clear()
    assert hub_fingerprint(repos, "main") == pushed
    resolve_revision.cache_clear()
    assert resolve_revision("AIR-Bench/unknown", "main") is None
    resolve_revision.cache_clear()
