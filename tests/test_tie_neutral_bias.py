"""`airbench-mteb bias` on the shipped co*cktail data: the conventional Relative Δ as pytrec_eval gives it, the
tie-neutral Δ as an independent computation here gives it, and the table's lines on ties."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

import mteb
import pytest
import pytrec_eval
from mteb.results import TaskResult

from airbench_mteb.cli import main
from airbench_mteb.data.predictions import read_predictions
from airbench_mteb.report.bias import bias_summary_table
from tests.conftest import SAMPLE_DATA
from tests.tie_oracle import ndcg_oracle

pytestmark = pytest.mark.slow  # one module fixture runs the bias command on the shipped data

HUMAN, LLM = "human", "llama-2-7b-chat-tmp0.2"  # corpus file stems: mixed ids are <id>-<stem>


def shipped_qrels(split: str) -> dict[str, dict[str, int]]:
    """The mixed corpus's qrels read straight from the shipped file: both copies of a document judged alike."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (SAMPLE_DATA / "cocktail" / "nfcorpus" / "qrels" / f"{split}.tsv").open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            for stem in (HUMAN, LLM):
                qrels[row["query-id"]][f"{row['corpus-id']}-{stem}"] = int(row["score"])
    return qrels


def source_of(doc: str) -> str:
    return "human" if doc.endswith(f"-{HUMAN}") else "llm"


def per_source(qrels: dict[str, dict[str, int]], source: str) -> dict[str, dict[str, int]]:
    return {qid: kept for qid, docs in qrels.items() if (kept := {d: g for d, g in docs.items() if source_of(d) == source})}


def delta(human: float, llm: float) -> float:
    return (human - llm) / ((human + llm) / 2) * 100


def trec_ndcg(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], k: int) -> float:
    found = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"}).evaluate(run)
    return sum(values[f"ndcg_cut_{k}"] for values in found.values()) / len(found)


class BiasRun(NamedTuple):
    table: str  # what the command printed
    row: dict[str, Any]  # its results row of NFCorpus test, mixed
    run: dict[str, dict[str, float]]  # the same BM25 ranking, kept by MTEB
    results: Path  # the command's results folder


@pytest.fixture(scope="module")
def bias_run(tmp_path_factory: pytest.TempPathFactory) -> BiasRun:
    out = tmp_path_factory.mktemp("bias")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["bias", "-m", "airbench-mteb/bm25", "-t", "CocktailNFCorpus", "--settings", "mixed",
                     "--eval-splits", "test", "--data-dir", str(SAMPLE_DATA), "--output-folder", str(out / "out")]) == 0
    (path,) = (out / "out").rglob("CocktailNFCorpus.json")
    (row,) = json.loads(path.read_text())["scores"]["test"]
    task = mteb.get_task("CocktailNFCorpus", eval_splits=["test"], hf_subsets=["mixed"])
    mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), task, cache=None, prediction_folder=out / "predictions",
                  show_progress_bar=False)
    run = read_predictions(task.predictions_path(out / "predictions")).runs["mixed"]["test"]
    return BiasRun(printed.getvalue(), row, run, out / "out" / "results")


def test_the_conventional_delta_is_pytrec_evals_and_the_tie_neutral_one_the_expectation(bias_run: BiasRun) -> None:
    table, row, run, _ = bias_run
    qrels = shipped_qrels("test")
    flat = row["source_bias"]
    human, llm = per_source(qrels, "human"), per_source(qrels, "llm")
    for k in (1, 3, 5, 10):
        conventional = delta(trec_ndcg(human, run, k), trec_ndcg(llm, run, k))
        neutral = delta(ndcg_oracle(human, run, k), ndcg_oracle(llm, run, k))
        assert flat[f"relative_delta_ndcg_at_{k}_llm"] == pytest.approx(conventional, abs=1e-4)
        assert flat[f"relative_delta_ndcg_at_{k}_llm_tie_neutral"] == pytest.approx(neutral, abs=1e-4)
        # every tie to one source: trec_eval's own tie breaking (ids descending) under names that favour it
        for favoured in ("human", "llm"):
            name = {doc: ("z" if source_of(doc) == favoured else "a") + doc for docs in run.values() for doc in docs}
            name.update({doc: ("z" if source_of(doc) == favoured else "a") + doc for docs in qrels.values()
                         for doc in docs if doc not in name})
            renamed_run = {q: {name[d]: s for d, s in docs.items()} for q, docs in run.items()}
            renamed = {s: {q: {name[d]: g for d, g in docs.items()} for q, docs in target.items()}
                       for s, target in (("human", human), ("llm", llm))}
            assert flat[f"relative_delta_ndcg_at_{k}_llm_ties_to_{favoured}"] == pytest.approx(
                delta(trec_ndcg(renamed["human"], renamed_run, k), trec_ndcg(renamed["llm"], renamed_run, k)), abs=1e-4)
    # at rank 1 a tie decides a query when its best score is shared by a human and an LLM copy
    decided = sum(len({source_of(d) for d, s in docs.items() if s == max(docs.values())}) > 1 for docs in run.values())
    assert flat["tie_decided_queries_at_1"] == decided and flat["tie_checked_queries"] == len(run) == 323
    # every copy relevant (the task's own qrels): the plugin's tie-neutral nDCG@10 beside MTEB's
    assert row["ndcg_at_10_tie_neutral"] == pytest.approx(ndcg_oracle(qrels, run, 10), abs=1e-5)
    assert row["ndcg_at_10"] == pytest.approx(trec_ndcg(qrels, run, 10), abs=1e-5)
    # the table prints both, with the conventional value as MTEB scores it
    mixed_line = next(line for line in table.splitlines() if "test" in line and "mixed" in line)
    assert f"{flat['relative_delta_ndcg_at_1_llm']:+.1f} [" in mixed_line
    tie_line = [line for line in table.splitlines() if "test" in line and "mixed" in line][1]
    assert tie_line.split()[3] == f"{flat['relative_delta_ndcg_at_1_llm_tie_neutral']:+.1f}"
    assert f"{decided}/323" in tie_line


