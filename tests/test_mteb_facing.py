"""The plugin as an MTEB user meets it: `mteb run` and `airbench-mteb run` with BM25 and the bundled encoder, then the
results reader, a leaderboard submission and the leaderboard on their output.

These run in the suite against the installed mteb, and in the mteb-versions tier (tests/test_mteb_versions.py)
against each mteb version of the supported range; every number is pinned, so each version gives the same ones.
With $AIRBENCH_MTEB_NUMBERS set, the numbers are also written there (JSON), for the tier's summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mteb
import pytest
from mteb.cli.build_cli import build_cli

from airbench_mteb.cli import main
from airbench_mteb.results.reading import read_results
from airbench_mteb.submission import package_submission, score_submission
from tests.closed_book_run import ARXIV_LLAMA2, data_dir

BIN = Path(sys.executable).parent
BM25, MINILM = "airbench-mteb/bm25", "airbench-mteb/all-MiniLM-L6-v2"
NUMBERS_ENV = "AIRBENCH_MTEB_NUMBERS"

# `airbench-mteb run` for BM25 in a fresh process: whether torch came in with `import mteb` (it does in mteb 2.20)
# and whether it was there after the run
_PLUGIN_RUN = """
import sys
import mteb
from airbench_mteb.cli import main
with_mteb = "torch" in sys.modules
code = main(sys.argv[1:])
print(f"torch with import mteb: {with_mteb}; after the run: {'torch' in sys.modules}")
sys.exit(code)
"""


def _record(key: str, value: Any) -> None:
    """Add ``key: value`` to the numbers file the tier reads, when it asked for one."""
    path = os.environ.get(NUMBERS_ENV)
    if path:
        numbers = json.loads(Path(path).read_text(encoding="utf-8")) if Path(path).exists() else {}
        Path(path).write_text(json.dumps({**numbers, key: value}, indent=1), encoding="utf-8")


def _task_scores(output_folder: Path, task: str) -> dict[str, Any]:
    (path,) = output_folder.rglob(f"{task}.json")
    return json.loads(path.read_text(encoding="utf-8"))["scores"]


def _subset(scores: dict[str, Any], split: str, subset: str) -> dict[str, Any]:
    return next(entry for entry in scores[split] if entry["hf_subset"] == subset)


def test_the_mteb_under_test_is_the_one_imported() -> None:
    """In the tier, the mteb version it installed is first on the path (the rest of the environment unchanged)."""
    wanted = os.environ.get("AIRBENCH_MTEB_MTEB_UNDER_TEST")
    assert wanted in (None, mteb.__version__), f"mteb {mteb.__version__} from {mteb.__file__}, not {wanted}"
    _record("mteb", mteb.__version__)


@pytest.mark.slow
def test_bm25_by_both_commands_scores_the_same_and_the_plugins_run_imports_no_torch(tmp_path: Path) -> None:
    """Stock ``mteb run`` and ``airbench-mteb run`` (mteb's own run, torch left unimported by
    ``mteb_compat.torch_deferred``) write the same scores; the plugin's run adds no torch import."""
    from tests.conftest import SAMPLE_DATA

    env = {**os.environ, "AIRBENCH_MTEB_DATA_DIR": str(SAMPLE_DATA)}
    arguments = ["run", "-m", BM25, "-t", "CocktailNQUTD", "--output-folder"]
    stock = subprocess.run([str(BIN / "mteb"), *arguments, str(tmp_path / "mteb")], env=env, capture_output=True,
                           text=True, timeout=600)
    assert stock.returncode == 0, stock.stderr[-3000:]
    plugin = subprocess.run([sys.executable, "-c", _PLUGIN_RUN, *arguments, str(tmp_path / "plugin")], env=env,
                            capture_output=True, text=True, timeout=600)
    assert plugin.returncode == 0, plugin.stderr[-3000:]
    with_mteb, after = (part.rsplit(" ", 1)[-1] == "True" for part in plugin.stdout.splitlines()[-1].split(";"))
    assert after == with_mteb, "airbench-mteb run -m airbench-mteb/bm25 imported torch"
    scores = _task_scores(tmp_path / "plugin", "CocktailNQUTD")
    assert scores == _task_scores(tmp_path / "mteb", "CocktailNQUTD")
    mixed = _subset(scores, "test", "mixed")
    numbers = {"nDCG@1": mixed["ndcg_at_1"], "nDCG@10": mixed["ndcg_at_10"], "MRR@10": mixed["mrr_at_10"],
               "Relative delta@1": mixed["source_bias"]["relative_delta_ndcg_at_1_llm"]}
    assert mixed["main_score"] == mixed["ndcg_at_1"]
    assert numbers == {"nDCG@1": 0.75, "nDCG@10": 0.73725, "MRR@10": 0.881458, "Relative delta@1": 16.666667}
    _record("BM25 CocktailNQUTD test mixed", numbers)
    _record("torch imported by import mteb", with_mteb)


@pytest.mark.slow
def test_the_bundled_encoder_by_both_commands_then_reader_submission_and_leaderboard(airbench_mirror: Path,
                                                                                    tmp_path: Path) -> None:
    arguments = ["run", "-m", MINILM, "-t", ARXIV_LLAMA2, "--eval-splits", "dev"]
    with data_dir(airbench_mirror):
        stock = build_cli().parse_args([*arguments, "--output-folder", str(tmp_path / "mteb")])
        stock.func(stock)
        assert main([*arguments, "--output-folder", str(tmp_path / "results"),
                     "--prediction-folder", str(tmp_path / "predictions")]) == 0
        mteb.evaluate(mteb.get_model(BM25), mteb.get_tasks(tasks=[ARXIV_LLAMA2], eval_splits=["dev"]),
                      cache=mteb.ResultCache(tmp_path / "results"), show_progress_bar=False)
        package = package_submission(tmp_path / "predictions", tmp_path / "package", dev_only=True)
        (submitted,) = score_submission(package, dev_only=True)
    scores = _task_scores(tmp_path / "results" / "results" / "airbench-mteb__all-MiniLM-L6-v2", ARXIV_LLAMA2)
    assert scores == _task_scores(tmp_path / "mteb", ARXIV_LLAMA2)
    dev = _subset(scores, "dev", "default")

    found = {row.model: row for row in read_results(tmp_path / "results").found}
    assert set(found) == {BM25, MINILM}
    assert found[MINILM].result.get_score() == dev["main_score"]
    assert submitted.task_name == ARXIV_LLAMA2
    assert submitted.scores["recall_at_10"] == pytest.approx(dev["recall_at_10"], abs=1e-6)

    board = tmp_path / "board"
    assert main(["leaderboard", "--results", str(tmp_path / "results"), "--split", "dev", "--benchmark",
                 "AIR-Bench_24.05", "--resamples", "99", "--out", str(board)]) == 0
    tab = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))["tabs"]["long-doc"]
    averages = {row["retriever"]: row["average"] for row in tab["metrics"][tab["default_metric"]]["rows"]}
    numbers = {"nDCG@10": dev["ndcg_at_10"], "Recall@10": dev["recall_at_10"]}
    assert numbers == {"nDCG@10": 0.83847, "Recall@10": 0.91667}
    assert averages[MINILM] == round(100 * dev["recall_at_10"], 2)
    _record("MiniLM arxiv_en_llama2 dev", numbers)
    _record("leaderboard Recall@10 averages", averages)
