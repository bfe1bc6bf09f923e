"""Per-query scores kept, confidence intervals in MTEB's results, and `airbench-mteb significance`, end to end.

BM25 and all-MiniLM-L6-v2 (once) on CocktailNQUTD (human setting, test: the shipped task MiniLM encodes fastest) and an AIR-Bench mirror
task (dev) through ``mteb.evaluate`` with prediction folders; everything is then checked against an
independent computation from the prediction files and the raw qrels files (pytrec_eval per query,
scipy.stats).
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from airbench_mteb.cli import main
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.settings import settings_applied
from tests.conftest import SAMPLE_DATA
from tests.tie_oracle import ndcg_oracle

COCKTAIL = "CocktailNFCorpus"  # source bias: BM25 on the mixed setting
SCORED_COCKTAIL = "CocktailNQUTD"  # the models compared; MiniLM encodes its 800 documents in seconds
AIRBENCH = "AIR-Bench_24.05_qa_news_zh"  # English MiniLM and BM25 differ on Chinese
BM25, MINILM = "airbench-mteb/bm25", "airbench-mteb/all-MiniLM-L6-v2"
BM25_TUNED = "airbench-mteb/bm25 (b=0.75, k1=1.2)"  # the label of BM25 run with other parameters
KEPT = ("ndcg_at_10", "recall_at_10", "recall_at_100", "map_at_10", "mrr_at_10")
# task -> (split, subset, main score)
SCORED = {SCORED_COCKTAIL: ("test", "human", "ndcg_at_1"), AIRBENCH: ("dev", "default", "ndcg_at_10")}
ISSUE_KEYS = {"task", "split", "subset", "metric", "model_a", "model_b", "n_queries", "mean_a", "mean_b", "difference",
              "ci_low", "ci_high", "p_value", "p_adjusted", "t_test_p_value", "effect_size", "wins", "ties", "losses"}


@dataclass(frozen=True)
class Runs:
    root: Path  # the MTEB results folder (ResultCache root)
    no_ci: Path  # BM25 again with intervals switched off
    predictions: Path  # one prediction folder per model, by short name
    data: Path  # the data folder the tasks read


def _tasks():
    import mteb

    return [mteb.get_task(SCORED_COCKTAIL, hf_subsets=["human"], eval_splits=["test"]),
            mteb.get_task(AIRBENCH, eval_splits=["dev"])]


def _evaluate(model, root: Path, predictions: Path | None) -> None:
    import mteb

    mteb.evaluate(model, _tasks(), cache=mteb.ResultCache(root), prediction_folder=predictions,
                  show_progress_bar=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, airbench_mirror: Path, minilm_nq_utd: dict[str, Any]) -> Runs:
    """The runs, MiniLM's NQ-UTD vectors read from minilm_nq_utd's embedding cache (encoded there for
    tests/test_cocktail_tasks.py; the same model, texts and prompts: the plugin's cache gives them back)."""
    import mteb

    folder = tmp_path_factory.mktemp("significance")
    data = folder / "data"  # one data folder for both families, without copying anything
    data.mkdir()
    (data / "cocktail").symlink_to(SAMPLE_DATA / "cocktail")
    (data / "AIR-Bench").symlink_to(airbench_mirror / "AIR-Bench")
    root, predictions = folder / "results", folder / "predictions"
    with settings_applied(data_dir=data, embedding_cache=minilm_nq_utd["embeddings"]):
        for name in (BM25, MINILM):
            _evaluate(mteb.get_model(name), root, predictions / name.split("/")[1])
        _evaluate(mteb.get_model(BM25, k1=1.2, b=0.75), root, None)
        with settings_applied(ci=None):
            _evaluate(mteb.get_model(BM25), folder / "no_ci", None)
    return Runs(root, folder / "no_ci", predictions, data)


# --- independent computation from the prediction files and the raw qrels files -----------------------------------

def _raw_qrels(runs: Runs, task: str) -> dict[str, dict[str, int]]:
    """The qrels as the files hold them, read here without the plugin (every query judged, relevance 0 included)."""
    qrels: dict[str, dict[str, int]] = {}
    if task == SCORED_COCKTAIL:
        with (runs.data / "cocktail" / "nq-utd" / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):  # the human setting's ids end in -human
                qrels.setdefault(row["query-id"], {})[f"{row['corpus-id']}-human"] = int(row["score"])
    else:
        path = runs.data / "AIR-Bench" / "qrels-qa_news_zh-dev" / "AIR-Bench_24.05" / "qrels_default_dev.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            qrels.setdefault(row["qid"], {})[row["docid"]] = int(row["relevance"])
    return qrels


def _independent(runs: Runs, task: str, model: str, metric: str) -> tuple[list[str], np.ndarray]:
    """Per-query values of ``metric`` from the model's prediction file: pytrec_eval, MRR by hand, over MTEB's queries
    (those judged that the run holds)."""
    split, subset, _ = SCORED[task]
    predictions = json.loads((runs.predictions / model.split("/")[1] / f"{task}_predictions.json").read_text())
    run = predictions[subset][split]
    qrels = _raw_qrels(runs, task)
    ids = sorted(qid for qid in qrels if qid in run)
    measure, k = metric.rsplit("_at_", 1)
    if measure == "mrr":
        values = []
        for qid in ids:
            ranked = sorted(run.get(qid, {}).items(), key=lambda item: (item[1], item[0]), reverse=True)[:int(k)]
            values.append(next((1 / r for r, (doc, _) in enumerate(ranked, 1) if qrels[qid].get(doc, 0) > 0), 0.0))
        return ids, np.array(values)
    trec = {"ndcg": "ndcg_cut", "map": "map_cut", "recall": "recall"}[measure]
    scores = pytrec_eval.RelevanceEvaluator(qrels, {f"{trec}.{k}"}).evaluate(run)
    return ids, np.array([scores[qid][f"{trec}_{k}"] for qid in ids])


def _task_result(root: Path, model: str, task: str):
    """The model's result on the task; BM25_TUNED's is in its experiment folder."""
    from mteb.results import TaskResult

    folder = root / "results" / model.split(" ")[0].replace("/", "__")
    pattern = f"*/experiments/*/{task}.json" if model == BM25_TUNED else f"*/{task}.json"
    return TaskResult.from_disk(next(folder.glob(pattern)))


def _score_dict(root: Path, model: str, task: str) -> dict:
    split, subset, _ = SCORED[task]
    return next(s for s in _task_result(root, model, task).scores[split] if s["hf_subset"] == subset)


def _monte_carlo(p: float, n: int = 9999) -> float:
    """Four standard errors of the difference between our p-value and scipy's, each from ``n`` random sign vectors,
    plus their +1 corrections. Ours counts |t*| >= |t| (variance p(1 - p) / n); scipy's two-sided p is twice a
    one-sided share (variance 2p(1 - p/2) / n)."""
    p = max(p, 1 / n)
    return 4 * math.sqrt(p * (1 - p) / n + 2 * p * (1 - p / 2) / n) + 3 / n


# --- the results: intervals, kept scores, MTEB's readers -----------------------------------------------------------

@pytest.mark.slow
def test_results_carry_intervals_that_mtebs_readers_read_without_warnings(runs: Runs) -> None:
    import mteb

    for task, (_, _, main_score) in SCORED.items():
        scores = _score_dict(runs.root, BM25, task)
        for metric in (main_score, *KEPT):
            assert scores[f"{metric}_ci_low"] <= scores[metric] <= scores[f"{metric}_ci_high"], (task, metric)
            method = scores.get(f"{metric}_ci_method", scores["ci_method"])
            # BCa unless every query scores the same (BM25 finds every Chinese mirror query's document first)
            assert method == ("percentile" if scores[f"{metric}_ci_low"] == scores[f"{metric}_ci_high"] else "BCa")
        assert (scores["ci_level"], scores["ci_n_resamples"], scores["ci_seed"]) == (0.95, 9999, 0)
    assert _score_dict(runs.root, MINILM, SCORED_COCKTAIL)["ci_method"] == "BCa"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = mteb.ResultCache(runs.root).load_results(models=[BM25, MINILM], tasks=list(SCORED),
                                                         require_model_meta=False)
        frame = loaded.to_dataframe()
    assert not frame.empty
    paths = mteb.ResultCache(runs.root).get_cache_paths(require_model_meta=False, include_remote=False)
    assert paths and not [path for path in paths if "per_query" in path.name]  # never taken for a task result


def test_kept_scores_merge_splits_of_the_same_data_and_replace_those_of_other_data(tmp_path: Path) -> None:
    from airbench_mteb.data.per_query import PendingScores, QueryScores, read_kept

    pending = PendingScores()

    results = tmp_path / "results" / "org__model" / "rev" / "Task.json"
    results.parent.mkdir(parents=True)

    def evaluate(split: str, data: str, value: float) -> set[str]:
        pending.hold("org/model", "rev", "Task", data, split, "default", QueryScores(("q1", "q2"), {"m": np.full(2, value)}))
        kept = read_kept(pending.write("Task", data, results))
        assert kept.dataset_revision == data and kept.scores[split]["default"].metrics["m"].tolist() == [value] * 2
        return set(kept.scores)

    assert evaluate("dev", "files-a", 0.5) == {"dev"}
    assert evaluate("test", "files-a", 0.25) == {"dev", "test"}  # a split added later joins the earlier ones
    assert evaluate("test", "files-b", 0.75) == {"test"}  # other data: nothing of the old data is kept
    pending.hold("other/model", "rev", "Task", "files-b", "dev", "default", QueryScores(("q1",), {"m": np.zeros(1)}))
    assert pending.write("Task", "files-b", results) is None  # another model's scores never go beside this file


def test_the_digest_binds_every_vector_and_every_row_must_have_one(tmp_path: Path) -> None:
    """Issue 43: a tie-neutral or per-source value changed is another digest; a score dict without a digest is
    refused (issue 44: every version that keeps per-query scores writes it)."""
    from airbench_mteb.data.errors import DatasetError
    from airbench_mteb.data.per_query import QueryScores
    from airbench_mteb.results.kept import _check_digest

    source = QueryScores(("q1", "q2"), {"ndcg_at_10": np.array([0.5, 1.0]), "ndcg_at_10_tie_neutral": np.ones(2)})
    scores = QueryScores(("q1", "q2"), {"ndcg_at_10": np.array([0.25, 1.0])}, {"llm": source})
    edited = [QueryScores(scores.query_ids, scores.metrics, {"llm": QueryScores(source.query_ids, {
        **source.metrics, name: np.array([0.5, 0.5])})}) for name in ("ndcg_at_10", "ndcg_at_10_tie_neutral")]
    assert len({scores.digest(), *(e.digest() for e in edited)}) == 3
    path, results = tmp_path / "T.per_query.json.gz", tmp_path / "T.json"
    for row in ({"judged_at_10": 0.5}, {"ndcg_at_10": 0.625}):
        with pytest.raises(DatasetError, match="has no per_query_sha256: the file was edited"):
            _check_digest(edited[1], row, "dev/mixed", path, results)
    with pytest.raises(DatasetError, match="SHA-256 differs"):
        _check_digest(edited[1], {"per_query_sha256": scores.digest()}, "dev/mixed", path, results)


@pytest.mark.slow
def test_main_scores_are_unchanged_and_no_interval_is_written_with_intervals_off(runs: Runs) -> None:
    for task in SCORED:
        with_ci, without = _score_dict(runs.root, BM25, task), _score_dict(runs.no_ci, BM25, task)
        assert with_ci["main_score"] == without["main_score"]
        assert not [key for key in without if key.startswith("ci_") or "_ci_" in key]
        assert list((runs.no_ci / "results").rglob(f"{task}.per_query.json.gz"))  # still kept


@pytest.mark.slow
def test_kept_per_query_scores_are_pytrec_eval_on_the_prediction_files(runs: Runs) -> None:
    from airbench_mteb.data.per_query import read_kept

    for model in (BM25, MINILM):
        for task, (split, subset, main_score) in SCORED.items():
            path = next((runs.root / "results" / model.replace("/", "__")).glob(f"*/{task}.per_query.json.gz"))
            kept = read_kept(path)
            assert (kept.model_name, kept.task_name) == (model, task)
            assert kept.dataset_revision == _task_result(runs.root, model, task).dataset_revision
            scores = kept.scores[split][subset]
            for metric in (main_score, *KEPT):
                ids, expected = _independent(runs, task, model, metric)
                assert list(scores.query_ids) == ids
                np.testing.assert_allclose(scores.metrics[metric], expected, atol=1e-12)
                assert round(expected.mean(), 5) == pytest.approx(_score_dict(runs.root, model, task)[metric],
                                                                  abs=1e-5)


@pytest.mark.slow
def test_results_intervals_agree_with_scipy_bootstrap(runs: Runs) -> None:
    task, (_, _, main_score) = SCORED_COCKTAIL, SCORED[SCORED_COCKTAIL]
    scores = _score_dict(runs.root, MINILM, task)
    for metric in (main_score, "ndcg_at_10"):
        _, values = _independent(runs, task, MINILM, metric)
        scipy_ci = stats.bootstrap((values,), np.mean, method="BCa", n_resamples=9999,
                                   rng=np.random.default_rng(1)).confidence_interval
        width = scipy_ci.high - scipy_ci.low
        assert scores[f"{metric}_ci_low"] == pytest.approx(scipy_ci.low, abs=0.05 * width)
        assert scores[f"{metric}_ci_high"] == pytest.approx(scipy_ci.high, abs=0.05 * width)


# --- the significance report ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report(runs: Runs):
    from airbench_mteb.report.significance import significance

    return significance(runs.root, [BM25, MINILM], tasks=list(SCORED), metrics=["main_score", "ndcg_at_10"])


@pytest.mark.slow
def test_significance_agrees_with_an_independent_scipy_computation(runs: Runs, report) -> None:
    # main score and nDCG@10 per task; the AIR-Bench task's main score is nDCG@10, compared once
    assert report.family_size == len(report.comparisons) == 3
    for c in report.comparisons:
        assert (c.model_a, c.model_b) == (BM25, MINILM)
        _, a = _independent(runs, c.task, BM25, c.metric)
        _, b = _independent(runs, c.task, MINILM, c.metric)
        d = a - b
        assert (c.n_queries, c.mean_a, c.mean_b) == (len(a), pytest.approx(a.mean()), pytest.approx(b.mean()))
        assert c.difference == pytest.approx(d.mean())
        assert c.t_test_p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
        assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
        assert (c.wins, c.ties, c.losses) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        scipy_p = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                         permutation_type="samples", n_resamples=9999,
                                         rng=np.random.default_rng(1)).pvalue
        assert c.p_value == pytest.approx(scipy_p, abs=_monte_carlo(scipy_p))
        scipy_ci = stats.bootstrap((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), paired=True,
                                   method="BCa", n_resamples=9999, rng=np.random.default_rng(1)).confidence_interval
        width = scipy_ci.high - scipy_ci.low
        assert (c.ci_low, c.ci_high) == (pytest.approx(scipy_ci.low, abs=0.05 * width),
                                         pytest.approx(scipy_ci.high, abs=0.05 * width))
    raw = np.array([c.p_value for c in report.comparisons])
    order = np.argsort(raw)
    holm = np.minimum(1, np.maximum.accumulate((len(raw) - np.arange(len(raw))) * raw[order]))
    np.testing.assert_allclose(np.array([c.p_adjusted for c in report.comparisons])[order], holm)


