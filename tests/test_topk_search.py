"""The device top-k search gives MTEB's own search results on the same vectors, ties included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from datasets import Dataset
from mteb import TaskMetadata
from mteb.models import ModelMeta, SearchEncoderWrapper
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ScoringFunction

from airbench_mteb.data.retrieval_data import Document, RetrievalData
from airbench_mteb.models.topk_search import (
    MEMORY_SHARE,
    DeviceTopKSearch,
    TopKMerge,
    chunk_size_for,
    ordered_keys,
    scores_of,
)
from airbench_mteb.tasks.base import PluginRetrievalTask

METADATA = TaskMetadata(
    name="TopKSearchTest", description="Vectors from a table, searched by both searches.", reference=None,
    dataset={"path": "local/topk", "revision": "0"}, type="Retrieval", category="t2t", modalities=["text"],
    eval_splits=["test"], eval_langs=["eng-Latn"], main_score="ndcg_at_10", date=None, domains=None,
    task_subtypes=None, license=None, annotations_creators=None, dialect=None, sample_creation=None,
    bibtex_citation="")


class TableEncoder(AbsEncoder):
    """An MTEB encoder whose vector for a text is looked up in a table (cosine similarity, MTEB's default path)."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table
        self.mteb_model_meta = ModelMeta.create_empty(overwrites={
            "name": "test/table-encoder", "revision": "1", "framework": ["NumPy"], "reference": None,
            "similarity_fn_name": ScoringFunction.COSINE})

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        return np.stack([self.table[text] for batch in inputs for text in batch["text"]])


def _corpus_and_queries(vectors: np.ndarray, query_vectors: np.ndarray, rng: np.random.Generator
                        ) -> tuple[dict[str, np.ndarray], Dataset, Dataset]:
    # ids whose string order differs from their numeric order, in a shuffled corpus order
    doc_ids = [f"d{n}" for n in rng.permutation(len(vectors))]
    table = {f"text of {doc}": vector for doc, vector in zip(doc_ids, vectors, strict=True)}
    table |= {f"query {n}": vector for n, vector in enumerate(query_vectors)}
    corpus = Dataset.from_dict({"id": doc_ids, "title": [""] * len(doc_ids), "text": [f"text of {d}" for d in doc_ids]})
    queries = Dataset.from_dict({"id": [f"q{n}" for n in range(len(query_vectors))],
                                 "text": [f"query {n}" for n in range(len(query_vectors))]})
    return table, corpus, queries


def _search(search: Any, corpus: Dataset, queries: Dataset, top_k: int) -> dict[str, dict[str, float]]:
    context = {"task_metadata": METADATA, "hf_split": "test", "hf_subset": "default",
               "encode_kwargs": {"batch_size": 8, "show_progress_bar": False}, "num_proc": None}
    search.index(corpus, **context)
    return search.search(queries, top_k=top_k, **context)


def _reference(scores: np.ndarray, doc_ids: list[str], top_k: int) -> list[list[tuple[float, str]]]:
    """Each query's best ``top_k`` by (score, id), larger first: trec_eval's order."""
    return [sorted(zip(row.tolist(), doc_ids, strict=True), reverse=True)[:top_k] for row in scores]


def test_keys_order_as_score_then_id_rank_and_give_back_the_scores() -> None:
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.normal(size=200), [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 1e-40, -1e-40]])
    scores = np.repeat(scores.astype(np.float32), 3)  # every score three times: the id rank decides
    ranks = rng.permutation(len(scores)).astype(np.int64)
    keys = torch.empty((1, len(scores)), dtype=torch.int64)
    ordered_keys(torch.from_numpy(scores)[None], torch.from_numpy(ranks), keys)

    expected = np.lexsort((ranks, scores + np.float32(0.0)))  # by score (-0.0 as 0.0), then rank
    assert np.argsort(keys[0].numpy(), kind="stable").tolist() == expected.tolist()
    assert np.array_equal(scores_of(keys)[0].numpy(), scores + np.float32(0.0))
    assert ((keys[0].numpy() & 0xFFFFFFFF) == ranks).all()


