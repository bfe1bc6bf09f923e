"""User errors on the command line (unknown names, bad options, bad settings): one line naming the culprit, exit
code 2, no traceback and no work done; in mteb's own command line too."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from airbench_mteb.cli import main
from airbench_mteb.settings import DATA_DIR_ENV, KEEP_TITLES_ENV, Settings, SettingsError, configure, settings_applied


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


# --- issue 18, finding 9 and item 7: settings, run options and mteb's own CLI, all in one line -------

def _one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines and "Traceback" not in stderr, stderr[-2000:]
    return lines[-1]


def _python(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter (the start-up hook and the package import run as a user's process does)."""
    return subprocess.run([sys.executable, *args], env={**os.environ, **env}, cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_data_dir_variable_naming_a_file_is_one_line_not_an_import_traceback(tmp_path: Path) -> None:
    a_file = tmp_path / "mirror.txt"
    a_file.write_text("not a folder")
    done = _python(["-m", "airbench_mteb.cli", "run", "-m", "airbench-mteb/bm25", "-t", "IRSCPartRetrieval",
                    "--output-folder", str(tmp_path / "results")], {DATA_DIR_ENV: str(a_file)}, tmp_path)
    assert done.returncode == 2
    line = _one_line_error(done.stderr)
    assert line.startswith("airbench-mteb run: ") and str(a_file) in line and DATA_DIR_ENV in line
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(("variable", "value", "task", "named"), [
    (DATA_DIR_ENV, "FILE", "IRSCPartRetrieval", DATA_DIR_ENV),
    (KEEP_TITLES_ENV, "maybe", "CocktailNFCorpus", "1, true, yes, on or 0, false, no, off"),
])
@pytest.mark.slow
def test_stock_mteb_run_with_a_bad_setting_fails_in_one_line_naming_it(variable: str, value: str, task: str,
                                                                      named: str, tmp_path: Path) -> None:
    a_file = tmp_path / "mirror.txt"
    a_file.write_text("not a folder")
    value = str(a_file) if value == "FILE" else value
    done = _python(["-m", "mteb", "run", "-m", "airbench-mteb/bm25", "-t", task, "--output-folder",
                    str(tmp_path / "results")], {variable: value}, tmp_path)
    assert done.returncode != 0
    line = _one_line_error(done.stderr)
    assert line.startswith("mteb: ") and variable in line and named in line
    assert "could not register" not in done.stderr  # the plugin itself stayed registered


@pytest.mark.slow
def test_the_hook_is_switched_off_only_by_a_yes(tmp_path: Path) -> None:
    probe = "import mteb; print(mteb.get_model_meta('airbench-mteb/bm25').name)"
    assert _python(["-c", probe], {"AIRBENCH_MTEB_NO_HOOK": "0"}, tmp_path).stdout.strip() == "airbench-mteb/bm25"
    unclear = _python(["-c", "import mteb"], {"AIRBENCH_MTEB_NO_HOOK": "maybe"}, tmp_path)
    assert "AIRBENCH_MTEB_NO_HOOK='maybe' is neither yes nor no" in unclear.stderr


@pytest.mark.parametrize(("option", "value"), [("--batch-size", "0"), ("--batch-size", "-5"),
                                               ("--rerank-top-k", "0"), ("--rerank-top-k", "-1")])
def test_run_count_options_below_one_are_one_line_before_a_model_loads(option: str, value: str, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import mteb

    monkeypatch.setattr(mteb, "get_model", lambda *a, **k: pytest.fail("a model was loaded"))
    argv = ["run", "-m", "airbench-mteb/bm25", "-t", "IRSCPartRetrieval", option, value,
            "--output-folder", str(tmp_path / "results")]
    if option == "--rerank-top-k":
        argv += ["--previous-results", str(tmp_path)]
    assert main(argv) == 2
    assert _one_line_error(capsys.readouterr().err) == f"airbench-mteb run: {option} must be at least 1, got {value}"


def test_keep_titles_that_is_neither_yes_nor_no_is_refused_naming_the_variable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEEP_TITLES_ENV, "maybe")
    assert main(["run", "-m", "airbench-mteb/bm25", "-t", "CocktailNFCorpus", "--output-folder", str(tmp_path)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert f"${KEEP_TITLES_ENV}='maybe' is neither yes nor no" in line


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("Yes", True), (" on ", True), ("TRUE", True),
                                                 ("0", False), ("no", False), ("Off", False), ("", False)])
def test_keep_titles_reads_the_yes_and_no_words(value: str, expected: bool) -> None:
    assert Settings.from_environment({KEEP_TITLES_ENV: value}).keep_titles is expected


@pytest.mark.parametrize("value", ["maybe", "2", "enabled", "y"])
def test_keep_titles_refuses_other_words(value: str) -> None:
    with pytest.raises(SettingsError, match=rf"\${KEEP_TITLES_ENV}='{value}' is neither yes nor no"):
        Settings.from_environment({KEEP_TITLES_ENV: value})


def test_a_cache_variable_naming_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("")
    with pytest.raises(SettingsError, match=r"\$AIRBENCH_MTEB_CACHE"):
        Settings.from_environment({"AIRBENCH_MTEB_CACHE": str(tmp_path / "cache")})


def test_a_script_may_give_paths_as_strings_and_gets_a_settings_error_for_anything_else(tmp_path: Path) -> None:
    with settings_applied(data_dir=str(tmp_path), cache_dir=str(tmp_path / "cache")) as settings:
        assert (settings.data_dir, settings.cache_dir) == (tmp_path, tmp_path / "cache")
    with pytest.raises(SettingsError, match=r"data_dir must be a path, got 3 \(\$AIRBENCH_MTEB_DATA_DIR\)"):
        configure(data_dir=3)


def test_data_dir_option_stands_in_for_a_stale_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "gone"))
    assert configure(data_dir=tmp_path).data_dir == tmp_path