@pytest.mark.slow
def test_significance_command_writes_the_issues_json_and_the_tables(runs: Runs, report, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = main(["significance", "--results", str(runs.root), "-m", BM25, "all-MiniLM-L6-v2", "-t", *SCORED,
                 "--metrics", "main_score", "ndcg_at_10", "--out", str(out)])
    assert code == 0
    data = json.loads((out / "significance.json").read_text())
    assert (data["test"], data["n_resamples"], data["seed"], data["correction"], data["family_size"]) == \
        ("paired-randomization", 9999, 0, "holm", 3)
    assert len(data["comparisons"]) == 3 and all(ISSUE_KEYS <= set(c) for c in data["comparisons"])
    assert [c["p_adjusted"] for c in data["comparisons"]] == [c.p_adjusted for c in report.comparisons]
    rows = list(csv.DictReader(io.StringIO((out / "significance.csv").read_text())))
    assert [float(r["difference"]) for r in rows] == pytest.approx([c.difference for c in report.comparisons])
    markdown = (out / "significance.md").read_text()
    assert "## ndcg_at_1" in markdown and "## ndcg_at_10" in markdown and f"a. {BM25}" in markdown
    latex = (out / "significance.tex").read_text()
    assert latex.count(r"\toprule") == 2 and r"\textbf{" in latex
    assert "paired randomization test" in latex and "Holm correction" in latex and r"\alpha = 0.05" in latex
    significant = [c for c in report.comparisons if c.p_adjusted < 0.05]
    assert markdown.count("<sup>") == len(significant)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_bytes(runs: Runs, tmp_path: Path) -> None:
    from airbench_mteb.report.significance import significance, write_significance

    files = []
    for attempt in ("first", "second"):
        report = significance(runs.root, [BM25, MINILM], tasks=[AIRBENCH],
                              resampling=Resampling(n_resamples=999, seed=7))
        files.append([path.read_bytes() for path in write_significance(report, tmp_path / attempt)])
    assert files[0] == files[1]


@pytest.mark.slow
def test_benchmark_level_mean_interval_test_and_rank_intervals(runs: Runs) -> None:
    import mteb

    from airbench_mteb.report.significance import significance

    bench = mteb.Benchmark(name="two-tasks", tasks=_tasks())
    report = significance(runs.root, [BM25, MINILM, BM25_TUNED], benchmark=bench,
                          resampling=Resampling(n_resamples=1999))
    (level,) = report.benchmark
    assert level.tasks == tuple(SCORED) and len(report.comparisons) == 2 * 3
    for score in level.models:  # MTEB's benchmark mean: the mean over tasks of each task's main score
        expected = np.mean([_score_dict(runs.root, score.model, task)["main_score"] for task in SCORED])
        assert score.mean == pytest.approx(expected, abs=1e-5)
        assert score.ci_low <= score.mean <= score.ci_high
        assert score.rank_low <= score.rank <= score.rank_high
        assert score.rank == 1 + sum(other.mean > score.mean for other in level.models)
    pair = next(p for p in level.comparisons if (p.model_a, p.model_b) == (BM25, MINILM))
    a = [_independent(runs, task, BM25, SCORED[task][2])[1] for task in SCORED]
    b = [_independent(runs, task, MINILM, SCORED[task][2])[1] for task in SCORED]
    weights = np.concatenate([np.full(len(v), 1 / (len(SCORED) * len(v))) for v in a])
    scipy_p = stats.permutation_test((np.concatenate(a), np.concatenate(b)),
                                     lambda x, y, axis: np.sum(weights * (x - y), axis=axis),
                                     permutation_type="samples", n_resamples=1999, rng=np.random.default_rng(1)).pvalue
    assert pair.difference == pytest.approx(np.mean([x.mean() for x in a]) - np.mean([y.mean() for y in b]))
    assert pair.p_value == pytest.approx(scipy_p, abs=_monte_carlo(scipy_p, 1999))


# --- two models' source bias (co*cktail mixed subset) ----------------------------------------------------------------

LLM_STEM = "llama-2-7b-chat-tmp0.2"  # CocktailNFCorpus's LLM corpus file, source "llm"


@pytest.fixture(scope="module")
def bias_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """BM25 with two parameter sets on CocktailNFCorpus's mixed subset (test), with prediction folders."""
    import mteb

    folder = tmp_path_factory.mktemp("source_bias")
    (folder / "data").mkdir()
    (folder / "data" / "cocktail").symlink_to(SAMPLE_DATA / "cocktail")
    with settings_applied(data_dir=folder / "data"):
        for model, name in ((mteb.get_model(BM25), "default"), (mteb.get_model(BM25, k1=1.2, b=0.75), "tuned")):
            mteb.evaluate(model, [mteb.get_task(COCKTAIL, hf_subsets=["mixed"], eval_splits=["test"])],
                          cache=mteb.ResultCache(folder / "results"), prediction_folder=folder / "predictions" / name,
                          show_progress_bar=False)
    return folder


def _source_vectors(folder: Path, name: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-query ``metric`` of the model's mixed ranking against the human copies and against the LLM copies,
    from its prediction file and the raw qrels (pytrec_eval; queries with a relevant document, absent: 0).
    ``ndcg_at_<k>_tie_neutral``: expected over every order of the tied documents (the oracle of
    ``test_tie_neutral_bias``) instead of pytrec_eval's."""
    run = json.loads((folder / "predictions" / name / f"{COCKTAIL}_predictions.json").read_text())["mixed"]["test"]
    with (SAMPLE_DATA / "cocktail" / "nfcorpus" / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle, delimiter="\t") if int(row["score"]) > 0]
    k = metric.removesuffix("_tie_neutral").rsplit("_at_", 1)[1]
    vectors = []
    for stem in ("human", LLM_STEM):
        qrels: dict[str, dict[str, int]] = {}
        for row in rows:
            qrels.setdefault(row["query-id"], {})[f"{row['corpus-id']}-{stem}"] = int(row["score"])
        if metric.endswith("_tie_neutral"):
            vectors.append(np.array([ndcg_oracle({qid: qrels[qid]}, {qid: run[qid]}, int(k)) if qid in run else 0.0
                                     for qid in sorted(qrels)]))
            continue
        scores = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"}).evaluate(run)
        vectors.append(np.array([scores.get(qid, {}).get(f"ndcg_cut_{k}", 0.0) for qid in sorted(qrels)]))
    return vectors[0], vectors[1]


def _delta(human, llm):
    return (human - llm) / ((human + llm) / 2) * 100


def _scipy_delta_difference_p(human_a, llm_a, human_b, llm_b) -> float:
    """scipy's paired permutation test of Δ_A - Δ_B: each permutation swaps the models' (human, llm) pair of a query."""
    human, llm, n = np.concatenate([human_a, human_b]), np.concatenate([llm_a, llm_b]), len(human_a)

    def statistic(x, y, axis):  # indices into the pooled vectors, swapped query by query by scipy
        x, y = x.astype(int), y.astype(int)
        return _delta(human[x].mean(axis), llm[x].mean(axis)) - _delta(human[y].mean(axis), llm[y].mean(axis))

    return stats.permutation_test((np.arange(n), np.arange(n, 2 * n)), statistic, permutation_type="samples",
                                  n_resamples=9999, rng=np.random.default_rng(1)).pvalue


@pytest.mark.slow
def test_significance_compares_two_models_source_bias_as_an_independent_scipy_computation(bias_runs: Path,
                                                                                          tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["significance", "--results", str(bias_runs / "results"), "-m", BM25, BM25_TUNED, "-t", COCKTAIL,
                 "--metrics", "ndcg_at_1", "ndcg_at_10", "recall_at_100", "--out", str(out)]) == 0
    data = json.loads((out / "significance.json").read_text())
    bias = data["source_bias"]  # recall has no source bias: two metrics x one compared source x one pair
    assert bias["family_size"] == 2 and data["family_size"] == 3
    # and each Δ's tie-neutral form, a family of its own
    assert bias["tie_neutral_family_size"] == 2 and len(bias["comparisons"]) == 4
    for c in bias["comparisons"]:
        metric = c["metric"].removeprefix("relative_delta_").replace("_llm", "")
        assert (c["reference"], c["source"], c["model_a"], c["model_b"]) == ("human", "llm", BM25, BM25_TUNED)
        human_a, llm_a = _source_vectors(bias_runs, "default", metric)
        human_b, llm_b = _source_vectors(bias_runs, "tuned", metric)
        assert c["n_queries"] == len(human_a)
        assert c["delta_a"] == pytest.approx(_delta(human_a.mean(), llm_a.mean()))
        assert c["delta_b"] == pytest.approx(_delta(human_b.mean(), llm_b.mean()))
        assert c["difference"] == pytest.approx(c["delta_a"] - c["delta_b"])
        scored = next(s for s in _task_result(bias_runs / "results", BM25, COCKTAIL).scores["test"] if s["hf_subset"] == "mixed")
        assert c["delta_a"] == pytest.approx(scored["source_bias"][c["metric"]])  # the Δ the results file holds

        vectors = [human_a, llm_a, human_b, llm_b]
        scipy_ci = stats.bootstrap(vectors, lambda ha, la, hb, lb, axis: _delta(ha.mean(axis), la.mean(axis))
                                   - _delta(hb.mean(axis), lb.mean(axis)), paired=True, method="BCa",
                                   n_resamples=9999, rng=np.random.default_rng(1)).confidence_interval
        width = scipy_ci.high - scipy_ci.low
        assert (c["ci_low"], c["ci_high"]) == (pytest.approx(scipy_ci.low, abs=0.05 * width),
                                               pytest.approx(scipy_ci.high, abs=0.05 * width))
        scipy_p = _scipy_delta_difference_p(*vectors)
        assert c["p_value"] == pytest.approx(scipy_p, abs=_monte_carlo(scipy_p))
    for tie_neutral in (False, True):  # Holm within each family: the conventional p-values adjust as before
        family = [c for c in bias["comparisons"] if c["metric"].endswith("_tie_neutral") is tie_neutral]
        raw = sorted(c["p_value"] for c in family)
        assert sorted(c["p_adjusted"] for c in family) == pytest.approx([min(1, 2 * raw[0]),
                                                                         min(1, max(2 * raw[0], raw[1]))])
    markdown = (out / "significance.md").read_text()
    assert "## Source bias" in markdown and "relative_delta_ndcg_at_1_llm" in markdown
    assert r"\Delta_A - \Delta_B" in (out / "significance.tex").read_text()
    rows = list(csv.DictReader(io.StringIO((out / "significance.csv").read_text())))
    assert [r["metric"] for r in rows if r["level"] == "source_bias"] == [c["metric"] for c in bias["comparisons"]]


@pytest.mark.slow
def test_subsets_a_model_was_not_scored_on_are_left_out_with_a_note(runs: Runs, tmp_path: Path) -> None:
    import mteb

    from airbench_mteb.report.significance import significance

    root = tmp_path / "results"
    shutil.copytree(runs.root, root)
    with settings_applied(data_dir=runs.data):  # BM25 also on the mixed setting, MiniLM on human only
        mteb.evaluate(mteb.get_model(BM25), [mteb.get_task(SCORED_COCKTAIL, hf_subsets=["mixed"], eval_splits=["test"])],
                      cache=mteb.ResultCache(root), show_progress_bar=False)
    assert {s["hf_subset"] for s in _task_result(root, BM25, SCORED_COCKTAIL).scores["test"]} == {"human", "mixed"}
    report = significance(root, [BM25, MINILM], tasks=[SCORED_COCKTAIL])
    assert {(c.split, c.subset) for c in report.comparisons} == {("test", "human")}
    assert f"{SCORED_COCKTAIL} test/mixed: not scored for {MINILM}, left out" in report.notes


def test_a_score_mteb_wrote_to_6_decimals_holds_its_per_query_values(tmp_path: Path) -> None:
    """MTEB's TaskResult.to_disk rounds every score to 6 decimals; MRR and judged@k are not rounded before, so an MRR
    of 5/6 is written 0.833333 and must hold the per-query values that average 0.8333333..."""
    from airbench_mteb.data.errors import DatasetError
    from airbench_mteb.results.kept import _check_mean

    values = np.array([1.0, 1.0, 0.5])
    _check_mean(values, 0.833333, "mrr_at_10", "dev/default", tmp_path / "s.gz", tmp_path / "r.json")
    _check_mean(values, 0.83333, "ndcg_at_10", "dev/default", tmp_path / "s.gz", tmp_path / "r.json")
    for other in (0.833334, 0.83332):  # a query changed shows beyond either rounding
        with pytest.raises(DatasetError, match=r"average 0\.8333"):
            _check_mean(values, other, "mrr_at_10", "dev/default", tmp_path / "s.gz", tmp_path / "r.json")
