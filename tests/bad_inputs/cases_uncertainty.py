"""Bad inputs of the SSCI/RCCI comparison with its uncertainty: `compare` options and settings, and the
comparison files the heatmap reads (old, truncated, malformed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tests.bad_inputs.framework import Case, Workspace, shared_data

TASK, SUBSET = "IRSCTitleRetrieval", "en"


@shared_data("uncertainty_comparison")
def _comparison(folder: Path) -> Path:
    """A comparison of three synthetic models (one pair close, one far) written by write_comparison."""
    from airbench_mteb.metrics.pairwise import compare_runs
    from airbench_mteb.metrics.resampling import Resampling
    from airbench_mteb.report.compare import Comparison, write_comparison

    rng = np.random.default_rng(0)
    qrels = {f"q{i}": {f"rel{i}": 1} for i in range(40)}
    first = {"close-a": rng.integers(0, 3, 40)}
    first["close-b"] = np.where(rng.random(40) < 0.1, rng.integers(0, 3, 40), first["close-a"])
    first["far"] = rng.integers(3, 12, 40)
    runs = {model: {f"q{i}": {**{f"d{i}_{r}": 1 - r / 20 for r in range(12)}, f"rel{i}": 1 - int(rank) / 20 + 0.001}
                    for i, rank in enumerate(ranks)} for model, ranks in first.items()}
    comparison = compare_runs(runs, qrels, depth=10, resampling=Resampling(n_resamples=999))
    write_comparison(Comparison("test", 10, {TASK: {SUBSET: comparison}}), folder)
    return folder


def _edited(change: Callable[[dict[str, Any]], None]) -> Callable[[Workspace], Path]:
    """A copy of the shared comparison.json under the case's folder, changed by ``change``."""
    def folder(ws: Workspace) -> Path:
        data = json.loads((ws.shared("uncertainty_comparison") / "comparison.json").read_text())
        change(data["comparisons"][TASK][SUBSET])
        (ws.tmp / "cmp").mkdir(exist_ok=True)
        (ws.tmp / "cmp" / "comparison.json").write_text(json.dumps(data))
        return ws.tmp / "cmp"
    return folder


def _heatmap(folder: Callable[[Workspace], Path]) -> Callable[[Workspace], Any]:
    def call(ws: Workspace) -> Any:
        from airbench_mteb.report import ReportRequest
        from airbench_mteb.report.irsc import ssci_heatmaps

        return ssci_heatmaps(ReportRequest(out=ws.tmp / "report", predictions=folder(ws)))
    return call


def _check_png(ws: Workspace, paths: Any) -> None:
    assert [path.name for path in paths] == [f"irsc_ssci_{SUBSET}.png"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _check_marks(ws: Workspace, _: Any) -> None:
    """The cells the heatmap marks are those whose Holm-adjusted RCCI p-value reaches 0.05, computed here again."""
    from airbench_mteb.report.compare import read_comparison

    comparison = read_comparison(ws.shared("uncertainty_comparison")).matrices[TASK][SUBSET]
    u = comparison.uncertainty
    pairs = list(zip(*np.triu_indices(3, k=1), strict=True))
    raw = np.array([u.rcci_p[i, j] for i, j in pairs])
    order = np.argsort(raw)
    holm = np.empty(3)
    holm[order] = np.minimum(1, np.maximum.accumulate((3 - np.arange(3)) * raw[order]))
    for (i, j), adjusted in zip(pairs, holm, strict=True):
        assert abs(u.rcci_p_adjusted[i, j] - adjusted) < 1e-6
        assert bool(u.rcci_significant()[i, j]) == (adjusted < 0.05)
    close = comparison.models.index("close-a"), comparison.models.index("close-b")
    assert not u.rcci_significant()[close] and u.rcci_significant()[close[0], comparison.models.index("far")]


def _without_uncertainty(data: dict[str, Any]) -> None:
    del data["uncertainty"]


def _truncated_uncertainty(data: dict[str, Any]) -> None:
    del data["uncertainty"]["rcci_p_adjusted"]


def _without_ssci(data: dict[str, Any]) -> None:
    del data["ssci"]


def _not_json(ws: Workspace) -> Path:
    (ws.tmp / "cmp").mkdir(exist_ok=True)
    (ws.tmp / "cmp" / "comparison.json").write_text('{"split": "test",\n "depth": 10,\n "comparisons": {,}}\n')
    return ws.tmp / "cmp"


def _compare(*options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["compare", "--predictions", str(ws.tmp / "predictions"), "--out", str(ws.tmp / "out"), *options]
    return argv


def _failed_report(ws: Workspace) -> tuple[int, bool]:
    """Issue 43: a report that fails before writing (no comparison to plot) into a new --out folder."""
    from airbench_mteb.cli import main

    out = ws.tmp / "new-report"
    return main(["report", "--plot", "heatmap", "--predictions", str(ws.tmp), "--out", str(out)]), out.exists()


def _check_no_folder(ws: Workspace, outcome: tuple[int, bool]) -> None:
    assert outcome == (2, False), f"exit {outcome[0]}, folder left behind: {outcome[1]}"


CASES = [
    Case("uncertainty-compare-depth-one", argv=_compare("--depth", "1"), error="--depth"),
    Case("uncertainty-compare-level-out-of-range", argv=_compare("--level", "1.5"), error="level 1.5"),
    Case("uncertainty-compare-too-few-resamples", argv=_compare("--resamples", "5"), error="5 resamples"),
    Case("uncertainty-heatmap-marks-the-cells-holm-leaves-unsignificant",
         call=_heatmap(lambda ws: ws.shared("uncertainty_comparison")), check=_check_marks),
    Case("uncertainty-heatmap-of-a-comparison-without-intervals", call=_heatmap(_edited(_without_uncertainty)),
         check=_check_png),
    Case("uncertainty-heatmap-truncated-uncertainty", call=_heatmap(_edited(_truncated_uncertainty)),
         error="rcci_p_adjusted"),
    Case("uncertainty-heatmap-comparison-without-ssci", call=_heatmap(_edited(_without_ssci)), error="'ssci'"),
    Case("uncertainty-heatmap-comparison-not-json", call=_heatmap(_not_json), error="comparison.json"),
    Case("uncertainty-report-heatmap-without-comparison",
         argv=lambda ws: ["report", "--plot", "heatmap", "--predictions", str(ws.tmp), "--out", str(ws.tmp / "r")],
         error="comparison.json"),
    Case("uncertainty-report-failing-before-writing-leaves-no-folder", call=_failed_report, check=_check_no_folder),
]
