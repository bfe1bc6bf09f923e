"""Label coverage (``judged_at_10``, ``judged_at_100``) in a plugin task's results, on real data.

BM25 at two settings on CocktailNFCorpus (human setting, test split) through ``mteb.evaluate``; the kept
per-query values are checked against ir_measures' Judged@k and against trec_eval (pytrec_eval's P@k over the
qrels with every grade raised by one, so every judged document counts, rescaled to a shorter ranking's
length), computed from the prediction file and the raw qrels file; the mean and its interval in the results
file against numpy and scipy; and the significance report compares the new metric like any other.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import ir_measures
import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from airbench_mteb.settings import settings_applied
from tests.conftest import SAMPLE_DATA

TASK = "CocktailNFCorpus"
BM25, BM25_TUNED = "airbench-mteb/bm25", "airbench-mteb/bm25 (b=0.75, k1=1.2)"
COVERAGE = {"judged_at_10": 10, "judged_at_100": 100}


@dataclass(frozen=True)
class Evaluated:
    results: Path  # the MTEB results folder (ResultCache root)
    run: dict[str, dict[str, float]]  # BM25's rankings, from its prediction file
    qrels: dict[str, dict[str, int]]  # the test qrels as the file holds them (every grade, 0 included)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    import mteb

    folder = tmp_path_factory.mktemp("coverage")
    cache = mteb.ResultCache(folder / "results")
    with settings_applied(data_dir=SAMPLE_DATA):
        for model, predictions in ((mteb.get_model(BM25), folder / "predictions"),
                                   (mteb.get_model(BM25, k1=1.2, b=0.75), None)):
            mteb.evaluate(model, [mteb.get_task(TASK, hf_subsets=["human"], eval_splits=["test"])], cache=cache,
                          prediction_folder=predictions, show_progress_bar=False)
    run = json.loads((folder / "predictions" / f"{TASK}_predictions.json").read_text())["human"]["test"]
    qrels: dict[str, dict[str, int]] = {}
    with (SAMPLE_DATA / "cocktail" / "nfcorpus" / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):  # the human setting's document ids end in -human
            qrels.setdefault(row["query-id"], {})[f"{row['corpus-id']}-human"] = int(row["score"])
    return Evaluated(folder / "results", run, qrels)


def _result_path(evaluated: Evaluated, model: str) -> Path:
    """The model's results file; the tuned BM25's is in its experiment folder."""
    folder = evaluated.results / "results" / model.split(" ")[0].replace("/", "__")
    return next(folder.glob(f"*/experiments/*/{TASK}.json" if model == BM25_TUNED else f"*/{TASK}.json"))


def _kept(evaluated: Evaluated, model: str):
    from airbench_mteb.data.per_query import per_query_path, read_kept

    return read_kept(per_query_path(_result_path(evaluated, model))).scores["test"]["human"]


def _scores(evaluated: Evaluated, model: str) -> dict:
    result = json.loads(_result_path(evaluated, model).read_text())
    return next(s for s in result["scores"]["test"] if s["hf_subset"] == "human")


def test_judged_at_k_is_ir_measures_and_trec_evals_judged(evaluated: Evaluated) -> None:
    kept = _kept(evaluated, BM25)
    query_ids = list(kept.query_ids)
    # MTEB's query set: every query judged (any relevance) that the run holds
    assert query_ids == sorted(q for q, docs in evaluated.qrels.items() if docs and q in evaluated.run)
    empty = [q for q in query_ids if not evaluated.run.get(q)]  # ir_measures divides by zero on these: we say 0
    # ir_measures breaks score ties by id ascending, trec_eval (and the plugin) descending: hand it trec_eval's order
    ranked = {q: sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)
              for q, docs in evaluated.run.items() if docs}
    by_rank = {q: {doc: float(len(docs) - position) for position, (doc, _) in enumerate(docs)}
               for q, docs in ranked.items()}
    measures = [ir_measures.Judged @ k for k in COVERAGE.values()]
    by_ir_measures = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, evaluated.qrels,
                                                                                            by_rank)}
    # trec_eval's P@k over the qrels with every grade raised by one counts the judged documents of the top k,
    # divided by k even for a shorter ranking, which Judged@k divides by its length
    raised = {q: {d: r + 1 for d, r in docs.items()} for q, docs in evaluated.qrels.items()}
    by_trec_eval = pytrec_eval.RelevanceEvaluator(raised, {"P.10,100"}).evaluate(evaluated.run)
    for name, k in COVERAGE.items():
        values = dict(zip(query_ids, kept.metrics[name], strict=True))
        assert len(set(values.values())) > 3  # real spread, not a constant
        assert all(values[q] == 0.0 for q in empty)
        scored = [q for q in query_ids if q not in empty]
        np.testing.assert_allclose([values[q] for q in scored],
                                   [by_ir_measures[(q, f"Judged@{k}")] for q in scored], atol=1e-12)
        np.testing.assert_allclose([values[q] for q in scored],
                                   [by_trec_eval[q][f"P_{k}"] * k / min(k, len(evaluated.run[q])) for q in scored],
                                   atol=1e-12)
    assert any(len(evaluated.run[q]) < 100 for q in scored)  # the short rankings were part of the check


def test_the_results_file_reports_label_coverage_with_its_interval(evaluated: Evaluated) -> None:
    kept, scores = _kept(evaluated, BM25), _scores(evaluated, BM25)
    for name in COVERAGE:
        values = kept.metrics[name]
        assert scores[name] == round(values.mean(), 5)
        scipy_ci = stats.bootstrap((values,), np.mean, method="BCa", n_resamples=9999,
                                   rng=np.random.default_rng(1)).confidence_interval
        width = scipy_ci.high - scipy_ci.low
        assert scores[f"{name}_ci_low"] == pytest.approx(scipy_ci.low, abs=0.05 * width)
        assert scores[f"{name}_ci_high"] == pytest.approx(scipy_ci.high, abs=0.05 * width)


def test_significance_compares_label_coverage(evaluated: Evaluated) -> None:
    from airbench_mteb.report.significance import significance

    report = significance(evaluated.results, [BM25, BM25_TUNED], tasks=[TASK], metrics=["judged_at_10"])
    (comparison,) = report.comparisons
    a, b = _kept(evaluated, BM25).metrics["judged_at_10"], _kept(evaluated, BM25_TUNED).metrics["judged_at_10"]
    assert (comparison.metric, comparison.n_queries) == ("judged_at_10", len(a))
    assert (comparison.mean_a, comparison.mean_b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
    assert comparison.t_test_p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
