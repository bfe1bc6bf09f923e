"""`airbench-mteb leaderboard`: the AIR-Bench leaderboard's table of local runs, checked against the leaderboard's code.

BM25, BM25 over words, all-MiniLM-L6-v2 and BM25 re-ranked by MiniLM run on the dev splits of the
test mirror (tests/airbench_mirror.py); the command writes its files. The oracle below reads the
``eval_results`` files the command wrote exactly as the AIR-Bench leaderboard app's loader does
(``src/loaders.py``: every ``results*.json`` under the version folder, one result per timestamp;
``src/models.py``: columns ``<domain>_<lang>[_<dataset>]`` made safe, values x 100; ``src/utils.py``:
Average -1 when a column is missing, pandas' mean and rounding, rank method "min") and the table
in ``leaderboard.json`` must equal it. Intervals are checked against scipy's bootstrap on the per-query
files read directly, rank groups against an exact sign-flip enumeration and Holm's formula, and the
page's filters in headless Chromium.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from airbench_mteb.cli import main
from airbench_mteb.data.errors import OptionError
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.report.leaderboard import leaderboard
from airbench_mteb.report.leaderboard.table import LEADERBOARD_METRICS, leaderboard_average, leaderboard_ranks
from airbench_mteb.report.leaderboard.uncertainty import rank_groups
from airbench_mteb.settings import settings_applied
from tests.closed_book_run import NEWS_EN, closed_book_mirror, data_dir

VERSION = "AIR-Bench_24.05"
TASKS = ("AIR-Bench_24.05_qa_news_en", "AIR-Bench_24.05_qa_news_zh", "AIR-Bench_24.05_qa_healthcare_en",
         "AIR-Bench_24.05_long-doc_arxiv_en_llama2")
BM25, BM25_WORDS, MINILM = "airbench-mteb/bm25", "airbench-mteb/bm25-words", "airbench-mteb/all-MiniLM-L6-v2"
RERANKED = ("airbench-mteb/bm25", "airbench-mteb/all-MiniLM-L6-v2")  # (retriever, reranker) of the re-ranked run
RESAMPLES = 999
CATALOG = Path(__file__).parents[1] / "airbench_mteb" / "catalog" / "airbench.json"
UPSTREAM = Path(__file__).parent / "data" / "airbench_catalog.json"
# The app's column order: the domains of air_benchmark's QATaskTable and LongDocTaskTable, per version
APP_DOMAINS = {
    "AIR-Bench_24.04": {"qa": ("wiki", "web", "healthcare", "law", "arxiv", "news", "finance", "msmarco"),
                        "long-doc": ("healthcare", "arxiv", "law", "book")},
    "AIR-Bench_24.05": {"qa": ("wiki", "web", "healthcare", "law", "arxiv", "science", "news", "finance", "msmarco"),
                        "long-doc": ("healthcare", "arxiv", "law", "book")},
}


@dataclass(frozen=True)
class Runs:
    results: Path
    out: Path  # what `airbench-mteb leaderboard` wrote
    data: dict  # its leaderboard.json


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, airbench_mirror: Path) -> Runs:
    import mteb

    from airbench_mteb.names import reranked_model_meta

    folder = tmp_path_factory.mktemp("leaderboard")
    results, predictions = folder / "results", folder / "predictions"
    tasks = mteb.get_tasks(tasks=list(TASKS), eval_splits=["dev"])
    with settings_applied(data_dir=airbench_mirror):
        for name in (BM25, BM25_WORDS, MINILM):
            mteb.evaluate(mteb.get_model(name), tasks, cache=mteb.ResultCache(results),
                          prediction_folder=predictions / name.split("/")[1], show_progress_bar=False)
        reranker = reranked_model_meta(mteb.get_model_meta(MINILM), predictions / "bm25", 10)
        mteb.evaluate(reranker, tasks, cache=mteb.ResultCache(results), show_progress_bar=False)
    out = folder / "board"
    assert main(["leaderboard", "--results", str(results), "--split", "dev", "--benchmark", VERSION,
                 "--resamples", str(RESAMPLES), "--out", str(out)]) == 0
    return Runs(results, out, json.loads((out / "leaderboard.json").read_text(encoding="utf-8")))


# --- the oracle: what the leaderboard app computes from the result files -------------------------------------------

def _safe(name: str) -> str:
    name = name.replace("-", "_")
    return "".join(ch.lower() for ch in name if ch.isalnum() or ch == "_")


def catalog_columns(task_type: str, split: str, version: str = VERSION) -> list[dict]:
    """The app's benchmark columns of the version (its datasets with the split) in the app's order: its benchmark
    table's domains in the order of ``air_benchmark/tasks/<version>/tasks.py`` (:data:`APP_DOMAINS`), each domain's
    languages and datasets in the order of the official catalog (``tests/data/airbench_catalog.json``)."""
    facts = json.loads(UPSTREAM.read_text(encoding="utf-8"))[version][task_type]
    return [{"name": _safe(f"{domain}_{lang}" + ("" if dataset == "default" else f"_{dataset}")), "domain": domain,
             "lang": lang} for domain in APP_DOMAINS[version][task_type]
            for lang, datasets in facts[domain].items() for dataset, info in datasets.items() if split in info["splits"]]


def load_raw(folder: Path) -> list[list[dict]]:
    """The loader: every results*.json below the version folder; a later file of a timestamp replaces an earlier."""
    by_timestamp = {}
    for root, _, files in os.walk(folder / "eval_results" / VERSION):
        for name in files:
            if name.startswith("results") and name.endswith(".json"):
                items = json.loads(Path(root, name).read_text(encoding="utf-8"))
                by_timestamp[items[0]["config"]["timestamp"]] = items
    return list(by_timestamp.values())


def _mean_or_missing(row: pd.Series) -> float:
    return -1 if pd.isna(row).any() else row.mean()


def oracle_frame(raw: list[list[dict]], task_type: str, metric: str, split: str = "dev") -> pd.DataFrame:
    records = []
    for items in raw:
        for item in items:
            config = item["config"]
            if config["task"] != task_type or config["metric"] != metric:
                continue
            record = {"retriever": config["retrieval_model"], "reranker": config["reranking_model"]}
            for result in item["results"]:
                dataset = result["dataset"]
                key = f"{result['domain']}_{result['lang']}" + ("" if dataset == "default" else f"_{dataset}")
                record[_safe(key)] = result["value"] * 100
            records.append(record)
    df = pd.DataFrame.from_records(records)
    columns = [c["name"] for c in catalog_columns(task_type, split) if c["name"] in df.columns]
    df["average"] = df[columns].apply(_mean_or_missing, axis=1).round(decimals=2)
    df = df[["retriever", "reranker", "average", *columns]].round(decimals=2)
    df["rank"] = df["average"].rank(ascending=False, method="min")
    return df


def oracle_filtered(frame: pd.DataFrame, task_type: str, domains: set[str], langs: set[str]) -> dict:
    """The app's filter: the selected columns of the shown (rounded) frame, their mean, -1 when one is missing."""
    selected = [c["name"] for c in catalog_columns(task_type, "dev")
                if c["domain"] in domains and c["lang"] in langs and c["name"] in frame.columns]
    averages = frame[selected].apply(_mean_or_missing, axis=1).round(decimals=2)
    return {(r, k): None if math.isnan(a) else float(a)
            for r, k, a in zip(frame["retriever"], frame["reranker"], averages, strict=True)}


