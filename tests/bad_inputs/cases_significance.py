"""Bad inputs of `airbench-mteb significance`, of the kept per-query scores it reads, and of the interval settings.

The shared results: BM25 and BM25 with other parameters (two models, one name) on an AIR-Bench mirror
task whose dev split is scored and whose test split is closed-book (its qrels file removed).

A case that edits a per-query file binds the results file beside it to the edited scores (``_edit_kept``),
as a writer that kept wrong scores would: the checks behind the digest (means, finite values, query sets)
are what it tests. An edit that is not bound is refused by the digest (``cases_query_set``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from tests.bad_inputs.framework import Case, Workspace, mutated_results, results_copy, shared_data

TASK = "AIR-Bench_24.05_qa_healthcare_en"
BM25 = "airbench-mteb/bm25"
TUNED = "airbench-mteb/bm25 (b=0.75, k1=1.2)"


@shared_data("significance_results")
def _results(folder: Path) -> Path:
    """``folder/mirror`` (the task's data, test qrels removed) and ``folder/results`` (both models' results)."""
    import mteb

    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import mirror_file
    from airbench_mteb.settings import settings_applied
    from tests.airbench_mirror import english_documents, write_entry

    entry = next(e for e in airbench_entries() if e.task_name == TASK)
    write_entry(folder / "mirror", entry, english_documents())
    mirror_file(folder / "mirror", entry, entry.qrels_location("test")).unlink()  # test: closed-book
    with settings_applied(data_dir=folder / "mirror"):
        for model in (mteb.get_model(BM25), mteb.get_model(BM25, k1=1.2, b=0.75)):
            mteb.evaluate(model, [mteb.get_task(TASK)], cache=mteb.ResultCache(folder / "results"),
                          show_progress_bar=False)
    return folder


def _shared(ws: Workspace) -> Path:
    return ws.shared("significance_results") / "results"


def _copy(ws: Workspace) -> Path:
    return results_copy(ws, "significance_results")


def _files(root: Path, suffix: str) -> list[Path]:
    """The results (``.json``) or kept scores (``.per_query.json.gz``) of both models, default BM25 first."""
    return sorted((root / "results").rglob(f"{TASK}{suffix}"), key=lambda path: "experiments" in path.parts)


def _edit_kept(path: Path, change: Callable[[dict], None]) -> None:
    """``change`` the kept scores in ``path`` and record their digests in the results file beside it: the SHA-256 of
    each split and subset's scores as canonical JSON (keys sorted, no spaces), as the plugin's writer binds them."""
    data = json.loads(gzip.decompress(path.read_bytes()))
    change(data)
    path.write_bytes(gzip.compress(json.dumps(data).encode()))

    def bind(result: dict) -> None:
        for split, rows in result["scores"].items():
            for row in rows:
                scores = data["scores"].get(split, {}).get(row["hf_subset"])
                if scores is not None:
                    text = json.dumps(scores, sort_keys=True, separators=(",", ":"))
                    row["per_query_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _edit_result(path.with_name(path.name.replace(".per_query.json.gz", ".json")), bind)


def _edit_result(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _argv(root: Callable[[Workspace], Path], *options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["significance", "--results", str(root(ws)), "--out", str(ws.tmp / "out"), *options]
    return argv


def _mutated(mutate: Callable[[Path], None]) -> Callable[[Workspace], Path]:
    return mutated_results("significance_results", mutate)


def _without_kept(root: Path) -> None:
    _files(root, ".per_query.json.gz")[0].unlink()  # as an older version left it


def _corrupt_kept(root: Path) -> None:
    _files(root, ".per_query.json.gz")[1].write_bytes(b"not gzip")


def _kept_of_other_data(root: Path) -> None:
    _edit_kept(_files(root, ".per_query.json.gz")[0], lambda data: data.update(dataset_revision="mirror-stale"))


def _one_model_on_other_data(root: Path) -> None:
    _edit_result(_files(root, ".json")[1], lambda data: data.update(dataset_revision="mirror-other"))
    _edit_kept(_files(root, ".per_query.json.gz")[1], lambda data: data.update(dataset_revision="mirror-other"))


def _dev_data_other(root: Path) -> None:
    """The tuned BM25 on other data, its dev split's included (what a dev comparison compares)."""
    _one_model_on_other_data(root)
    _edit_result(_files(root, ".json")[1], lambda data: data["scores"]["dev"][0].update(
        split_data_revision="mirror-other-dev"))


