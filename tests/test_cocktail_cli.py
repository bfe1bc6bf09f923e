"""A user's own multi-source folder, the `bias` and `run` commands, and the bias plot (BM25 on real NQ-UTD)."""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path

import mteb
import pytest

import airbench_mteb  # noqa: F401  (registers tasks and models)
from airbench_mteb.commands import bias as bias_command
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.report import ReportRequest
from airbench_mteb.report.bias import bias_plot, collect_points
from airbench_mteb.results.reading import read_results
from airbench_mteb.tasks.cocktail import make_source_bias_task, parse_sources
from tests.conftest import SAMPLE_DATA

NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"
LLM_FILE = "llama-2-7b-chat-tmp0.2"


@pytest.fixture()
def three_sources(tmp_path: Path) -> Path:
    """NQ-UTD with a third corpus: a verbatim copy of the human one, named 'human-copy'."""
    folder = Path(shutil.copytree(NQ_UTD, tmp_path / "my-rewrites"))
    shutil.copy(folder / "corpus" / "human.jsonl", folder / "corpus" / "human-copy.jsonl")
    return folder


def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="airbench-mteb")
    bias_command.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_any_multi_source_folder_becomes_a_task(three_sources: Path) -> None:
    task = make_source_bias_task(three_sources, ["human", f"llm={LLM_FILE}", "human-copy"], name="MyRewritesBias",
                                 settings=["mixed"])
    assert task.metadata.hf_subsets == ["human", "llm", "human-copy", "mixed", "mixed-all-relevant"]
    assert task.hf_subsets == ["mixed"]
    model = mteb.get_model("airbench-mteb/bm25")
    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False).task_results[0]
    (row,) = result.scores["test"]
    bias = row["source_bias"]
    for k in (1, 3, 5, 10, 100):
        assert sum(bias[f"share_at_{k}_{source}"] for source in ("human", "llm", "human-copy")) == pytest.approx(1.0)
        assert {f"relative_delta_ndcg_at_{k}_llm", f"relative_delta_ndcg_at_{k}_human-copy"} <= set(bias)
    # identical copies tie; trec_eval's order (id descending) ranks "<id>-human-copy" above "<id>-human"
    assert bias["ndcg_at_1_human"] == 0.0 and bias["relative_delta_ndcg_at_1_human-copy"] == -200.0


def test_bad_sources_and_settings_are_rejected(three_sources: Path) -> None:
    with pytest.raises(ValueError, match="at least two sources"):
        parse_sources(["human"])
    with pytest.raises(ValueError, match="invalid source mixed=human"):
        parse_sources(["mixed=human", "llm"])
    with pytest.raises(OptionError, match=r"--settings both: not in BadSettings, whose choices are human, llm"):
        make_source_bias_task(three_sources, ["human", f"llm={LLM_FILE}"], name="BadSettings", settings=["both"])


def test_bias_command_on_a_registered_task_and_on_a_folder_then_the_plot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", "")  # restored after the command sets it
    out = tmp_path / "results"
    args = _cli(["bias", "-m", "airbench-mteb/bm25", "-t", "CocktailNQUTD", "--data-dir", str(SAMPLE_DATA),
                 "--settings", "human", "mixed", "--output-folder", str(out)])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "Δ1:llm" in printed and "share@1:human" in printed
    mixed_line = next(line for line in printed.splitlines() if line.split()[:3] == ["CocktailNQUTD", "test", "mixed"])
    saved = json.loads(next(out.rglob("CocktailNQUTD.json")).read_text(encoding="utf-8"))
    mixed = next(row for row in saved["scores"]["test"] if row["hf_subset"] == "mixed")
    assert f"{mixed['source_bias']['relative_delta_ndcg_at_1_llm']:+.1f}" in mixed_line.split()
    assert sorted(row["hf_subset"] for row in saved["scores"]["test"]) == ["human", "mixed"]

    folder = Path(shutil.copytree(NQ_UTD, tmp_path / "mine"))
    args = _cli(["bias", "-m", "airbench-mteb/bm25", "--data-dir", str(folder), "--sources", "human",
                 f"llm={LLM_FILE}", "--name", "MineBias", "--settings", "mixed", "--output-folder", str(out)])
    assert args.func(args) == 0
    assert next(out.rglob("MineBias.json"))

    plot_dir = tmp_path / "plots"
    png, table = bias_plot(ReportRequest(results=out, out=plot_dir))
    assert png == plot_dir / "bias.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert {(row["model"], row["task"]) for row in rows} == {("airbench-mteb/bm25", "CocktailNQUTD"),
                                                             ("airbench-mteb/bm25", "MineBias")}
    nq = next(row for row in rows if row["task"] == "CocktailNQUTD")
    assert float(nq["ndcg"]) == pytest.approx(100 * mixed["ndcg_at_1"])
    assert float(nq["relative_delta"]) == pytest.approx(mixed["source_bias"]["relative_delta_ndcg_at_1_llm"])
    assert float(nq["reference_share"]) == pytest.approx(mixed["source_bias"]["share_at_1_human"])
    with pytest.raises(DatasetError, match="no result of a source-bias task"):
        bias_plot(ReportRequest(results=out, out=plot_dir, models=("nobody/none",)))

    # a task mteb does not know here (evaluated elsewhere): its reference source must be named
    (mine,) = out.rglob("MineBias.json")
    elsewhere = json.loads(mine.read_text(encoding="utf-8")) | {"task_name": "ElsewhereBias"}
    (mine.parent / "ElsewhereBias.json").write_text(json.dumps(elsewhere), encoding="utf-8")
    with pytest.raises(OptionError, match=r"ElsewhereBias\.json: ElsewhereBias is not a source-bias task known here.*--reference"):
        collect_points(out, tasks=["ElsewhereBias"])
    (point,) = collect_points(out, models=["bm25"], tasks=["ElsewhereBias"], reference="human")
    (known,) = collect_points(out, tasks=["MineBias"])  # `bias --sources` registered it: its reference is declared
    assert (point.compared, point.relative_delta, point.reference_share) == \
        (known.compared, known.relative_delta, known.reference_share)
    with pytest.raises(DatasetError, match=r"ElsewhereBias\.json.*no relative_delta_ndcg_at_1_human score"):
        collect_points(out, tasks=["ElsewhereBias"], reference="llm")


