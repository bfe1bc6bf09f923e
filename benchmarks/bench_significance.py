"""What confidence intervals cost: a real BM25 evaluation of a ~300-query task against its intervals.

1. Runs ``mteb.evaluate`` with ``airbench-mteb/bm25`` on CocktailNFCorpus, human subset (323 test
   queries), with the results' intervals switched off, and times it once: the evaluation time.
2. Reads the run back from the prediction file and computes, with pytrec_eval, the per-query
   vectors of the six reported metrics (the main score NDCG@1, nDCG@10, Recall@10, Recall@100,
   MAP@10, MRR@10), then times their BCa intervals with 9,999 resamples (median of a few runs):
   all six from one set of resamples (``bootstrap_cis``), and six separate ``bootstrap_ci`` calls.
3. Times the same six intervals for a 10,000-query split (synthetic nDCG-like vectors).

Prints the figures (wall-clock and CPU seconds, and the load average: on a shared machine the wall
time includes waiting) and, last, ``ci_overhead_ratio=<CI time / evaluation time>`` (targets: <= 0.05,
and <= 2 s for 10,000 queries).

    python benchmarks/bench_significance.py [--data-dir DIR] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

TASK, SUBSET, SPLIT, MODEL = "CocktailNFCorpus", "human", "test", "airbench-mteb/bm25"
RESAMPLES = 9999


def evaluate_bm25(data_dir: Path, predictions: Path) -> tuple[float, dict[str, float]]:
    """Seconds of one ``mteb.evaluate`` of BM25 on the task's human subset, intervals off (model built
    untimed), and MTEB's scores of that subset."""
    import mteb

    from airbench_mteb.settings import settings_applied

    with settings_applied(data_dir=data_dir, ci=None):
        model = mteb.get_model(MODEL)
        task = mteb.get_task(TASK, hf_subsets=[SUBSET], eval_splits=[SPLIT])
        start = time.perf_counter()
        result = mteb.evaluate(model, task, cache=None, prediction_folder=predictions, show_progress_bar=False)
        seconds = time.perf_counter() - start
    scores = next(s for s in result.task_results[0].scores[SPLIT] if s["hf_subset"] == SUBSET)
    return seconds, scores


def per_query_vectors(data_dir: Path, predictions: Path) -> dict[str, np.ndarray]:
    """The six reported metrics per query, from the prediction file and the qrels (pytrec_eval)."""
    import pytrec_eval

    from airbench_mteb.data.predictions import predictions_path, read_predictions
    from airbench_mteb.metrics.per_query import kept_metrics, per_query_scores, scored_queries

    ranked = read_predictions(predictions_path(predictions, TASK)).runs[SUBSET][SPLIT]
    # the task names each source's copy of a document "<id>-<source>"; the qrels file names the original
    run = {qid: {doc.removesuffix(f"-{SUBSET}"): score for doc, score in docs.items()} for qid, docs in ranked.items()}
    qrels: dict[str, dict[str, int]] = {}
    lines = (data_dir / "cocktail" / "nfcorpus" / "qrels" / f"{SPLIT}.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        qid, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(grade)
    measures = {"ndcg_cut.1,10", "recall.10,100", "map_cut.10"}
    trec_scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    metrics = kept_metrics("ndcg_at_1")
    return per_query_scores(trec_scores, qrels, run, metrics, scored_queries(qrels, run))


def median_seconds(work: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds of ``work`` (CPU time says how much of the wall time was waiting)."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def interval_times(vectors: dict[str, np.ndarray], repeats: int) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of the six BCa intervals: from one set of resamples, and as six separate calls."""
    from airbench_mteb.metrics import bootstrap_ci, bootstrap_cis

    return {"one set of resamples": median_seconds(lambda: bootstrap_cis(vectors, n_resamples=RESAMPLES), repeats),
            "separate calls": median_seconds(lambda: [bootstrap_ci(v, n_resamples=RESAMPLES) for v in vectors.values()],
                                             repeats)}


def describe(times: dict[str, tuple[float, float]]) -> str:
    return ", ".join(f"{wall:.3f} s ({cpu:.3f} s CPU) {how}" for how, (wall, cpu) in times.items())


def synthetic_split(queries: int, metrics: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f"metric_{i}": np.where(rng.random(queries) < 0.3, 0.0, rng.beta(2, 1, queries)) for i in range(metrics)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="mirror root holding cocktail/nfcorpus/ (default: the data shipped with the package)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each interval timing (the median is kept)")
    args = parser.parse_args()
    if args.data_dir is None:
        from airbench_mteb.data.sample_data import write_sample_data

        args.data_dir = write_sample_data(Path(tempfile.mkdtemp(prefix="sample-data-")))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    import airbench_mteb  # noqa: F401  (registers the tasks and models)
    from airbench_mteb.metrics import bootstrap_cis

    with tempfile.TemporaryDirectory(prefix="bench_significance_") as folder:
        evaluation, mteb_scores = evaluate_bm25(args.data_dir, Path(folder))
        vectors = per_query_vectors(args.data_dir, Path(folder))
    queries = len(next(iter(vectors.values())))
    print(f"{TASK} {SUBSET}/{SPLIT}, {MODEL}: evaluation {evaluation:.2f} s ({queries} queries); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    times = interval_times(vectors, args.repeats)
    print(f"BCa intervals of {len(vectors)} metrics, {RESAMPLES} resamples: {describe(times)}")
    for name, interval in bootstrap_cis(vectors, n_resamples=RESAMPLES).items():
        print(f"  {name}: {interval.estimate:.4f} [{interval.low:.4f}, {interval.high:.4f}] ({interval.method}); "
              f"MTEB's score {mteb_scores[name]:.4f}")
    large = synthetic_split(10_000, len(vectors))
    print(f"10,000-query split, {len(large)} metrics (target <= 2 s): {describe(interval_times(large, args.repeats))}")
    print(f"ci_overhead_ratio={times['one set of resamples'][0] / evaluation:.4f}")


if __name__ == "__main__":
    main()