def test_the_table_says_when_ties_decide_beyond_the_interval(bias_run: BiasRun) -> None:
    row = bias_run.row

    flat = row["source_bias"]
    conventional, neutral = flat["relative_delta_ndcg_at_1_llm"], flat["relative_delta_ndcg_at_1_llm_tie_neutral"]
    gap = abs(neutral - conventional)
    scores = {"test": [copy.deepcopy(row)]}
    task_result = TaskResult(dataset_revision="x", task_name="CocktailNFCorpus", mteb_version="2", scores=scores,
                             evaluation_time=1.0)
    table = bias_summary_table(task_result, ["human", "llm"], [1])
    # the shipped interval is wider than twice the gap: no line
    assert gap < (flat["relative_delta_ndcg_at_1_llm_ci_high"] - flat["relative_delta_ndcg_at_1_llm_ci_low"]) / 2
    assert "depends on document ids" not in table
    # an interval narrower than the gap: one line, with the queries ties decide
    narrow = copy.deepcopy(row)
    narrow["source_bias"]["relative_delta_ndcg_at_1_llm_ci_low"] = conventional - gap / 4
    narrow["source_bias"]["relative_delta_ndcg_at_1_llm_ci_high"] = conventional + gap / 4
    task_result = TaskResult(dataset_revision="x", task_name="CocktailNFCorpus", mteb_version="2",
                             scores={"test": [narrow]}, evaluation_time=1.0)
    (line,) = [line for line in bias_summary_table(task_result, ["human", "llm"], [1]).splitlines()
               if "depends on document ids" in line]
    assert line.startswith(f"CocktailNFCorpus test: ties decide the top 1 of {flat['tie_decided_queries_at_1']} "
                           f"of 323 queries; the conventional Δ1:llm {conventional:+.1f}")


def test_results_without_tie_figures_still_give_the_table(bias_run: BiasRun) -> None:
    row = bias_run.row
    old = copy.deepcopy(row)
    old["source_bias"] = {key: value for key, value in row["source_bias"].items() if "tie" not in key}
    old.pop("ndcg_at_10_tie_neutral")
    task_result = TaskResult(dataset_revision="x", task_name="CocktailNFCorpus", mteb_version="2",
                             scores={"test": [old]}, evaluation_time=1.0)
    table = bias_summary_table(task_result, ["human", "llm"], [1])
    assert "tie-neutral" not in table and f"{row['source_bias']['relative_delta_ndcg_at_1_llm']:+.1f}" in table


def test_the_bias_plot_csv_carries_the_tie_neutral_delta(bias_run: BiasRun, tmp_path: Path) -> None:
    row = bias_run.row
    flat = row["source_bias"]
    out = tmp_path / "report"
    assert main(["report", "--plot", "bias", "--results", str(bias_run.results), "--out", str(out)]) == 0
    with (out / "bias.csv").open() as handle:
        (point,) = list(csv.DictReader(handle))
    assert float(point["relative_delta"]) == pytest.approx(flat["relative_delta_ndcg_at_1_llm"])
    assert float(point["tie_neutral_delta"]) == pytest.approx(flat["relative_delta_ndcg_at_1_llm_tie_neutral"])
    assert float(point["tie_neutral_ci_low"]) == pytest.approx(flat["relative_delta_ndcg_at_1_llm_tie_neutral_ci_low"])
    assert float(point["delta_ties_to_reference"]) == pytest.approx(flat["relative_delta_ndcg_at_1_llm_ties_to_human"])
    assert float(point["delta_ties_to_compared"]) == pytest.approx(flat["relative_delta_ndcg_at_1_llm_ties_to_llm"])
    assert float(point["tie_decided_share"]) == pytest.approx(flat["tie_decided_share_at_1"], abs=1e-6)
