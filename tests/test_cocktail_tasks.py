"""Cocktail tasks end to end on the real NFCorpus and NQ-UTD folders shipped in the package (tests.conftest.SAMPLE_DATA).

NQ-UTD runs with the bundled MiniLM in all four settings (one model run shared by the tests below: the fixture
minilm_nq_utd of tests/minilm_nq_utd.py),
and its per-source scores are recomputed independently from the files and the vectors the model
returned (exact top-k with numpy, pytrec_eval). BM25 on NFCorpus and NQ-UTD is compared with the
paper's BM25 figures.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest
import pytrec_eval

import airbench_mteb  # noqa: F401  (registers tasks and models)
from airbench_mteb.metrics.source_bias import relative_delta
from tests.conftest import SAMPLE_DATA

LLM_FILE = "llama-2-7b-chat-tmp0.2"
SETTINGS = ["human", "llm", "mixed", "mixed-all-relevant"]
K_VALUES = (1, 3, 5, 10, 100)


def _subsets(task_result: Any, split: str = "test") -> dict[str, dict[str, Any]]:
    return {row["hf_subset"]: row for row in task_result.scores[split]}


@pytest.mark.slow
def test_every_setting_runs_and_is_named_in_the_results(minilm_nq_utd: dict[str, Any]) -> None:
    subsets = _subsets(minilm_nq_utd["result"])
    assert sorted(subsets) == sorted(SETTINGS)
    assert all(row["languages"] == ["eng-Latn"] for row in subsets.values())
    assert [name for name, row in subsets.items() if "source_bias" in row] == ["mixed"]
    mixed = subsets["mixed"]
    # the mixed settings rank one corpus with every copy relevant: same scores, bias beside them
    assert mixed["ndcg_at_1"] == subsets["mixed-all-relevant"]["ndcg_at_1"] == mixed["main_score"]
    bias = mixed["source_bias"]
    # at k = 1 only one document counts, so NDCG with both copies relevant is the sum of the two targets
    assert mixed["ndcg_at_1"] == pytest.approx(bias["ndcg_at_1_human"] + bias["ndcg_at_1_llm"], abs=1e-5)
    assert bias["share_at_1_human"] + bias["share_at_1_llm"] == pytest.approx(1.0)
    saved = next(minilm_nq_utd["results"].rglob("CocktailNQUTD.json"))
    on_disk = json.loads(saved.read_text(encoding="utf-8"), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    stored = _subsets(mteb.TaskResult.from_dict(on_disk))["mixed"]["source_bias"]
    assert {f"relative_delta_ndcg_at_{k}_llm" for k in K_VALUES} <= set(stored)


def _read_jsonl(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as handle:
        return {row["_id"]: row["text"] for row in map(json.loads, handle)}


@pytest.mark.slow
def test_each_document_is_encoded_once_across_the_four_settings(minilm_nq_utd: dict[str, Any]) -> None:
    # the four settings hold 3,200 documents: 800 human and 800 LLM copies, each encoded once
    # (the cache also encodes a text that occurs twice only once: NQ-UTD has 1,598 distinct texts)
    folder = SAMPLE_DATA / "cocktail" / "nq-utd"
    texts = {text.strip() for stem in ("human", LLM_FILE)
             for text in _read_jsonl(folder / "corpus" / f"{stem}.jsonl").values()}
    assert len(texts) == 1598
    assert minilm_nq_utd["encoded"] == {"document": len(texts), "query": 80}


def _independent_run(vectors: dict[tuple[str, str], np.ndarray]
                     ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """The mixed run from scratch: the files, the model's vector of each text, numpy cosine, exact top 100."""
    folder = SAMPLE_DATA / "cocktail" / "nq-utd"
    ids, docs = [], []
    for stem in ("human", LLM_FILE):
        for doc_id, text in _read_jsonl(folder / "corpus" / f"{stem}.jsonl").items():
            ids.append(f"{doc_id}-{stem}")
            docs.append(vectors[("document", text.strip())])  # MTEB strips a document before encoding it
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        qrels: dict[str, dict[str, int]] = {}
        for row in list(csv.reader(handle, delimiter="\t"))[1:]:
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries = _read_jsonl(folder / "queries.jsonl")
    qids = list(qrels)
    doc_matrix = np.stack(docs).astype(np.float64)
    query_matrix = np.stack([vectors[("query", queries[qid])] for qid in qids]).astype(np.float64)
    doc_matrix /= np.linalg.norm(doc_matrix, axis=1, keepdims=True)
    query_matrix /= np.linalg.norm(query_matrix, axis=1, keepdims=True)
    scores = query_matrix @ doc_matrix.T
    run = {}
    for row, qid in enumerate(qids):
        top = np.argsort(-scores[row], kind="stable")[:100]
        run[qid] = {ids[i]: float(scores[row, i]) for i in top}
    return run, qrels