@pytest.mark.parametrize("earlier", [[], [0.9, 0.8, 0.7]])
def test_nan_scores_are_refused(earlier: list[float]) -> None:
    """In the first chunk and once the running top k is full (a NaN is below no bar)."""
    merge = TopKMerge(1, 2, torch.device("cpu"))
    if earlier:
        merge.add(torch.tensor([earlier]), torch.arange(len(earlier), dtype=torch.int32))
    with pytest.raises(ValueError, match="NaN"):
        merge.add(torch.tensor([[0.1, float("nan"), 0.1]]), torch.arange(3, dtype=torch.int32))


def _assert_merged_in_chunks_equals_one_sort(scores: torch.Tensor, ranks: torch.Tensor, depth: int, chunk: int) -> None:
    """Merging ``scores`` chunk by chunk keeps per query what one sort of all (score, id rank) pairs keeps
    (``-0.0`` as ``0.0``), larger first."""
    queries, width = scores.shape
    merge = TopKMerge(queries, depth, torch.device("cpu"))
    for start in range(0, width, chunk):
        merge.add(scores[:, start:start + chunk], ranks[start:start + chunk])
    kept = merge.best()
    for row in range(queries):
        expected = sorted(zip((scores[row] + 0.0).tolist(), ranks.tolist(), strict=True), reverse=True)[:depth]
        assert list(zip(scores_of(kept[row]).tolist(), (kept[row] & 0xFFFFFFFF).tolist(), strict=True)) == expected


@pytest.mark.parametrize("chunk", [1, 3, 7, 50])
def test_the_bar_keeps_exactly_what_keying_every_score_keeps(chunk: int) -> None:
    """Scores on a coarse grid (many exact ties, -0.0 among them), merged in chunks of several widths, equal
    one sort of all (score, id rank) pairs, larger first."""
    rng = np.random.default_rng(chunk)
    scores = torch.from_numpy((rng.integers(-3, 4, size=(5, 200)) / 2).astype(np.float32))
    scores[scores == 0] = -0.0 if chunk % 2 else 0.0
    _assert_merged_in_chunks_equals_one_sort(scores, torch.from_numpy(rng.permutation(200).astype(np.int32)),
                                             depth=20, chunk=chunk)


@pytest.mark.parametrize("chunk", [650, 2017])
def test_block_scan_and_waiting_candidates_keep_what_keying_every_score_keeps(chunk: int) -> None:
    """Continuous scores with exact ties at random places, wide chunks: blocks scanned by their maxima, a tail
    after the last whole block, candidates waiting across chunks before a merge."""
    rng = np.random.default_rng(chunk)
    scores = torch.from_numpy(rng.normal(size=(12, 20000)).astype(np.float32))
    scores[:, rng.integers(0, 20000, size=2000)] = scores[:, rng.integers(0, 20000, size=2000)]  # ties
    scores[1] = torch.linspace(-1, 1, 20000)  # a query whose best documents all come last: merges every chunk
    _assert_merged_in_chunks_equals_one_sort(scores, torch.from_numpy(rng.permutation(20000).astype(np.int32)),
                                             depth=10, chunk=chunk)


def test_a_nan_inside_a_scanned_block_is_refused() -> None:
    merge = TopKMerge(2, 3, torch.device("cpu"))
    merge.add(torch.ones(2, 200), torch.arange(200, dtype=torch.int32))
    later = torch.zeros(2, 200)
    later[1, 70] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        merge.add(later, torch.arange(200, 400, dtype=torch.int32))


def test_same_results_as_mteb_search_on_the_same_vectors() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    table, corpus, queries = _corpus_and_queries(vectors, rng.normal(size=(20, 16)).astype(np.float32), rng)
    model = TableEncoder(table)
    ours = _search(DeviceTopKSearch(model, chunk_size=64), corpus, queries, top_k=25)
    mteb_own = _search(SearchEncoderWrapper(model, corpus_chunk_size=50), corpus, queries, top_k=25)
    assert ours == mteb_own  # same documents, same float scores
    ranked = {qid: sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)
              for qid, docs in mteb_own.items()}
    assert {qid: list(docs.items()) for qid, docs in ours.items()} == ranked  # and best first