@pytest.mark.parametrize(("argv", "named"), [
    (["bias", "-m", "airbench-mteb/bm25"], "give -t TASK"),
    (["bias", "-m", "airbench-mteb/bm25", "--sources", "human", "llm"], "--sources evaluates the folder"),
    (["bias", "-m", "airbench-mteb/bm25", "-t", "IRSCPartRetrieval"], "'IRSCPartRetrieval' is not a source-bias task"),
    (["bias", "-m", "airbench-mteb/bm25", "-t", "CocktailNFCorpus", "--batch-size", "0"], "--batch-size"),
    (["download", "--data-dir", "OUT", "--version", "AIR-Bench_99"], "no AIR-Bench dataset matches --version AIR-Bench_99"),
])
def test_command_misuse_is_one_line_with_exit_2_not_a_systemexit(argv: list[str], named: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "out") if arg == "OUT" else arg for arg in argv]
    assert main(argv) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith(f"airbench-mteb {argv[0]}: ") and named in line


@pytest.mark.parametrize(("argv", "named"), [
    (["bias", "-m", "airbench-mteb/bm25"], "give -t TASK"),
    (["bias", "-m", "airbench-mteb/bm25", "--sources", "human", "llm"], "--sources evaluates the folder"),
    (["report", "--plot", "table", "--out", "OUT"], "(--results)"),
    (["report", "--plot", "heatmap", "--out", "OUT"], "(--predictions)"),
    (["compare", "--predictions", "OUT", "--out", "OUT", "--depth", "1"], "--depth must be at least 2"),
    (["score-submission", "no-such.zip", "--output", "OUT"], "--output names the JSON file to write"),
    (["package-submission", "--predictions", "OUT", "--out", "FILE"], "(--out) is a file, not a folder"),
])
def test_a_missing_or_contradicting_option_is_an_option_error_in_one_line(
        argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from airbench_mteb.cli import build_parser
    from airbench_mteb.data.errors import OptionError

    (tmp_path / "out").mkdir()
    (tmp_path / "file").write_text("")
    paths = {"OUT": str(tmp_path / "out"), "FILE": str(tmp_path / "file")}
    argv = [paths.get(arg, arg) for arg in argv]
    args = build_parser().parse_args(argv)
    with pytest.raises(OptionError, match=re.escape(named)):  # not a data error nor a setting
        args.func(args)
    assert main(argv) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith(f"airbench-mteb {argv[0]}: ") and named in line


def _registered_commands(module: str) -> dict[str, str]:
    """The top-level commands one command module registers: name -> help."""
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(module).register(subparsers)
    return {action.dest: action.help or "" for action in subparsers._choices_actions}


def test_every_command_lives_in_the_module_named_after_it() -> None:
    from airbench_mteb.cli import COMMAND_MODULES

    for module in COMMAND_MODULES:
        for command, help_text in _registered_commands(module).items():
            # a deprecated alias lives with the command it stands for ("deprecated name of `generate irsc`")
            alias_of = re.match(r"deprecated name of `([^`]+)`", help_text)
            named = alias_of.group(1) if alias_of else command
            expected = re.sub(r"[- ]", "_", named)
            assert module.rsplit(".", 1)[1] == expected, f"`{command}` is registered by {module}, not by {expected}.py"



@pytest.mark.parametrize(("function", "arguments", "named"), [
    ("airbench_mteb.models.rerankers:check_top_k", {"top_k": 0}, "--rerank-top-k"),
    ("airbench_mteb.distributed.encode:check_options",
     {"num_workers": 1, "gpus_per_worker": -1, "batch_size": 1, "rows_per_block": 1}, "--gpus-per-worker"),
])
def test_library_checks_of_command_options_raise_option_errors(function: str, arguments: dict[str, int],
                                                                named: str) -> None:
    from airbench_mteb.data.errors import OptionError

    module, name = function.split(":")
    with pytest.raises(OptionError, match=re.escape(named)):
        getattr(importlib.import_module(module), name)(**arguments)


def test_sample_data_refuses_an_empty_out_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # issue 36: `--out ''` is Path(''), the current folder: 16 MB written where the user stood
    monkeypatch.chdir(tmp_path)
    assert main(["sample-data", "--out", ""]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("airbench-mteb sample-data: --out is empty") and "\n" not in err
    assert not any(tmp_path.iterdir())