@pytest.mark.slow
def test_per_source_scores_equal_an_independent_computation(minilm_nq_utd: dict[str, Any]) -> None:
    bias = _subsets(minilm_nq_utd["result"])["mixed"]["source_bias"]
    run, qrels = _independent_run(minilm_nq_utd["vectors"])
    cutoffs = ",".join(map(str, K_VALUES))
    expected: dict[str, float] = {}
    for stem, label in (("human", "human"), (LLM_FILE, "llm")):
        target = {qid: {f"{doc}-{stem}": grade for doc, grade in docs.items()} for qid, docs in qrels.items()}
        per_query = pytrec_eval.RelevanceEvaluator(target, {f"ndcg_cut.{cutoffs}", f"map_cut.{cutoffs}"}).evaluate(run)
        for k in K_VALUES:
            expected[f"ndcg_at_{k}_{label}"] = float(np.mean([v[f"ndcg_cut_{k}"] for v in per_query.values()]))
            expected[f"map_at_{k}_{label}"] = float(np.mean([v[f"map_cut_{k}"] for v in per_query.values()]))
    for k in K_VALUES:
        expected[f"relative_delta_ndcg_at_{k}_llm"] = (
            (expected[f"ndcg_at_{k}_human"] - expected[f"ndcg_at_{k}_llm"])
            / ((expected[f"ndcg_at_{k}_human"] + expected[f"ndcg_at_{k}_llm"]) / 2) * 100)
        ranked = [sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:k] for docs in run.values()]
        expected[f"share_at_{k}_human"] = float(np.mean([sum(d.endswith("-human") for d in top) / k for top in ranked]))
    for name, value in expected.items():
        assert bias[name] == pytest.approx(value, abs=1e-6), name
    assert bias["relative_delta_map_at_3_llm"] == pytest.approx(
        relative_delta(expected["map_at_3_human"], expected["map_at_3_llm"]), abs=1e-6)


# The paper's BM25 (Elasticsearch through BEIR: k1 = 1.2, b = 0.75) on its test splits, in percent:
# NDCG@1 on the human-only and LLM-only corpora (Table 8), on the mixed corpus (Table 2) and
# Relative Δ NDCG@1 (Table 3).
PAPER_BM25 = {
    "CocktailNFCorpus": {"human": 43.8, "llm": 45.8, "mixed": 45.4, "delta": -29.5},
    "CocktailNQUTD": {"human": 71.9, "llm": 73.1, "mixed": 76.9, "delta": 37.2},
}


@pytest.mark.parametrize("task_name", list(PAPER_BM25))
def test_bm25_lands_near_the_papers_figures(task_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 with Elasticsearch's parameters reproduces Tables 8, 2 and 3 closely.

    Measured: NFCorpus 42.6 / 43.7 / 43.5, Δ -23.5; NQ-UTD 71.3 / 70.6 / 75.6, Δ +34.7. The gap
    (at most 2.5 NDCG points) comes from the analyzers (Elasticsearch's English analyzer vs
    bm25s with Lucene's stopwords and the Porter stemmer; ties broken by corpus order here and by
    Lucene's doc order there) and from NDCG@1's coarseness: one NQ-UTD query moves it by up to
    1.25 points, so the tolerance is 3 points for NDCG@1 and 10 for Relative Δ, whose sign
    must match. BM25's Δ depends on length normalisation, since the LLM rewrites are shorter:
    with this plugin's default b = 0.4 NFCorpus's Δ@1 turns positive (+38.5).
    """
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(SAMPLE_DATA))
    model = mteb.get_model("airbench-mteb/bm25", k1=1.2, b=0.75)
    result = mteb.evaluate(model, mteb.get_task(task_name, eval_splits=["test"]), cache=None,
                           show_progress_bar=False).task_results[0]
    subsets = _subsets(result)
    paper = PAPER_BM25[task_name]
    for setting in ("human", "llm", "mixed"):
        assert 100 * subsets[setting]["ndcg_at_1"] == pytest.approx(paper[setting], abs=3.0), setting
    delta = subsets["mixed"]["source_bias"]["relative_delta_ndcg_at_1_llm"]
    assert delta == pytest.approx(paper["delta"], abs=10.0)
    assert np.sign(delta) == np.sign(paper["delta"])