def test_exact_ties_keep_the_larger_ids_as_mteb_heap_does() -> None:
    rng = np.random.default_rng(2)
    # one-hot vectors: every cosine is exactly 1.0 or 0.0, so nearly every score ties
    vectors = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=40)]
    queries = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]
    table, corpus, query_set = _corpus_and_queries(vectors, queries, rng)
    model = TableEncoder(table)
    ours = _search(DeviceTopKSearch(model, chunk_size=7), corpus, query_set, top_k=9)
    # chunks of at most top_k + 1 documents: MTEB's per-chunk cut keeps all, so its heap alone decides ties
    mteb_own = _search(SearchEncoderWrapper(model, corpus_chunk_size=10), corpus, query_set, top_k=9)
    assert ours == mteb_own
    doc_vectors = np.array([table[f"text of {doc}"] for doc in corpus["id"]])
    reference = _reference(queries @ doc_vectors.T, list(corpus["id"]), top_k=9)  # exact: 0.0 or 1.0
    assert [list(ours[f"q{n}"].items()) for n in range(len(queries))] == [
        [(doc, score) for score, doc in row] for row in reference]


def test_chunk_size_fills_the_memory_share() -> None:
    queries, depth, dimension = 6319, 1000, 768
    free = 8 * 2**30
    chunk = chunk_size_for(free, queries, depth, dimension, documents=10**9)
    per_document = queries * 12 + dimension * 8
    used = chunk * per_document + queries * depth * 24
    assert used <= free * MEMORY_SHARE < used + per_document
    assert chunk_size_for(free, queries, depth, dimension, documents=1000) == 1000
    assert chunk_size_for(1, queries, depth, dimension, documents=1000) == 1


def _table_task() -> tuple[dict[str, np.ndarray], RetrievalData]:
    """120 documents, 15 queries near their first document, two relevant documents each."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(120, 8)).astype(np.float32)
    table = {f"text {i}": vector for i, vector in enumerate(vectors)}
    table |= {f"query {q}": vectors[q] + rng.normal(scale=0.5, size=8).astype(np.float32) for q in range(15)}
    data = RetrievalData({f"d{i}": Document(text=f"text {i}") for i in range(120)},
                         {f"q{q}": f"query {q}" for q in range(15)},
                         {f"q{q}": {f"d{q}": 1, f"d{q + 40}": 1} for q in range(15)})
    return table, data


TABLE, TABLE_DATA = _table_task()


class TableTask(PluginRetrievalTask):
    metadata = METADATA

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        return TABLE_DATA


class StockSearchTableTask(TableTask):
    """The same task scored through MTEB's own search (the encoder as MTEB wraps it)."""

    def evaluate_split(self, model: Any, data_split: Any, **kwargs: Any) -> Any:
        return self.stock_evaluate_split(model, data_split, **kwargs)


def test_plugin_task_scores_and_prediction_files_equal_mteb_search(tmp_path: Path) -> None:
    import mteb

    files = {}
    for task_class in (TableTask, StockSearchTableTask):
        task = task_class()
        task.load_data()
        folder = tmp_path / task_class.__name__
        result = mteb.evaluate(TableEncoder(TABLE), task, cache=None, prediction_folder=folder,
                               overwrite_strategy="always", show_progress_bar=False)
        scores = result.task_results[0].scores["test"][0]
        files[task_class] = (scores, json.loads(next(folder.glob("*_predictions.json")).read_text()))
    (ours, our_file), (stock, stock_file) = files[TableTask], files[StockSearchTableTask]
    assert {k: v for k, v in ours.items() if k != "evaluation_time"} == \
        {k: v for k, v in stock.items() if k != "evaluation_time"}
    assert our_file == stock_file