# --- the table equals the leaderboard's code ----------------------------------------------------------------------

@pytest.mark.parametrize("version", sorted(APP_DOMAINS))
@pytest.mark.parametrize("task_type", ["qa", "long-doc"])
def test_the_catalog_lists_the_datasets_in_the_apps_column_order(version: str, task_type: str) -> None:
    """Columns follow the catalog, so its order is the app's (24.05 QA: science_ru 36th, after arxiv_en); the
    Average sums the cells in that order, as the app's pandas mean does."""
    entries = json.loads(CATALOG.read_text(encoding="utf-8"))["datasets"]
    ours = [_safe(f"{e['domain']}_{e['language']}" + ("" if e["dataset"] == "default" else f"_{e['dataset']}"))
            for e in entries if e["version"] == version and e["task_type"] == task_type and "test" in e["splits"]]
    assert ours == [c["name"] for c in catalog_columns(task_type, "test", version)]
    if (version, task_type) == ("AIR-Bench_24.05", "qa"):
        assert ours.index("science_ru") == 35


@pytest.mark.slow
def test_the_table_equals_what_the_leaderboards_code_computes_from_the_files_the_command_wrote(runs: Runs) -> None:
    raw = load_raw(runs.out)
    assert len(raw) == 4  # one file per retriever/reranker, each with its own timestamp
    files = list((runs.out / "eval_results" / VERSION).glob("*/*/results_*.json"))
    assert len(files) == 4
    names = {(items[0]["config"]["retrieval_model"], items[0]["config"]["reranking_model"]) for items in raw}
    assert names == {(BM25, "NoReranker"), (BM25_WORDS, "NoReranker"), (MINILM, "NoReranker"), RERANKED}
    compared = 0
    for task_type, tab in runs.data["tabs"].items():
        assert set(tab["metrics"]) == set(LEADERBOARD_METRICS)
        assert [c["name"] for c in tab["columns"]] == [c["name"] for c in catalog_columns(task_type, "dev")
                                                      if c["name"] in {"news_en", "news_zh", "healthcare_en",
                                                                       "arxiv_en_llama2"}]
        for metric, table in tab["metrics"].items():
            frame = oracle_frame(raw, task_type, metric)
            expected = {(r["retriever"], r["reranker"]): r for r in frame.to_dict("records")}
            assert len(table["rows"]) == len(expected) == 4
            for row in table["rows"]:
                oracle = expected[(row["retriever"], row["reranker"])]
                assert row["average"] == oracle["average"], (task_type, metric, row["retriever"])
                assert row["rank"] == oracle["rank"]
                for column in tab["columns"]:
                    assert row["cells"][column["name"]]["shown"] == oracle[column["name"]]
                compared += 1
            averages = [row["average"] for row in table["rows"]]
            assert averages == sorted(averages, reverse=True)  # best first
    assert compared == 2 * 30 * 4
    # the re-ranked run differs from its first stage: it is a row of its own, not a copy
    qa = {(r["retriever"], r["reranker"]): r for r in runs.data["tabs"]["qa"]["metrics"]["ndcg_at_10"]["rows"]}
    assert qa[RERANKED]["cells"]["news_zh"]["value"] != qa[(MINILM, "NoReranker")]["cells"]["news_zh"]["value"]


