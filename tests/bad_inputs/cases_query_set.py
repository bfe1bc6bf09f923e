"""One query set per number, and per-query files bound to their results (issue 36, items 1, 2 and 4).

The shared results: three BM25 settings on an AIR-Bench mirror task whose dev split holds a query judged
relevance 0 only (MTEB's score averages over it: it scores 0) and whose test split is closed-book (its
qrels file removed); the first two models also keep their prediction files, read here without the plugin.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval

from tests.bad_inputs.framework import Case, Workspace, mutated_results, results_copy, shared_data

TASK = "AIR-Bench_24.05_qa_healthcare_en"
BM25 = "airbench-mteb/bm25"
TUNED = "airbench-mteb/bm25 (b=0.75, k1=1.2)"
THIRD = "airbench-mteb/bm25 (b=0.9, k1=2.0)"
JUDGED_ZERO = "q-judged-0"
# MTEB 2.26 (mteb/_evaluators/retrieval_metrics.py, results/task_result.py): pytrec_eval's means rounded to 5
# decimals, MRR's mean unrounded and then every score to 6 when the results file is written
DECIMALS = {"ndcg_at_10": 5, "recall_at_10": 5, "recall_at_100": 5, "map_at_10": 5, "mrr_at_10": 6}


@shared_data("query_set_results")
def build_results(folder: Path) -> Path:
    """``folder/mirror`` (the task's data: a dev query judged 0 only, test qrels removed), ``folder/results`` (three
    BM25 settings) and ``folder/predictions/<n>`` (the rankings of the first two)."""
    import mteb

    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file
    from airbench_mteb.settings import settings_applied
    from tests.airbench_mirror import add_query_judged_zero, english_documents, write_entry

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    documents = english_documents()
    write_entry(folder / "mirror", entry, documents)
    add_query_judged_zero(folder / "mirror", entry, "dev", documents, JUDGED_ZERO)
    mirror_file(folder / "mirror", entry, entry.qrels_location("test")).unlink()  # test: closed-book
    models = (mteb.get_model(BM25), mteb.get_model(BM25, k1=1.2, b=0.75), mteb.get_model(BM25, k1=2.0, b=0.9))
    with settings_applied(data_dir=folder / "mirror"):
        for n, model in enumerate(models):
            mteb.evaluate(model, [mteb.get_task(TASK)], cache=mteb.ResultCache(folder / "results"),
                          prediction_folder=folder / "predictions" / str(n) if n < 2 else None,
                          show_progress_bar=False)
    return folder


def results_files(root: Path, suffix: str) -> list[Path]:
    """The results (``.json``) or kept scores (``.per_query.json.gz``) of the three models, default BM25 first."""
    return sorted((root / "results").rglob(f"{TASK}{suffix}"),
                  key=lambda path: ("experiments" in path.parts, "k1_2.0" in path.parent.name))


def dev_row(results_path: Path) -> dict:
    (row,) = json.loads(results_path.read_text())["scores"]["dev"]
    return row


def kept_dev(kept_path: Path) -> dict:
    return json.loads(gzip.decompress(kept_path.read_bytes()))["scores"]["dev"]["default"]


def independent_scores(folder: Path, n: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """Model ``n``'s per-query values from its prediction file and the raw dev qrels, as MTEB scores them: over the
    queries with a judgment of any relevance that the run holds (pytrec_eval's set), MRR by hand."""
    run = json.loads(next((folder / "predictions" / str(n)).glob("*.json")).read_text())["default"]["dev"]
    qrels: dict[str, dict[str, int]] = {}
    for path in (folder / "mirror").rglob("qrels_*dev*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            qrels.setdefault(row["qid"], {})[row["docid"]] = int(row["relevance"])
    ids = sorted(q for q in qrels if q in run)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10,100", "map_cut.10"}).evaluate(run)
    values = {name: np.array([trec[q][key] for q in ids]) for name, key in (
        ("ndcg_at_10", "ndcg_cut_10"), ("recall_at_10", "recall_10"), ("recall_at_100", "recall_100"),
        ("map_at_10", "map_cut_10"))}
    reciprocal = []
    for q in ids:
        ranked = sorted(run[q].items(), key=lambda item: (item[1], item[0]), reverse=True)[:10]
        reciprocal.append(next((1 / r for r, (doc, _) in enumerate(ranked, 1) if qrels[q].get(doc, 0) > 0), 0.0))
    values["mrr_at_10"] = np.array(reciprocal)
    return ids, values


def _shared(ws: Workspace) -> Path:
    return ws.shared("query_set_results")


def _copy(ws: Workspace) -> Path:
    return results_copy(ws, "query_set_results")


def _edit_kept(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(gzip.decompress(path.read_bytes()))
    change(data)
    path.write_bytes(gzip.compress(json.dumps(data).encode()))


def _edit_result(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _mutated(mutate: Callable[[Path], None]) -> Callable[[Workspace], Path]:
    return mutated_results("query_set_results", mutate)


def _swap_two_queries(root: Path) -> None:
    """Two queries' judged@10 swapped in BM25's file: every mean stays, the file is not the one written."""
    def swap(data: dict) -> None:
        values = data["scores"]["dev"]["default"]["metrics"]["judged_at_10"]
        j = next(k for k, value in enumerate(values) if value != values[0])
        values[0], values[j] = values[j], values[0]
    _edit_kept(results_files(root, ".per_query.json.gz")[0], swap)


def _only_digest_removed(root: Path) -> None:
    """Issue 43: the digest removed from results a digest-writing version wrote (they keep judged_at_10 and
    ndcg_at_10_tie_neutral), a per-query value swapped that every mean keeps."""
    _swap_two_queries(root)
    _edit_result(results_files(root, ".json")[0],
                 lambda data: [row.pop("per_query_sha256", None) for rows in data["scores"].values() for row in rows])


def _significance(root: Callable[[Workspace], Path], *options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["significance", "--results", str(root(ws)), "-m", BM25, TUNED, "-t", TASK,
                "--resamples", "999", "--out", str(ws.tmp / "out"), *options]
    return argv


def _consistency(*options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["consistency", "--results", str(_shared(ws) / "results"), "-m", BM25, TUNED, THIRD,
                "--generated", TASK, "--human", TASK, "--no-corpus-check", "--resamples", "999",
                "--out", str(ws.tmp / "out"), *options]
    return argv


def _library_scores(ws: Workspace) -> Any:
    return _shared(ws)


def _check_one_query_set(ws: Workspace, folder: Path) -> None:
    """Score, interval, per-query file and judged@k of both models: all over the 13 queries MTEB averages over."""
    for n in (0, 1):
        results_path = results_files(folder / "results", ".json")[n]
        row, kept = dev_row(results_path), kept_dev(results_files(folder / "results", ".per_query.json.gz")[n])
        ids, values = independent_scores(folder, n)
        assert JUDGED_ZERO in ids and kept["query_ids"] == ids, (kept["query_ids"], ids)
        for metric, decimals in DECIMALS.items():
            assert kept["metrics"][metric] == values[metric].tolist(), metric
            assert row[metric] == round(float(np.mean(values[metric])), decimals), (metric, row[metric])
        assert row["main_score"] == row["ndcg_at_10"]
        for metric in ("judged_at_10", "judged_at_100"):
            assert len(kept["metrics"][metric]) == len(ids)
            assert row[metric] == round(float(np.mean(kept["metrics"][metric])), 5), metric
        mean = float(np.mean(values["ndcg_at_10"]))
        assert row["ndcg_at_10_ci_low"] <= mean <= row["ndcg_at_10_ci_high"], row


def _check_mrr_compared(ws: Workspace, _: Any) -> None:
    data = json.loads((ws.tmp / "out" / "significance.json").read_text())
    folder = _shared(ws)
    (ids, a), (_, b) = (independent_scores(folder, n) for n in (0, 1))
    compared = {c["metric"]: c for c in data["comparisons"]}
    assert set(compared) == {"mrr_at_10", "ndcg_at_10"}, compared
    for metric, comparison in compared.items():
        assert comparison["n_queries"] == len(ids)
        assert abs(comparison["mean_a"] - a[metric].mean()) < 1e-12 and abs(comparison["mean_b"] - b[metric].mean()) < 1e-12


CASES = [
    Case("queryset-judged-zero-query-in-every-number", call=_library_scores, check=_check_one_query_set),
    Case("queryset-significance-mrr-of-own-results", argv=_significance(_copy, "--metrics", "mrr_at_10", "ndcg_at_10"),
         check=_check_mrr_compared),
    Case("queryset-kept-values-swapped", argv=_significance(_mutated(_swap_two_queries), "--metrics", "judged_at_10"),
         error=".per_query.json.gz"),
    Case("queryset-digest-removed-from-a-digest-writer",
         argv=_significance(_mutated(_only_digest_removed), "--metrics", "judged_at_10"), error="has no per_query_sha256"),
    Case("queryset-consistency-same-set-both-sides", argv=_consistency("--generated-split", "dev", "--human-split", "dev"),
         error="agrees with itself"),
    Case("queryset-consistency-closed-book-split",
         argv=_consistency("--generated-split", "test", "--human-split", "dev"), error="closed-book"),
]
