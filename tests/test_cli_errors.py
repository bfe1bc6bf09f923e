"""Unknown names on the command line: one line naming the culprit, exit code 2, no traceback and no work done."""

from __future__ import annotations

from pathlib import Path

import pytest

from airbench_mteb.cli import main


@pytest.mark.parametrize(("argv", "named"), [
    (["run", "-m", "airbench-mteb/bm25", "-t", "IRSCQueryRetrieval", "NoSuchTask"], "unknown task 'NoSuchTask'"),
    (["run", "-m", "airbench-mteb/bm25", "-b", "NoSuchBenchmark"], "unknown benchmark 'NoSuchBenchmark'"),
    (["run", "-m", "no-org/no-such-model", "-t", "IRSCQueryRetrieval"], "unknown model 'no-org/no-such-model'"),
])
def test_unknown_names_are_one_line(argv: list[str], named: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*argv, "--output-folder", str(tmp_path / "results")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("airbench-mteb run: ") and named in err
    assert "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "results").exists()


def test_close_model_name_gets_mtebs_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-m", "airbench-mteb/bm-25", "-t", "IRSCQueryRetrieval", "--output-folder", str(tmp_path)]) == 2
    assert "airbench-mteb/bm25" in capsys.readouterr().err


def test_folder_without_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    assert main(["run", "-m", str(folder), "-t", "IRSCQueryRetrieval", "--output-folder", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert str(folder) in err and "not a model folder" in err and "\n" not in err


@pytest.mark.parametrize("argv", [
    ["export-beir", "-t", "NoSuchTask", "--out", "OUT"],
    ["stats", "-t", "NoSuchTask"],
    ["bias", "-m", "airbench-mteb/bm25", "-t", "NoSuchTask"],
])
def test_every_command_taking_task_names_checks_them(argv: list[str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "out") if arg == "OUT" else arg for arg in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"airbench-mteb {argv[0]}: unknown task 'NoSuchTask'") and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_a_data_dir_that_is_not_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-mirror"
    assert main(["run", "-m", "airbench-mteb/bm25", "-t", "IRSCPartRetrieval", "--data-dir", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("airbench-mteb run: ") and str(missing) in err and "\n" not in err