@pytest.mark.slow
def test_markdown_and_csv_hold_the_same_table(runs: Runs) -> None:
    qa = runs.data["tabs"]["qa"]["metrics"]["ndcg_at_10"]["rows"]
    markdown = (runs.out / "leaderboard.md").read_text(encoding="utf-8")
    for row in qa:
        assert f"| {row['rank']} | {row['group']} | {row['retriever']} | {row['reranker']} | {row['average']:.2f} [" \
            in markdown
    frame = pd.read_csv(runs.out / "leaderboard.csv")
    averages = frame[(frame["tab"] == "qa") & (frame["metric"] == "ndcg_at_10") & (frame["column"] == "Average")]
    assert sorted(averages["value"]) == sorted(row["average"] for row in qa)
    assert len(frame) == sum(len(t["rows"]) * (1 + len(tab["columns"])) for tab in runs.data["tabs"].values()
                             for t in tab["metrics"].values())


@pytest.mark.slow
def test_a_filter_recomputes_the_average_as_the_leaderboard_does(runs: Runs) -> None:
    board = leaderboard(runs.results, split="dev", resampling=Resampling(n_resamples=RESAMPLES))
    raw = load_raw(runs.out)
    tab = board.tab("qa")
    frame = oracle_frame(raw, "qa", "ndcg_at_10")
    for domains, langs in (({"news"}, {"en", "zh"}), ({"healthcare", "news"}, {"zh"}), ({"news"}, {"en"}),
                           ({"law"}, {"en"}), (set(), set())):
        ours = tab.filtered_averages(sorted(domains), sorted(langs))
        assert ours == oracle_filtered(frame, "qa", domains, langs), (domains, langs)
    assert set(tab.filtered_averages(["law"], ["en"]).values()) == {None}  # nothing selected: the app's NaN


