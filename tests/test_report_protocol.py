"""Issue 44: every report carries its resampling record and renders itself; one writer writes any report's files,
all or none; every statistics command takes the same resampling flags and refuses a bad one the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from airbench_mteb.cli import build_parser, main
from airbench_mteb.metrics.pairwise import compare_runs
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.report.by_attribute import AttributeReport, GroupScore
from airbench_mteb.report.compare import Comparison
from airbench_mteb.report.consistency import GENERATED, HUMAN, ConsistencyReport, MetricConsistency, ModelScore
from airbench_mteb.report.leaderboard.board import Leaderboard
from airbench_mteb.report.leaderboard.table import Cell, Column, Row, Tab
from airbench_mteb.report.protocol import Report, json_text, renderings, write_report_files
from airbench_mteb.report.significance import Comparison as Paired
from airbench_mteb.report.significance import SignificanceReport
from airbench_mteb.results.panel import QuerySet

RESAMPLING = Resampling(n_resamples=199, seed=3, level=0.9)
BIN = Path(sys.executable).parent
# The statistics commands, each with its required arguments (none read before the flags are checked).
COMMANDS = {
    "significance": ["--results", "absent", "-m", "a", "b", "-t", "T", "--out", "out"],
    "leaderboard": ["--results", "absent", "--out", "out"],
    "consistency": ["--results", "absent", "-m", "a", "b", "c", "--generated", "G", "--human", "H", "--out", "out"],
    "compare": ["--predictions", "absent", "--out", "out"],
    "report": ["--plot", "by-attribute", "--results", "absent", "--tasks", "T", "--out", "out"],
}


def _significance() -> SignificanceReport:
    paired = Paired("T", "dev", "default", "ndcg_at_10", "a", "b", n_queries=3, mean_a=0.5, mean_b=0.4,
                    difference=0.1, ci_low=0.0, ci_high=0.2, p_value=0.5, p_adjusted=0.5, t_test_p_value=0.5,
                    effect_size=0.3, wins=1, ties=1, losses=1, exact=True, ci_method="BCa")
    return SignificanceReport(("a", "b"), (paired,), "bonferroni", RESAMPLING, 0.01)


def _leaderboard() -> Leaderboard:
    column = Column("news_en", "T", "news", "en", "default")
    row = Row("a", "NoReranker", {column.name: Cell(0.5)}, 50.0, 1)
    return Leaderboard("AIR-Bench_24.05", "dev", {"qa": {"ndcg_at_10": Tab("qa", "ndcg_at_10", (column,), (row,))}},
                       "test", {}, RESAMPLING, "bonferroni", 0.01)


def _consistency() -> ConsistencyReport:
    scores = {name: tuple(ModelScore(m, 0.5, None, None) for m in "abc") for name in (GENERATED, HUMAN)}
    metric = MetricConsistency("ndcg_at_10", {GENERATED: "ndcg_at_10", HUMAN: "ndcg_at_10"}, scores,
                               {GENERATED: 3, HUMAN: 3}, ())
    return ConsistencyReport(QuerySet("G"), QuerySet("H"), None, ("a", "b", "c"), (metric,), RESAMPLING, 30, 2)


def _comparison() -> Comparison:
    qrels = {f"q{i}": {"d1": 1} for i in range(4)}
    runs = {"a": {q: {"d1": 2.0, "d2": 1.0} for q in qrels}, "b": {q: {"d2": 2.0, "d1": 1.0} for q in qrels}}
    return Comparison("test", 2, {"T": {"default": compare_runs(runs, qrels, 2, RESAMPLING, "bonferroni", 0.01)}},
                      (), RESAMPLING, "bonferroni", 0.01)


def _by_attribute() -> AttributeReport:
    groups = (GroupScore("a", "length", "short", 3, 0.5, 0.4, 0.6, "BCa"),)
    return AttributeReport(QuerySet("G"), "ndcg_at_10", ("a",), groups, RESAMPLING, 0)


# Each report and where its JSON keeps the resampling record.
REPORTS: dict[str, tuple[Callable[[], Any], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "significance": (_significance, lambda data: data),
    "leaderboard": (_leaderboard, lambda data: data["resampling"]),
    "consistency": (_consistency, lambda data: data["bootstrap"]),
    "compare": (_comparison, lambda data: data["comparisons"]["T"]["default"]["uncertainty"]),
    "by-attribute": (_by_attribute, lambda data: data["resampling"]),
}


@pytest.mark.parametrize("name", REPORTS)
def test_every_report_renders_itself_with_its_record(name: str) -> None:
    make, record_of = REPORTS[name]
    report = make()
    assert isinstance(report, Report) and report.resampling == RESAMPLING
    data = report.to_json()
    assert json.loads(json_text(data)) == data  # strict JSON, read back the same
    record = record_of(data)
    assert (record["n_resamples"], record["seed"], record["level"]) == (199, 3, 0.9)
    if name in ("significance", "leaderboard", "compare"):  # the reports that adjust p-values record how
        assert "bonferroni" in json.dumps(data)
    assert isinstance(report.to_markdown(), str)


def test_renderers_read_the_record() -> None:
    """The leaderboard's legend states the record's choices, not the defaults it once hard-coded."""
    markdown = _leaderboard().to_markdown()
    assert "a 90 % bootstrap confidence interval (BCa, 199 resamples, seed 3)" in markdown
    assert "p-values Bonferroni-adjusted" in markdown and "alpha 0.01" in markdown
    assert "Bonferroni-adjusted over the 1 model pairs, p ≥ 0.01" in _comparison().to_markdown()


def test_the_writer_writes_every_rendering(tmp_path: Path) -> None:
    report = _significance()
    paths = write_report_files(report, tmp_path / "out", "report", {"extra/one.txt": "x"})
    assert [p.name for p in paths] == ["report.json", "report.md", "report.tex", "report.csv", "one.txt"]
    texts = renderings(report, "report")
    assert all((tmp_path / "out" / name).read_text() == text for name, text in texts.items())


def test_a_failing_rendering_leaves_no_folder(tmp_path: Path) -> None:
    def broken(handle: Any) -> None:
        raise RuntimeError("plot failed")

    with pytest.raises(RuntimeError, match="plot failed"):
        write_report_files(_significance(), tmp_path / "out", "report", {"plot.png": broken})
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_statistics_command_takes_the_same_flags(command: str) -> None:
    args = build_parser().parse_args([command, *COMMANDS[command], "--resamples", "99", "--seed", "4",
                                      "--level", "0.9"])
    assert (args.resamples, args.seed, args.level) == (99, 4, 0.9)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_resamples_is_refused_in_one_line(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, *COMMANDS[command], "--resamples", "5"]) == 2
    assert capsys.readouterr().err == f"airbench-mteb {command}: 5 resamples: give a whole number from 99 to 1,000,000\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_level_is_refused_by_the_console_script(command: str, tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "airbench-mteb"), command, *COMMANDS[command], "--level", "1.5"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=dict(os.environ))
    assert done.returncode == 2
    assert done.stderr == f"airbench-mteb {command}: level 1.5 is not between 0 and 1\n"
    assert not list(tmp_path.iterdir())  # refused before anything is read or written


def test_by_attribute_writes_an_undefined_number_as_null(tmp_path: Path) -> None:
    from airbench_mteb.report.by_attribute import write_by_attribute

    nan = float("nan")
    groups = (GroupScore("a", "length", "short", 3, 0.5, nan, nan, "BCa"),)
    paths = write_by_attribute([AttributeReport(QuerySet("G"), "ndcg_at_10", ("a",), groups, RESAMPLING, 0)], tmp_path)
    text = paths[0].read_text()
    group = json.loads(text, parse_constant=pytest.fail)[0]["groups"][0]  # strict JSON: no NaN
    assert (group["ci_low"], group["ci_high"], group["mean"]) == (None, None, 0.5)


def test_a_report_holding_a_nan_is_refused_and_nothing_written(tmp_path: Path) -> None:
    class Broken:
        resampling = RESAMPLING

        def to_json(self) -> dict[str, Any]:
            return {"score": float("nan")}

        def to_markdown(self) -> str:
            return "x"

    with pytest.raises(ValueError, match="JSON compliant"):
        write_report_files(Broken(), tmp_path / "out", "report")
    assert not (tmp_path / "out").exists()


def test_the_report_layer_writes_files_only_through_the_writer() -> None:
    """protocol.write_files is the one writer of reports, plots and the leaderboard; figures.py the one savefig."""
    import airbench_mteb.report as report

    writers = ("atomic_write", "all_or_none", "atomic_folder", "atomic_path", "json.dump(", ".write_text(", "open(",
               "savefig", 'use("Agg")')
    owners = {"protocol.py": ("atomic_write", "all_or_none", "atomic_folder"), "figures.py": ("savefig", 'use("Agg")')}
    found = [f"{path.name}: {writer}" for path in Path(report.__file__).parent.rglob("*.py")
             for writer in writers if writer in path.read_text() and writer not in owners.get(path.name, ())]
    assert not found, found
