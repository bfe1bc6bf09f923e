"""`airbench-mteb consistency` and scores by query attribute, end to end: the README's demonstration at small size.

A user's story, each step a command in its own process: generate an AIR-Bench set with the bundled LLM over a
slice of co*cktail NFCorpus's corpus, register it, run BM25 at three settings and BM25 over words on it and on
CocktailNFCorpus (human setting, test), then check the rankings agree. The report's numbers are checked against
scipy (the coefficients) and an enumeration of the panel's orderings (the p-values) on score tables read here from
MTEB's results files and the per-query files, without the plugin's readers.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from tests.conftest import SAMPLE_DATA
from tests.test_consistency_metrics import _kendall_numerator, _spearman_numerator, oracle_p

pytest.importorskip("llama_cpp")

# the module's fixture generates a dataset with the bundled LLM and runs the panel, each step a process
pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
GENERATED = "custom_qa_healthcare_en_nfslice"
HUMAN = "CocktailNFCorpus"
SLICE = 40  # corpus documents the generator reads
MODELS = ("airbench-mteb/bm25 (b=0.4, k1=0.9)", "airbench-mteb/bm25 (b=0.75, k1=1.2)",
          "airbench-mteb/bm25 (b=1.0, k1=2.0)", "airbench-mteb/bm25-words")


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], capture_output=True, text=True, timeout=900, cwd=folder,
                          env={**os.environ, "AIRBENCH_MTEB_CATALOG": str(folder / "catalog.json")})


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(folder, str(BIN / "airbench-mteb"), *args)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("consistency")
    lines = (SAMPLE_DATA / "cocktail" / "nfcorpus" / "corpus" / "human.jsonl").read_text().splitlines()[:SLICE]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    # 4 queries: with seed 1 quality control keeps 3 of them (1 dev, 2 test: the subsets of 2 below), as it did of 8
    # with seed 0 (SmolLM2 copies most queries from their documents), at 52 LLM calls instead of 77
    steps = [
        ["generate", "airbench", "--corpus", "corpus.jsonl", "--domain", "healthcare", "--language", "en",
         "--dataset", "nfslice", "--out", "gen", "--num-queries", "4", "--rewrites", "1", "--min-negatives", "2",
         "--max-negatives", "3", "--document-chars", "500", "--hard-negative-chars", "150", "--max-tokens", "96",
         "--rerankers", "minilm", "--seed", "1", "--release-date", "2025-01-01"],
        ["register-dataset", "gen"],
    ]
    for step in steps:
        done = _cli(folder, *step)
        assert done.returncode == 0, done.stderr[-3000:]
    panel = _run(folder, sys.executable, str(ROOT / "examples" / "consistency_panel.py"), "--data-dir",
                 str(SAMPLE_DATA), "--results", "results", "--no-dense", GENERATED, HUMAN)
    assert panel.returncode == 0, panel.stderr[-3000:]
    return folder


def _results_score(folder: Path, model: str, task: str, split: str, subset: str) -> float:
    """The model's nDCG@10 as MTEB's results file has it (found by its model_meta.json's label)."""
    for meta in (folder / "results" / "results").rglob("model_meta.json"):
        data = json.loads(meta.read_text())
        kwargs = data.get("experiment_kwargs") or {}
        label = data["name"] + (f" ({', '.join(f'{k}={v}' for k, v in sorted(kwargs.items()))})" if kwargs else "")
        if label == model and (meta.parent / f"{task}.json").is_file():
            rows = json.loads((meta.parent / f"{task}.json").read_text())["scores"][split]
            return next(row["ndcg_at_10"] for row in rows if row["hf_subset"] == subset)
    raise AssertionError(f"no results of {model} on {task}")


def _per_query(folder: Path, model: str, task: str, split: str, subset: str, metric: str) -> dict[str, float]:
    for meta in (folder / "results" / "results").rglob("model_meta.json"):
        data = json.loads(meta.read_text())
        kwargs = data.get("experiment_kwargs") or {}
        label = data["name"] + (f" ({', '.join(f'{k}={v}' for k, v in sorted(kwargs.items()))})" if kwargs else "")
        path = meta.parent / f"{task}.per_query.json.gz"
        if label == model and path.is_file():
            scores = json.loads(gzip.decompress(path.read_bytes()))["scores"][split][subset]
            return dict(zip(scores["query_ids"], scores["metrics"][metric], strict=True))
    raise AssertionError(f"no per-query scores of {model} on {task}")


def test_consistency_equals_scipy_on_the_results_score_tables(demo: Path) -> None:
    done = _cli(demo, "consistency", "--results", "results", "-m", *MODELS, "--generated", GENERATED,
                "--human", HUMAN, "--human-subset", "human", "--data-dir", str(SAMPLE_DATA), "--resamples", "999",
                "--subsets", "5", "--subset-size", "2", "--out", "report")
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in (demo / "report").iterdir()) == [
        "consistency.json", "consistency.md", "consistency_ndcg_at_10.png"]
    report = json.loads((demo / "report" / "consistency.json").read_text())
    (metric,) = report["metrics"]
    assert metric["metrics"] == {"generated": "ndcg_at_10", "human": "ndcg_at_10"}
    tables = {}
    for name, (task, subset) in {"generated": (GENERATED, "default"), "human": (HUMAN, "human")}.items():
        scores = [_results_score(demo, model, task, "test", subset) for model in MODELS]
        # MTEB's results file rounds to 5 decimals
        assert [s["score"] for s in metric["scores"][name]] == pytest.approx(scores, abs=0.5e-5 + 1e-12)
        assert all(s["ci_low"] <= s["score"] <= s["ci_high"] for s in metric["scores"][name])
        per_query = [_per_query(demo, model, task, "test", subset, "ndcg_at_10") for model in MODELS]
        tables[name] = np.array([[values[q] for values in per_query] for q in sorted(per_query[0])])
    (agreement,) = metric["agreements"]
    generated, human = tables["generated"].mean(axis=0), tables["human"].mean(axis=0)
    rho, tau = spearmanr(generated, human), kendalltau(generated, human)
    assert (agreement["spearman_rho"], agreement["kendall_tau"]) == pytest.approx((rho.statistic, tau.statistic))
    # 4 models: the exact p over the 24 orderings (twice the average ranks: integers)
    x, y = ([int(2 * r) for r in rankdata(np.round(means, 12))] for means in (generated, human))
    assert agreement["p_method"] == "exact"
    assert agreement["spearman_p"] == pytest.approx(float(oracle_p(x, y, _spearman_numerator)))
    assert agreement["kendall_p"] == pytest.approx(float(oracle_p(x, y, _kendall_numerator)))
    # robustness: 5 subsets of 2 generated queries, drawn as documented
    rng = np.random.default_rng(0)
    expected = [spearmanr(tables["generated"][rng.choice(len(tables["generated"]), 2, replace=False)].mean(axis=0),
                          human).statistic for _ in range(5)]
    assert agreement["subset_size"] == 2
    assert agreement["subset_rhos"] == pytest.approx(expected, nan_ok=True)
    markdown = (demo / "report" / "consistency.md").read_text()
    assert "| generated |" in markdown and MODELS[0] in markdown