def test_the_results_reader_selects_by_model_and_task_and_names_bad_files(tmp_path: Path) -> None:
    model = mteb.get_model("airbench-mteb/bm25")
    task = make_source_bias_task(NQ_UTD, ["human", f"llm={LLM_FILE}"], name="ReaderBias", settings=["mixed"])
    mteb.evaluate(model, task, cache=mteb.ResultCache(tmp_path), show_progress_bar=False)
    (path,) = tmp_path.rglob("ReaderBias.json")
    for root in (tmp_path, tmp_path / "results"):  # the cache root or its results/ folder
        (found,) = read_results(root, models=["bm25"], tasks=["ReaderBias"]).found
        assert (found.model, found.label, found.path, found.result.task_name) == \
            ("airbench-mteb/bm25", "airbench-mteb/bm25", path, "ReaderBias")
    assert read_results(tmp_path, models=["airbench-mteb/bm25"]).found == (found,)
    assert read_results(tmp_path, models=["all-MiniLM-L6-v2"]).found == ()
    assert read_results(tmp_path, tasks=["CocktailNQUTD"]).found == ()
    with pytest.raises(DatasetError, match="no MTEB results folder"):
        read_results(tmp_path / "nothing-here")
    path.with_name("BrokenBias.json").write_text(path.read_text(encoding="utf-8")[:200], encoding="utf-8")
    with pytest.raises(DatasetError, match=r"BrokenBias\.json.*malformed JSON"):
        read_results(tmp_path)


def test_relabelled_sources_into_the_same_folder_never_take_the_cached_results(tmp_path: Path) -> None:
    from airbench_mteb.cli import main

    out = tmp_path / "results"

    def run(*sources: str, overwrite: str = "only-missing") -> int:
        return main(["bias", "-m", "airbench-mteb/bm25", "--data-dir", str(NQ_UTD), "--sources", *sources,
                     "--settings", "a", "b", "--name", "RelabelBias", "--output-folder", str(out),
                     "--overwrite-strategy", overwrite])

    def ndcg_at_1() -> dict[str, float]:
        (found,) = read_results(out, tasks=["RelabelBias"]).found
        return {row["hf_subset"]: row["ndcg_at_1"] for row in found.result.scores["test"]}

    assert run("a=human", f"b={LLM_FILE}") == 0
    first = ndcg_at_1()
    assert first["a"] != first["b"]
    assert run("b=human", f"a={LLM_FILE}") == 2  # the same files under swapped labels: other data
    assert ndcg_at_1() == first
    assert run("b=human", f"a={LLM_FILE}", overwrite="always") == 0
    assert ndcg_at_1() == {"a": first["b"], "b": first["a"]}


def test_bias_command_needs_tasks_or_sources() -> None:
    from airbench_mteb.errors import UnknownNameError

    with pytest.raises(OptionError, match="give -t TASK"):
        bias_command.bias(_cli(["bias", "-m", "airbench-mteb/bm25"]))
    with pytest.raises(UnknownNameError, match="not a source-bias task"):
        bias_command.bias(_cli(["bias", "-m", "airbench-mteb/bm25", "-t", "NFCorpus"]))


def test_mteb_run_writes_per_setting_bias_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from airbench_mteb.cli import main

    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", "")
    assert main(["run", "-m", "airbench-mteb/bm25", "-t", "CocktailNQUTD", "--data-dir", str(SAMPLE_DATA),
                 "--output-folder", str(tmp_path)]) == 0
    written = next(tmp_path.rglob("CocktailNQUTD.json"))
    saved = json.loads(written.read_text(encoding="utf-8"))
    subsets = {row["hf_subset"]: row for row in saved["scores"]["test"]}
    # the run ends with one line for the task: each setting's main score with its interval, and the file
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    human = subsets["human"]
    assert summary.startswith("CocktailNQUTD: ndcg_at_1 ")
    assert (f"test/human {human['main_score']:.4f} [{human['ndcg_at_1_ci_low']:.4f}, {human['ndcg_at_1_ci_high']:.4f}]"
            in summary)
    assert summary.endswith(f" -> {written}")
    assert sorted(subsets) == ["human", "llm", "mixed", "mixed-all-relevant"]
    assert {"ndcg_at_1", "ndcg_at_5"} <= set(subsets["mixed"])
    assert {"ndcg_at_1_human", "ndcg_at_1_llm", "relative_delta_ndcg_at_1_llm"} <= set(subsets["mixed"]["source_bias"])


def test_the_bias_plot_is_registered() -> None:
    from airbench_mteb.report import PLOTS

    assert PLOTS["bias"] is bias_plot