# --- the rules, on generated rows ---------------------------------------------------------------------------------

_cell = st.one_of(st.none(), st.floats(0, 100, allow_nan=False), st.integers(0, 10_000).map(lambda n: n / 100))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 20).flatmap(lambda n: st.lists(st.lists(_cell, min_size=n, max_size=n), min_size=1, max_size=8)))
@example([[0.125, 0.135, 0.0], [None, 1.0, 2.0]])  # a mean on a rounding tie, and a missing column
@example([[1.005] * 9, [2.675] * 8 + [None]])  # 9 columns: numpy's pairwise sum
def test_average_and_rank_equal_pandas(rows: list[list[float | None]]) -> None:
    frame = pd.DataFrame([[np.nan if v is None else v for v in row] for row in rows])
    expected = frame.apply(_mean_or_missing, axis=1).round(decimals=2)
    averages = [leaderboard_average(row) for row in rows]
    assert averages == list(expected)
    assert leaderboard_ranks(averages) == list(expected.rank(ascending=False, method="min").astype(int))


# --- what the leaderboard lacks: intervals, Judged@10, rank groups ------------------------------------------------

def _kept(results: Path, model: str, task: str, metric: str) -> tuple[list[str], np.ndarray]:
    """Per-query values read straight from the per-query file beside a result (not through the plugin's reader)."""
    (path,) = (results / "results" / model.replace("/", "__")).glob(f"*/{task}.per_query.json.gz")
    scores = json.loads(gzip.decompress(path.read_bytes()))["scores"]["dev"]["default"]
    order = np.argsort(scores["query_ids"])
    return sorted(scores["query_ids"]), np.asarray(scores["metrics"][metric], dtype=float)[order]


@pytest.mark.slow
def test_intervals_agree_with_scipys_bootstrap_of_the_per_query_files(runs: Runs) -> None:
    board = leaderboard(runs.results, split="dev", resampling=Resampling(n_resamples=9999))
    tab = board.tab("qa")
    row = next(r for r in tab.rows if r.retriever == MINILM)
    vectors = []
    for column in tab.columns:
        _, values = _kept(runs.results, MINILM, column.task, "ndcg_at_10")
        values = values * 100
        vectors.append(values)
        cell = row.cells[column.name]
        assert cell.value == pytest.approx(values.mean(), abs=5e-4)  # the results' score is the per-query mean
        expected = stats.bootstrap((values,), np.mean, method="BCa", n_resamples=9999,
                                   random_state=np.random.default_rng(1)).confidence_interval
        assert cell.interval.low == pytest.approx(expected.low, abs=1.0)
        assert cell.interval.high == pytest.approx(expected.high, abs=1.0)
        assert cell.interval.low < values.mean() < cell.interval.high
    expected = stats.bootstrap(vectors, lambda *v, axis=-1: np.mean([x.mean(axis=axis) for x in v], axis=0),
                               method="BCa", n_resamples=9999, random_state=np.random.default_rng(1),
                               vectorized=True).confidence_interval
    assert row.average_interval.low == pytest.approx(expected.low, abs=1.0)
    assert row.average_interval.high == pytest.approx(expected.high, abs=1.0)
    assert row.average_interval.high - row.average_interval.low < min(
        c.interval.high - c.interval.low for c in row.cells.values())  # three tasks' queries narrow it
    # Judged@10: the results' mean of the per-query shares
    _, judged = _kept(runs.results, MINILM, "AIR-Bench_24.05_qa_news_zh", "judged_at_10")
    assert row.cells["news_zh"].judged_at_10 == pytest.approx(judged.mean(), abs=1e-6)
    # a metric without per-query values gets no interval and no group
    assert all(cell.interval is None for r in board.tab("qa", "ndcg_at_1").rows for cell in r.cells.values())
    assert all(r.group is None for r in board.tab("qa", "ndcg_at_1").rows)


