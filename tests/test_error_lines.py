"""The lines a user reads when a name or a folder is wrong: short, each suggestion quoted, the next step named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from airbench_mteb.cli import main
from airbench_mteb.names import did_you_mean
from airbench_mteb.settings import missing_folder_hint

SHORT = 170  # characters besides the names and the folder given: about two lines of a terminal


def _error(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*argv, "--output-folder", str(tmp_path / "results")]) == 2
    line = capsys.readouterr().err.strip()
    prose = re.sub(r"'[^']*'", "''", re.sub(re.escape(str(tmp_path)) + r"\S*", "", line))
    assert "\n" not in line and len(prose) <= SHORT, line
    return line


def test_a_misspelt_task_points_at_the_plugins_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(["run", "-m", "airbench-mteb/bm25", "-t", "CocktailNQUTDx"], tmp_path, capsys)
    assert line == ("airbench-mteb run: unknown task 'CocktailNQUTDx'; did you mean 'CocktailNQUTD'? "
                    "(`airbench-mteb tasks` lists the plugin's)")


def test_a_misspelt_benchmark_gets_its_suggestion_quoted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(["run", "-m", "airbench-mteb/bm25", "-b", "AIR-Bench_24.0"], tmp_path, capsys)
    assert line == ("airbench-mteb run: unknown benchmark 'AIR-Bench_24.0'; did you mean 'AIR-Bench_24.05'? "
                    "(`airbench-mteb available-benchmarks` lists them)")


def test_a_misspelt_model_gets_every_suggestion_quoted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(["run", "-m", "airbench-mteb/bm-25", "-t", "CocktailNQUTD"], tmp_path, capsys)
    assert line.startswith("airbench-mteb run: unknown model 'airbench-mteb/bm-25' (not in mteb's registry, not a "
                           "local folder, not from the hub: ")
    assert line.endswith("; did you mean 'airbench-mteb/bm25' or 'airbench-mteb/bm25-words'?")


def test_a_missing_data_dir_names_the_near_miss_and_sample_data(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sample-data").mkdir()
    line = _error(["run", "-m", "airbench-mteb/bm25", "-t", "CocktailNQUTD", "--data-dir",
                   str(tmp_path / "sample-dat")], tmp_path, capsys)
    assert line == (f"airbench-mteb run: the data directory {tmp_path / 'sample-dat'} is not a folder (--data-dir or "
                    f"$AIRBENCH_MTEB_DATA_DIR); did you mean 'sample-data'? `airbench-mteb sample-data "
                    "--out DIR` writes one")


def test_without_a_near_miss_the_hint_is_sample_data_alone(tmp_path: Path) -> None:
    assert missing_folder_hint(tmp_path / "mirror") == "; `airbench-mteb sample-data --out DIR` writes one"
    assert missing_folder_hint(tmp_path / "no" / "such" / "parent").startswith("; `airbench-mteb sample-data")


@pytest.mark.parametrize(("message", "shown"), [
    ("KeyError: 'CocktailNQx' not found. Did you mean: 'CocktailNQ'?", "; did you mean 'CocktailNQ'?"),
    ("'MTEB(eng, v)' not found. Did you mean: MTEB(eng, v2)?", "; did you mean 'MTEB(eng, v2)'?"),
    ("Model 'a/b' not found in MTEB registry. Did you mean: 'a/c' or a/d?", "; did you mean 'a/c' or 'a/d'?"),
    ("'x' not found and no similar keys were found.", ""),
])
def test_mtebs_suggestions_are_each_quoted(message: str, shown: str) -> None:
    assert did_you_mean(KeyError(message)) == shown


def test_a_task_only_bias_sources_made_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(["run", "-m", "airbench-mteb/bm25", "-t", "SourceBias_my-folder"], tmp_path, capsys)
    assert "made by `bias --sources` lives in that run" in line and "register-dataset" in line