def _other_splits_call(ws: Workspace) -> Any:
    """The tuned BM25's mirror held other files too: its data revision differs, its dev split's data is the same
    (every report's one rule: models are compared where their split's data agree)."""
    from airbench_mteb.metrics.resampling import Resampling
    from airbench_mteb.report.significance import significance

    return significance(_mutated(_one_model_on_other_data)(ws), [BM25, TUNED], tasks=[TASK], metrics=["ndcg_at_10"],
                        resampling=Resampling(n_resamples=99))


def _check_compared(ws: Workspace, report: Any) -> None:
    assert [(c.metric, c.split) for c in report.comparisons] == [("ndcg_at_10", "dev")], report.comparisons


def _one_query(root: Path) -> None:
    def keep_one(data: dict) -> None:
        scores = data["scores"]["dev"]["default"]
        scores["query_ids"] = scores["query_ids"][:1]
        scores["metrics"] = {name: values[:1] for name, values in scores["metrics"].items()}
    for path in _files(root, ".per_query.json.gz"):
        _edit_kept(path, keep_one)


def _dev_scores(data: dict) -> dict:
    return data["scores"]["dev"]["default"]


def _unknown_queries_added(root: Path) -> None:
    """Issue 28: 40 query ids the qrels do not have, scored 0, added to BM25's file (n = 120 was compared)."""
    def add(data: dict) -> None:
        scores = _dev_scores(data)
        scores["query_ids"] += [f"unknown-{i}" for i in range(40)]
        scores["metrics"] = {name: values + [0.0] * 40 for name, values in scores["metrics"].items()}
    _edit_kept(_files(root, ".per_query.json.gz")[0], add)


def _every_score_changed(root: Path) -> None:
    """Issue 28 (every nDCG@1 set to 1.0 was reported as BM25's score): here every nDCG@10 of BM25's file is set to
    0.25 (this mirror's BM25 scores 1.0)."""
    def quarter(data: dict) -> None:
        metrics = _dev_scores(data)["metrics"]
        metrics["ndcg_at_10"] = [0.25] * len(metrics["ndcg_at_10"])
    _edit_kept(_files(root, ".per_query.json.gz")[0], quarter)


def _nan_main_score(root: Path) -> None:
    """Issue 28: a NaN main score without the closed-book entry was taken for a closed-book split."""
    def nan(data: dict) -> None:
        data["scores"]["dev"][0]["main_score"] = float("nan")
    _edit_result(_files(root, ".json")[0], nan)


def _nan_score(root: Path) -> None:
    def nan(data: dict) -> None:
        _dev_scores(data)["metrics"]["ndcg_at_10"][3] = float("nan")
    _edit_kept(_files(root, ".per_query.json.gz")[1], nan)


def _query_missing_results_agreeing(root: Path) -> None:
    """The tuned model's file lacks a query and its results file averages over the rest: each file agrees with its
    results, but the two models were scored on different queries (that query counted 0 before)."""
    def drop_first(data: dict) -> None:
        scores = _dev_scores(data)
        del scores["query_ids"][0]
        scores["metrics"] = {name: values[1:] for name, values in scores["metrics"].items()}
    _edit_kept(_files(root, ".per_query.json.gz")[1], drop_first)
    scores = _dev_scores(json.loads(gzip.decompress(_files(root, ".per_query.json.gz")[1].read_bytes())))

    def means(result: dict) -> None:
        (dev,) = result["scores"]["dev"]
        dev.update({name: float(np.mean(values)) for name, values in scores["metrics"].items() if name in dev})
        dev["main_score"] = dev["ndcg_at_10"]
    _edit_result(_files(root, ".json")[1], means)


