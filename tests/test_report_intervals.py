"""Confidence intervals where tables show scores: the demo's main-score table and the IRSC tables."""

from __future__ import annotations

from pathlib import Path

import mteb
import numpy as np
import pytest
from scipy import stats

from airbench_mteb.data.per_query import read_kept
from airbench_mteb.metrics.resampling import with_interval
from airbench_mteb.registry import register_tasks
from airbench_mteb.report.intervals import recorded_interval
from airbench_mteb.report.irsc import main_score_table
from airbench_mteb.settings import settings_applied
from airbench_mteb.tasks.cocktail import make_source_bias_task
from tests.test_cocktail_metrics import tiny_sources  # noqa: F401  (the fixture)


def test_a_score_shows_its_interval_or_stays_bare() -> None:
    assert with_interval(0.72719, (0.70123, 0.7549)) == "0.7272 [0.70, 0.75]"
    assert with_interval(0.72719, None) == "0.7272"
    assert recorded_interval({"ndcg_at_10": 0.5, "ndcg_at_10_ci_low": 0.4, "ndcg_at_10_ci_high": 0.6},
                             "ndcg_at_10") == (0.4, 0.6)
    assert recorded_interval({"ndcg_at_10": 0.5}, "ndcg_at_10") is None


def _table(results: Path) -> dict[str, list[str]]:
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in main_score_table(
        results, ["airbench-mteb/bm25"], ["TinyTableBias"]).splitlines() if line.startswith("| ")]
    return dict(zip(rows[0], zip(*rows[1:], strict=True), strict=True))


def test_the_main_score_table_shows_the_interval_of_the_mean_over_subsets(tiny_sources: Path,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    task = make_source_bias_task(tiny_sources, ["human", "llm"], name="TinyTableBias", settings=["human", "llm"])
    register_tasks([type(task)])
    model = mteb.get_model("airbench-mteb/bm25")
    with settings_applied(ci="bca", ci_resamples=9999):
        result = mteb.evaluate(model, task, cache=mteb.ResultCache(tmp_path / "on"), show_progress_bar=False)
    with settings_applied(ci=None):
        mteb.evaluate(model, task, cache=mteb.ResultCache(tmp_path / "off"), show_progress_bar=False)
    (task_result,) = result.task_results
    value = f"{task_result.get_score():.4f}"

    table = _table(tmp_path / "on")
    cell = table["TinyTableBias"][0]
    assert cell.startswith(value + " [") and table["Mean"] == table["TinyTableBias"]
    low, high = (float(bound) for bound in cell.removeprefix(value + " [").removesuffix("]").split(", "))
    # independently: scipy's bootstrap of the mean of the two subsets' means, each subset resampled on its own
    (kept_path,) = (tmp_path / "on").rglob("TinyTableBias.per_query.json.gz")
    kept = read_kept(kept_path).scores["test"]
    vectors = [kept[subset].metrics["ndcg_at_1"] for subset in ("human", "llm")]
    expected = stats.bootstrap(vectors, lambda a, b, axis: (a.mean(axis=axis) + b.mean(axis=axis)) / 2,
                               method="BCa", n_resamples=9999, random_state=1).confidence_interval
    # two independent 9,999-resample estimates of a bound: within ~0.06 interval widths, and 2 decimals shown
    tolerance = 0.06 * (expected.high - expected.low) + 0.005
    assert low == pytest.approx(expected.low, abs=tolerance) and high == pytest.approx(expected.high, abs=tolerance)
    assert np.mean([v.mean() for v in vectors]) == pytest.approx(task_result.get_score(), abs=1e-5)

    assert _table(tmp_path / "off")["TinyTableBias"] == (value,)  # CIs off: the bare value, as before