def test_scores_by_query_attribute_group_the_generated_queries(demo: Path) -> None:
    done = _cli(demo, "report", "--plot", "by-attribute", "--results", "results", "--tasks", GENERATED,
                "--models", *MODELS[:2], "--out", "attributes")
    assert done.returncode == 0, done.stderr[-3000:]
    reports = json.loads((demo / "attributes" / "by_attribute.json").read_text())
    test = next(r for r in reports if r["split"] == "test")
    rows = [json.loads(line) for line in (demo / "gen" / "candidates.jsonl").read_text().splitlines()]
    types = {row["qid"]: row["attributes"]["query_type"] for row in rows if "qid" in row}
    values = _per_query(demo, MODELS[0], GENERATED, "test", "default", "ndcg_at_10")
    for group in (g for g in test["groups"] if g["attribute"] == "query_type" and g["model"] == MODELS[0]):
        members = [values[q] for q in values if types[q] == group["value"]]
        assert group["n_queries"] == len(members)
        assert group["mean"] == pytest.approx(np.mean(members))
    assert sum(g["n_queries"] for g in test["groups"] if g["attribute"] == "length" and g["model"] == MODELS[0]) \
        == len(values)


@pytest.mark.parametrize(("args", "message"), [
    (["-m", *MODELS[:2]], "at least 3"),
    (["-m", *MODELS[:3], "all-MiniLM-L6-v2"], "no results of model 'all-MiniLM-L6-v2'"),
    (["-m", *MODELS[:3], "--without-qc", "CocktailNQUTD"], "on task 'CocktailNQUTD'"),  # a set nobody ran
    (["-m", *MODELS[:3], "--human-subset", "mixed"], "no subset 'mixed'"),
    (["-m", *MODELS[:3], "--swap"], "different corpora"),
])
def test_errors_name_the_culprit_in_one_line(demo: Path, args: list[str], message: str) -> None:
    generated, human = (HUMAN, GENERATED) if "--swap" in args else (GENERATED, HUMAN)
    sets = ["--generated", generated, "--human", human]
    sets += ["--generated-subset", "human"] if "--swap" in args else (
        [] if "--human-subset" in args else ["--human-subset", "human"])
    done = _cli(demo, "consistency", "--results", "results", *[a for a in args if a != "--swap"], *sets,
                "--data-dir", str(SAMPLE_DATA), "--resamples", "99", "--out", "bad")
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