def _dev_dropped(root: Path) -> None:
    for path in _files(root, ".json"):
        _edit_result(path, lambda data: data["scores"].pop("dev"))


def _subset_renamed(root: Path) -> None:
    """Issue 50, finding 5: the tuned model's results file names its dev subset otherwise than its per-query file
    (significance left the split out with a note; leaderboard and consistency refused the folder)."""
    _edit_result(_files(root, ".json")[1], lambda data: data["scores"]["dev"][0].update(hf_subset="renamed"))


def _kept_vectors(ws: Workspace, metric: str, root: Path | None = None) -> list[np.ndarray]:
    """Both models' dev vectors, read from the kept files (of the shared results, or of ``root``) without the plugin."""
    return [np.array(json.loads(gzip.decompress(path.read_bytes()))["scores"]["dev"]["default"]["metrics"][metric])
            for path in _files(root or _shared(ws), ".per_query.json.gz")]


def _library_call(ws: Workspace) -> Any:
    from airbench_mteb.metrics.resampling import Resampling
    from airbench_mteb.report.significance import significance

    return significance(_shared(ws), [BM25, TUNED], tasks=[TASK], metrics=["ndcg_at_10", "mrr_at_10"],
                        resampling=Resampling(n_resamples=999))


def _check_library(ws: Workspace, report: Any) -> None:
    assert [c.metric for c in report.comparisons] == ["ndcg_at_10", "mrr_at_10"], report.comparisons
    for comparison in report.comparisons:
        a, b = _kept_vectors(ws, comparison.metric)
        assert comparison.difference == float(a.mean() - b.mean())
        p = stats.ttest_rel(a, b).pvalue if not np.array_equal(a, b) else 1.0
        assert abs(comparison.t_test_p_value - p) < 1e-9, (comparison.t_test_p_value, p)
        assert comparison.p_adjusted >= comparison.p_value
    assert any("closed-book" in note for note in report.notes), report.notes


def _few_queries_differ(root: Path) -> None:
    """The tuned model's MRR@10 of 4 queries moved to other ranks, its results file averaging the same: 4 of the 12
    queries differ, by 1 - 1/2 twice (equal differences, the ties a float sum misjudged), 1 - 1/3 and 1 - 1/4."""
    values = [1 / 2, 1 / 3, 1 / 2, 1 / 4]

    def move(data: dict) -> None:
        kept_values = _dev_scores(data)["metrics"]["mrr_at_10"]
        kept_values[:4] = values
        values[:] = kept_values
    _edit_kept(_files(root, ".per_query.json.gz")[1], move)

    def mean(result: dict) -> None:
        (dev,) = result["scores"]["dev"]
        dev["mrr_at_10"] = float(np.mean(values))
    _edit_result(_files(root, ".json")[1], mean)


def _exact_library_call(ws: Workspace) -> Any:
    from airbench_mteb.report.significance import significance

    return significance(_mutated(_few_queries_differ)(ws), [BM25, TUNED], tasks=[TASK], metrics=["mrr_at_10"])


def _check_exact(ws: Workspace, report: Any) -> None:
    """MRR@10 is 1 / r: in exact rationals, p is the share of sign vectors of the queries that differ whose |sum|
    reaches the observed one (issue 28: ties were judged on the difference's scale)."""
    assert [(c.wins, c.ties, c.losses) for c in report.comparisons] == [(4, 8, 0)], report.comparisons
    for comparison in report.comparisons:
        a, b = ([Fraction(value).limit_denominator(1000) for value in vector]
                for vector in _kept_vectors(ws, comparison.metric, _copy(ws)))
        differences = [x - y for x, y in zip(a, b, strict=True) if x != y]
        observed = abs(sum(differences))
        count = sum(abs(sum(d if (row >> i) & 1 else -d for i, d in enumerate(differences))) >= observed
                    for row in range(2 ** len(differences)))
        assert comparison.exact and comparison.p_value == count / 2 ** len(differences), (comparison, count)