def _exact_sign_flip_p(per_task_a: list[np.ndarray], per_task_b: list[np.ndarray]) -> float:
    """p of the difference of two rows' Averages by enumerating every sign vector of the queries that differ."""
    weights = np.concatenate([np.full(a.size, 1 / (len(per_task_a) * a.size)) for a in per_task_a])
    d = (np.concatenate(per_task_a) - np.concatenate(per_task_b)) * weights
    d = d[d != 0]
    observed = abs(d.sum())
    count = sum(abs(np.dot(signs, d)) >= observed - 1e-9 for signs in itertools.product((1, -1), repeat=d.size))
    return count / 2**d.size


@pytest.mark.slow
def test_rank_groups_are_adjacent_sign_flip_tests_holm_adjusted(runs: Runs) -> None:
    board = leaderboard(runs.results, split="dev", resampling=Resampling(n_resamples=9999))
    tab = board.tab("qa")
    per_task = {(r.retriever, r.reranker): [
        _kept(runs.results, r.retriever if r.reranker == "NoReranker" else
              f"{r.retriever}__reranked-by__{r.reranker.replace('/', '__')}", c.task, "ndcg_at_10")[1] * 100
        for c in tab.columns] for r in tab.rows}
    keys = [(r.retriever, r.reranker) for r in tab.rows]
    p_values = [_exact_sign_flip_p(per_task[upper], per_task[lower]) for upper, lower in itertools.pairwise(keys)]
    m = len(p_values)
    order = np.argsort(p_values, kind="stable")
    holm = np.empty(m)
    running = 0.0
    for i, index in enumerate(order):  # Holm's step-down: max over the smaller p-values of (m - i) p
        running = max(running, (m - i) * p_values[index])
        holm[index] = min(1.0, running)
    assert [t.p_value for t in tab.tests] == pytest.approx(p_values)
    assert [t.p_adjusted for t in tab.tests] == pytest.approx(list(holm))
    groups = [1]
    for p in holm:
        groups.append(groups[-1] + (p < board.alpha))
    assert [r.group for r in tab.rows] == groups
    page = runs.data["tabs"]["qa"]["metrics"]["ndcg_at_10"]
    assert [r["group"] for r in page["rows"]] == [r.group for r in tab.rows]


def test_a_row_significantly_below_the_one_above_starts_a_group() -> None:
    top, tied, below = np.full(10, 90.0), np.full(10, 90.0), np.full(10, 10.0)
    groups, p_values, adjusted = rank_groups([[top], [tied], [below], [below.copy()]], 0.05, "holm", Resampling())
    assert groups == [1, 1, 2, 2]
    assert p_values == [1.0, 2 / 2**10, 1.0]  # exact: 2 of the 2^10 sign vectors reach |80|
    assert adjusted == [1.0, 3 * 2 / 2**10, 1.0]


# --- closed-book test split ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_closed_book_test_split_is_marked_and_never_a_number(tmp_path: Path, airbench_mirror: Path) -> None:
    import mteb

    mirror = closed_book_mirror(airbench_mirror, tmp_path / "mirror")
    results = tmp_path / "results"
    tasks = mteb.get_tasks(tasks=[NEWS_EN, "AIR-Bench_24.05_qa_healthcare_en"], eval_splits=["test"])
    with data_dir(mirror):
        for name in (BM25, BM25_WORDS):
            mteb.evaluate(mteb.get_model(name), tasks, cache=mteb.ResultCache(results),
                          prediction_folder=tmp_path / "predictions" / name.split("/")[1], show_progress_bar=False)
    out = tmp_path / "board"
    assert main(["leaderboard", "--results", str(results), "--split", "test", "--resamples", "99",
                 "--out", str(out)]) == 0
    data = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    qa = data["tabs"]["qa"]
    assert [c["name"] for c in qa["columns"]] == ["healthcare_en"]
    assert [c["name"] for c in qa["closed_book_columns"]] == ["news_en"]
    for row in qa["metrics"]["ndcg_at_10"]["rows"]:
        assert row["cells"]["news_en"] == {"value": None, "shown": None, "ci": None, "judged_at_10": None,
                                           "closed_book": True}
        assert row["average"] == row["cells"]["healthcare_en"]["shown"]  # the app never sees news_en
    assert "closed-book" in (out / "leaderboard.md").read_text(encoding="utf-8")
    assert any("news_en: closed-book" in note for note in data["notes"])
    raw = load_raw(out)
    assert {r["dataset"] + r["domain"] + r["lang"] for items in raw for item in items for r in item["results"]} \
        == {"defaulthealthcareen"}
    frame = oracle_frame(raw, "qa", "ndcg_at_10", split="test")
    assert sorted(frame["average"]) == sorted(r["average"] for r in qa["metrics"]["ndcg_at_10"]["rows"])


