"""One query set per number, through ``mteb.evaluate`` (issue 36, items 1 and 2).

An AIR-Bench mirror task whose dev split holds 12 queries with a relevant document and one judged relevance 0
only (as AIR-Bench's generated hard negatives are), scored by BM25 at two settings. MTEB's score averages over
all 13 (the 13th scores 0): the results' score, its interval, the per-query file and judged@k must all be of
those 13, and ``significance`` must compare the plugin's own files, MRR included (MTEB stores its mean with 6
decimals). Everything is checked against pytrec_eval and scipy on the prediction files and the raw qrels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from airbench_mteb.metrics.resampling import Resampling
from tests.bad_inputs.cases_query_set import (
    BM25,
    JUDGED_ZERO,
    TASK,
    TUNED,
    build_results,
    dev_row,
    independent_scores,
    kept_dev,
    results_files,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_results(tmp_path_factory.mktemp("query_set"))


def test_the_score_is_the_mean_of_the_per_query_file_over_the_query_judged_zero_only(folder: Path) -> None:
    row = dev_row(results_files(folder / "results", ".json")[0])
    kept = kept_dev(results_files(folder / "results", ".per_query.json.gz")[0])
    ids, values = independent_scores(folder, 0)
    assert len(ids) == 13 and JUDGED_ZERO in ids and kept["query_ids"] == ids
    assert values["ndcg_at_10"][ids.index(JUDGED_ZERO)] == 0.0
    assert row["main_score"] == row["ndcg_at_10"] == round(float(np.mean(kept["metrics"]["ndcg_at_10"])), 5)
    assert kept["metrics"]["ndcg_at_10"] == values["ndcg_at_10"].tolist()
    assert row["mrr_at_10"] == round(float(np.mean(kept["metrics"]["mrr_at_10"])), 6)
    for k in (10, 100):
        assert len(kept["metrics"][f"judged_at_{k}"]) == 13
        assert row[f"judged_at_{k}"] == round(float(np.mean(kept["metrics"][f"judged_at_{k}"])), 5)


def test_the_interval_is_over_the_same_queries(folder: Path) -> None:
    row = dev_row(results_files(folder / "results", ".json")[0])
    values = np.array(kept_dev(results_files(folder / "results", ".per_query.json.gz")[0])["metrics"]["ndcg_at_10"])
    method = row.get("ndcg_at_10_ci_method", row["ci_method"])
    scipy_ci = stats.bootstrap((values,), np.mean, method=method, n_resamples=9999,
                               rng=np.random.default_rng(1)).confidence_interval
    # the bootstrap means are multiples of 1/13: two draws of 9,999 resamples may pick neighbouring steps
    assert row["ndcg_at_10_ci_low"] == pytest.approx(scipy_ci.low, abs=1 / 13 + 1e-6)
    assert row["ndcg_at_10_ci_high"] == pytest.approx(scipy_ci.high, abs=1 / 13 + 1e-6)
    assert row["ndcg_at_10_ci_low"] < row["main_score"] < row["ndcg_at_10_ci_high"]


def test_significance_compares_mrr_of_the_plugins_own_results(folder: Path) -> None:
    from airbench_mteb.report.significance import significance

    report = significance(folder / "results", [BM25, TUNED], tasks=[TASK], metrics=["mrr_at_10", "ndcg_at_10"],
                          resampling=Resampling(n_resamples=999))
    (ids, a), (_, b) = (independent_scores(folder, n) for n in (0, 1))
    assert [c.metric for c in report.comparisons] == ["mrr_at_10", "ndcg_at_10"]
    for comparison in report.comparisons:
        assert comparison.n_queries == len(ids) == 13
        assert comparison.mean_a == pytest.approx(a[comparison.metric].mean(), abs=1e-15)
        assert comparison.mean_b == pytest.approx(b[comparison.metric].mean(), abs=1e-15)


def test_an_edit_that_keeps_every_mean_is_refused_wherever_kept_scores_are_read(folder: Path, tmp_path: Path) -> None:
    """Two queries' judged@10 swapped: the means stay, the digest the results record does not."""
    import gzip
    import json
    import shutil

    from airbench_mteb.data.errors import DatasetError
    from airbench_mteb.report.significance import significance
    from airbench_mteb.results.kept import kept_vectors
    from airbench_mteb.results.reading import read_results

    results = tmp_path / "results"
    shutil.copytree(folder / "results", results)
    kept_path = results_files(results, ".per_query.json.gz")[0]
    data = json.loads(gzip.decompress(kept_path.read_bytes()))
    values = data["scores"]["dev"]["default"]["metrics"]["judged_at_10"]
    j = next(i for i, value in enumerate(values) if value != values[0])
    values[0], values[j] = values[j], values[0]
    kept_path.write_bytes(gzip.compress(json.dumps(data).encode()))
    found = next(r for r in read_results(results, None, [TASK]).found if r.label == BM25)
    for read in (lambda: kept_vectors(found, "judged_at_10"),
                 lambda: significance(results, [BM25, TUNED], tasks=[TASK], metrics=["judged_at_10"],
                                      resampling=Resampling(n_resamples=999))):
        with pytest.raises(DatasetError, match="per_query_sha256") as error:
            read()
        assert str(kept_path) in str(error.value)