def _check_no_correction(ws: Workspace, _: Any) -> None:
    data = json.loads((ws.tmp / "out" / "significance.json").read_text())
    assert (data["correction"], data["family_size"]) == ("none", 1)
    (comparison,) = data["comparisons"]
    assert comparison["p_adjusted"] == comparison["p_value"]
    a, b = _kept_vectors(ws, "ndcg_at_10")
    assert comparison["n_queries"] == len(a) and abs(comparison["difference"] - (a.mean() - b.mean())) < 1e-12


def _run_argv(*options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["run", "-m", BM25, "-t", TASK, "--eval-splits", "dev", "--data-dir",
                str(ws.shared("significance_results") / "mirror"), "--output-folder", str(ws.tmp / "run"), *options]
    return argv


def _check_no_ci_run(ws: Workspace, _: Any) -> None:
    from mteb.results import TaskResult

    (path,) = _files(ws.tmp / "run", ".json")
    (scores,) = TaskResult.from_disk(path).scores["dev"]
    assert not [key for key in scores if "_ci_" in key or key.startswith("ci_")], scores
    shared = json.loads(_files(_shared(ws), ".json")[0].read_text())["scores"]["dev"][0]
    assert scores["main_score"] == shared["main_score"]
    assert _files(ws.tmp / "run", ".per_query.json.gz"), "per-query scores are kept without intervals too"


def _existing_file(ws: Workspace) -> Path:
    path = ws.tmp / "a-file"
    path.write_text("")
    return path


CASES = [
    Case("significance-one-model", argv=_argv(_shared, "-m", BM25, "-t", TASK), error="at least two"),
    Case("significance-one-model-twice", argv=_argv(_shared, "-m", BM25, BM25, "-t", TASK), error="at least two"),
    Case("significance-unknown-model", argv=_argv(_shared, "-m", BM25, "nosuch/model", "-t", TASK),
         error="nosuch/model"),
    Case("significance-ambiguous-short-name", argv=_argv(_shared, "-m", "bm25", TUNED, "-t", TASK), error="bm25"),
    Case("significance-unknown-task", argv=_argv(_shared, "-m", BM25, TUNED, "-t", "NoSuchTask"), error="NoSuchTask"),
    Case("significance-task-of-bias-sources", argv=_argv(_shared, "-m", BM25, TUNED, "-t", "SourceBias_my-folder"),
         error="made by `bias --sources`"),
    Case("significance-unknown-benchmark", argv=_argv(_shared, "-m", BM25, TUNED, "-b", "NoSuchBench"),
         error="NoSuchBench"),
    Case("significance-no-task", argv=_argv(_shared, "-m", BM25, TUNED), error="-t"),
    Case("significance-task-not-run", argv=_argv(_shared, "-m", BM25, TUNED, "-t", "AIR-Bench_24.05_qa_news_en"),
         error="AIR-Bench_24.05_qa_news_en"),
    Case("significance-results-folder-missing", argv=_argv(lambda ws: ws.tmp / "nowhere", "-m", BM25, TUNED, "-t", TASK),
         error="nowhere"),
    Case("significance-older-results-without-kept-scores",
         argv=_argv(_mutated(_without_kept), "-m", BM25, TUNED, "-t", TASK), error="--overwrite-strategy always"),
    Case("significance-kept-scores-corrupt", argv=_argv(_mutated(_corrupt_kept), "-m", BM25, TUNED, "-t", TASK),
         error=".per_query.json.gz"),
    Case("significance-kept-scores-of-other-data",
         argv=_argv(_mutated(_kept_of_other_data), "-m", BM25, TUNED, "-t", TASK), error="mirror-stale"),
    Case("significance-models-on-different-data",
         argv=_argv(_mutated(_dev_data_other), "-m", BM25, TUNED, "-t", TASK), error="mirror-other-dev"),
    Case("significance-models-differing-only-in-other-splits", call=_other_splits_call, check=_check_compared),
    Case("significance-closed-book-split-asked", argv=_argv(_shared, "-m", BM25, TUNED, "-t", TASK, "--splits", "test"),
         error="closed-book"),
    Case("significance-every-split-closed-book", argv=_argv(_mutated(_dev_dropped), "-m", BM25, TUNED, "-t", TASK),
         error="closed-book"),
    Case("significance-one-query", argv=_argv(_mutated(_one_query), "-m", BM25, TUNED, "-t", TASK),
         error="at least 2"),
    Case("significance-kept-scores-with-unknown-queries",
         argv=_argv(_mutated(_unknown_queries_added), "-m", BM25, TUNED, "-t", TASK), error="says"),
    Case("significance-kept-scores-contradict-results",
         argv=_argv(_mutated(_every_score_changed), "-m", BM25, TUNED, "-t", TASK), error="ndcg_at_10"),
    Case("significance-kept-score-nan", argv=_argv(_mutated(_nan_score), "-m", BM25, TUNED, "-t", TASK), error="nan"),
    Case("significance-nan-main-score-not-closed-book",
         argv=_argv(_mutated(_nan_main_score), "-m", BM25, TUNED, "-t", TASK), error="main_score is NaN"),
    Case("significance-models-scored-on-different-queries",
         argv=_argv(_mutated(_query_missing_results_agreeing), "-m", BM25, TUNED, "-t", TASK), error="scored for"),
    Case("significance-results-subset-not-in-kept-scores",
         argv=_argv(_mutated(_subset_renamed), "-m", BM25, TUNED, "-t", TASK),
         error=f"no per-query scores of dev/renamed for {TUNED}"),
    Case("significance-metric-not-kept", argv=_argv(_shared, "-m", BM25, TUNED, "-t", TASK, "--metrics", "precision_at_7"),
         error="precision_at_7"),
    Case("significance-unknown-correction", argv=_argv(_shared, "-m", BM25, TUNED, "-t", TASK, "--correction", "sidak"),
         error="sidak"),
    Case("significance-zero-resamples", argv=_argv(_shared, "-m", BM25, TUNED, "-t", TASK, "--resamples", "0"),
         error="0 resamples"),
    Case("significance-alpha-above-one", argv=_argv(_shared, "-m", BM25, TUNED, "-t", TASK, "--alpha", "1.5"),
         error="1.5"),
    Case("significance-out-is-a-file",
         argv=lambda ws: ["significance", "--results", str(_shared(ws)), "-m", BM25, TUNED, "-t", TASK,
                          "--out", str(_existing_file(ws))], error="a-file"),
    Case("significance-library-matches-scipy", call=_library_call, check=_check_library),
    Case("significance-p-exact-over-the-differing-queries", call=_exact_library_call, check=_check_exact),
    Case("significance-no-correction", argv=_argv(_shared, "-m", BM25, TUNED, "-t", TASK, "--metrics", "ndcg_at_10",
                                                  "--correction", "none", "--resamples", "999"),
         check=_check_no_correction),
    Case("significance-ci-setting-unknown", argv=_run_argv(), env={"AIRBENCH_MTEB_CI": "sometimes"},
         error="AIRBENCH_MTEB_CI"),
    Case("significance-ci-resamples-too-few", argv=_run_argv(), env={"AIRBENCH_MTEB_CI_RESAMPLES": "10"},
         error="AIRBENCH_MTEB_CI_RESAMPLES"),
    Case("significance-run-without-intervals", argv=_run_argv("--no-ci"), check=_check_no_ci_run),
]