# --- errors and reruns --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_bad_input_is_one_line_naming_the_culprit(runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cases = [(["--benchmark", "MTEB(eng, v2)"], "is not one AIR-Bench version"),
             (["--benchmark", "NoSuchBenchmark"], "unknown benchmark"),
             (["--split", "test"], "no results of AIR-Bench_24.05 tasks on the test split"),
             (["--resamples", "5"], "5 resamples"),
             (["--benchmark", "AIR-Bench_24.04"], "AIR-Bench_24.04 has no dataset with a dev split")]
    for extra, message in cases:
        assert main(["leaderboard", "--results", str(runs.results), "--out", str(tmp_path / "x"), *extra]) == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1, error
    assert main(["leaderboard", "--results", str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2
    assert "no MTEB results folder" in capsys.readouterr().err
    with pytest.raises(OptionError, match="not one AIR-Bench version"):
        leaderboard(runs.results, benchmark="MTEB(eng, v2)")


@pytest.mark.slow
def test_a_rerun_replaces_the_result_files_it_wrote(runs: Runs, tmp_path: Path) -> None:
    out = tmp_path / "board"
    shutil.copytree(runs.out, out)
    before = sorted(p.name for p in out.rglob("results_*.json"))
    assert main(["leaderboard", "--results", str(runs.results), "--resamples", "99", "--out", str(out)]) == 0
    after = sorted(p.name for p in out.rglob("results_*.json"))
    assert len(after) == len(before) == 4 and len(load_raw(out)) == 4
    assert math.isfinite(json.loads((out / "leaderboard.json").read_text())["tabs"]["qa"]["metrics"]["ndcg_at_10"]
                         ["rows"][0]["average"])


# --- the page's arithmetic, in Node (where no browser is) ------------------------------------------------------------

PAGE = Path(__file__).parents[1] / "airbench_mteb" / "report" / "leaderboard" / "page.html"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the page's script")
def test_the_pages_average_and_rank_equal_the_apps_pandas(tmp_path: Path) -> None:
    """The page's leaderboardAverage and ranks (its own source, run by Node) against the app's rules in pandas: a
    row's mean in the app's column order, -1 for a missing cell, numpy's rounding, rank method "min"."""
    page = PAGE.read_text(encoding="utf-8")
    functions = page[page.index("function round2"):page.index("function fmt(")]
    rng = np.random.default_rng(1)
    rows = [[50.0, 50.01], [75.34, 75.35], [40.96, 40.97, 40.965], [1.005] * 9, [2.675] * 8 + [None]]
    for n in (*range(1, 20), 53, 64, 129):
        for _ in range(20):
            row = [float(v) for v in np.round(rng.uniform(0, 100, n), 2)]
            if rng.random() < 0.1:
                row[int(rng.integers(n))] = None
            rows.append(row)
    (tmp_path / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "check.js").write_text(functions + "const rows = JSON.parse(require('fs').readFileSync("
                                       f"{json.dumps(str(tmp_path / 'rows.json'))}, 'utf8'));\n"
                                       "const averages = rows.map(leaderboardAverage);\n"
                                       "console.log(JSON.stringify([averages, ranks(averages)]));\n",
                                       encoding="utf-8")
    done = subprocess.run(["node", str(tmp_path / "check.js")], capture_output=True, text=True, check=True)
    averages, ranks = json.loads(done.stdout)
    expected = [float(pd.DataFrame([[np.nan if v is None else v for v in row]]).apply(_mean_or_missing, axis=1)
                      .round(decimals=2).iloc[0]) for row in rows]
    assert averages == expected
    assert ranks == leaderboard_ranks(expected)


# --- the page, in headless Chromium -------------------------------------------------------------------------------

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")  # Debian's chromium, chromium-driver


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
        options.add_argument(argument)
    # both paths given, and offline: Selenium Manager never looks for (or downloads) a browser or driver
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")
        driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def _shown_averages(driver) -> dict[tuple[str, str], str]:
    from selenium.webdriver.common.by import By

    return {(tr.get_attribute("data-retriever"), tr.get_attribute("data-reranker")):
            tr.find_element(By.CSS_SELECTOR, "td.average .average-value").text
            for tr in driver.find_elements(By.CSS_SELECTOR, "#leaderboard tr[data-retriever]")}


def _text(average: float | None) -> str:
    return "–" if average is None else ("-1" if average == -1 else f"{average:.2f}")


@pytest.mark.slow
def test_the_page_filters_recompute_the_average_in_a_browser(runs: Runs, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = runs.out / "leaderboard.html"
    html = page.read_text(encoding="utf-8")
    assert "<link" not in html and " src=" not in html  # one self-contained file: nothing to fetch
    board = leaderboard(runs.results, split="dev", resampling=Resampling(n_resamples=RESAMPLES))
    browser.get(page.as_uri())
    browser.find_element(By.ID, "tab-qa").click()
    qa = board.tab("qa")
    assert _shown_averages(browser) == {(r.retriever, r.reranker): _text(r.average) for r in qa.rows}
    browser.find_element(By.CSS_SELECTOR, 'input[data-domain="healthcare"]').click()  # news only
    expected = qa.filtered_averages(["news"], ["en", "zh"])
    assert _shown_averages(browser) == {key: _text(average) for key, average in expected.items()}
    browser.find_element(By.CSS_SELECTOR, 'input[data-lang="zh"]').click()  # news, English only
    expected = qa.filtered_averages(["news"], ["en"])
    assert _shown_averages(browser) == {key: _text(average) for key, average in expected.items()}
    first = browser.find_element(By.CSS_SELECTOR, "#leaderboard tr[data-retriever]")
    best = max(a for a in expected.values() if a is not None)
    assert first.find_element(By.CSS_SELECTOR, "td.rank").text == "1"
    assert first.find_element(By.CSS_SELECTOR, "td.average .average-value").text == _text(best)
    # another tab and metric: the Python table's numbers
    browser.find_element(By.ID, "tab-long-doc").click()
    Select(browser.find_element(By.ID, "metric")).select_by_value("recall_at_100")
    long_doc = board.tab("long-doc", "recall_at_100")
    assert _shown_averages(browser) == {(r.retriever, r.reranker): _text(r.average) for r in long_doc.rows}
    assert browser.find_element(By.ID, "footer").text.count("mirror-") == len(board.fingerprints)
    # a click on a column's header sorts the rows by it, best first; a second click reverses
    browser.find_element(By.ID, "tab-qa").click()
    position = 5 + [c.name for c in qa.columns].index("news_zh")  # after rank, group, retriever, reranker, average
    for descending in (True, False):
        browser.find_element(By.CSS_SELECTOR, 'th[data-key="news_zh"]').click()
        shown = [float(tr.find_elements(By.TAG_NAME, "td")[position].text.split("\n")[0])
                 for tr in browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr[data-retriever]")]
        assert shown == sorted(shown, reverse=descending) and len(set(shown)) > 1, shown
    assert browser.get_screenshot_as_png()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_pages_average_and_rank_equal_pythons_on_generated_rows(browser, runs: Runs) -> None:
    browser.get((runs.out / "leaderboard.html").as_uri())
    rng = np.random.default_rng(0)
    rows = [[None] * 3, [1.005, 2.675, 0.125], [0.125, 0.135, 0.0], [12.345] * 9, []]
    for n in (*range(1, 20), 64, 129, 300):
        for _ in range(8):
            row = list(np.round(rng.uniform(0, 100, n), rng.choice([2, 3, 5])))
            if rng.random() < 0.2:
                row[int(rng.integers(n))] = None
            rows.append([None if v is None else float(v) for v in row])
    averages = browser.execute_script("return arguments[0].map(leaderboardAverage)", rows)
    assert averages == [leaderboard_average(row) for row in rows]
    assert browser.execute_script("return ranks(arguments[0])", averages) == leaderboard_ranks(averages)
