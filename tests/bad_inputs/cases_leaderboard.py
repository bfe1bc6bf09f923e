"""Bad inputs of `airbench-mteb leaderboard`: the results it reads, the per-query scores behind its intervals, its
options. The shared results are significance's (BM25 and BM25 with other parameters, one AIR-Bench task, dev
scored, test closed-book)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bad_inputs.cases_significance import (
    _corrupt_kept,
    _every_score_changed,
    _files,
    _mutated,
    _nan_main_score,
    _one_model_on_other_data,
    _query_missing_results_agreeing,
    _shared,
    _without_kept,
)
from tests.bad_inputs.framework import Case, Workspace


def _argv(root: Callable[[Workspace], Path], *options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["leaderboard", "--results", str(root(ws)), "--out", str(ws.tmp / "out"), "--n-resamples", "99",
                *options]
    return argv


def _malformed_result(root: Path) -> None:
    _files(root, ".json")[0].write_text('{"task_name": ', encoding="utf-8")


def _out_is_a_file(ws: Workspace) -> list[str]:
    (ws.tmp / "taken").write_text("x", encoding="utf-8")
    return ["leaderboard", "--results", str(_shared(ws)), "--out", str(ws.tmp / "taken"), "--n-resamples", "99"]


def _test_split(ws: Workspace) -> Any:
    from airbench_mteb.report.leaderboard import leaderboard

    return leaderboard(_shared(ws), split="test", n_resamples=99)


def _check_closed_book(ws: Workspace, board: Any) -> None:
    tab = board.tab("qa")
    assert not tab.columns and [c.name for c in tab.closed_book] == ["healthcare_en"], tab
    assert all(row.cells["healthcare_en"].closed_book and row.cells["healthcare_en"].value is None
               and row.average is None and row.rank is None for row in tab.rows), tab.rows
    assert len(tab.rows) == 2


def _check_two_rows(ws: Workspace, board: Any) -> None:
    rows = board.tab("qa").rows
    results = {json.loads(path.read_text())["scores"]["dev"][0]["ndcg_at_10"] for path in _files(_shared(ws), ".json")}
    assert {row.retriever for row in rows} == {"airbench-mteb/bm25", "airbench-mteb/bm25 (b=0.75, k1=1.2)"}
    assert {row.cells["healthcare_en"].score for row in rows} == results


def _dev_board(ws: Workspace) -> Any:
    from airbench_mteb.report.leaderboard import leaderboard

    return leaderboard(_shared(ws), n_resamples=99)


CASES = [
    Case("leaderboard-results-folder-missing", argv=_argv(lambda ws: ws.tmp / "nowhere"), error="nowhere"),
    Case("leaderboard-result-malformed", argv=_argv(_mutated(_malformed_result)), error="malformed JSON"),
    Case("leaderboard-older-results-without-kept-scores", argv=_argv(_mutated(_without_kept)),
         error="--overwrite-strategy always"),
    Case("leaderboard-kept-scores-corrupt", argv=_argv(_mutated(_corrupt_kept)), error=".per_query.json.gz"),
    Case("leaderboard-kept-scores-contradict-results", argv=_argv(_mutated(_every_score_changed)),
         error="ndcg_at_10"),
    Case("leaderboard-runs-on-different-data", argv=_argv(_mutated(_one_model_on_other_data)), error="mirror-other"),
    Case("leaderboard-runs-scored-on-different-queries", argv=_argv(_mutated(_query_missing_results_agreeing)),
         error="scored for"),
    Case("leaderboard-nan-main-score-not-closed-book", argv=_argv(_mutated(_nan_main_score)), error="no main score"),
    Case("leaderboard-unknown-benchmark", argv=_argv(_shared, "--benchmark", "NoSuchBench"), error="NoSuchBench"),
    Case("leaderboard-not-airbench", argv=_argv(_shared, "--benchmark", "MTEB(eng, v2)"), error="AIR-Bench version"),
    Case("leaderboard-split-unknown", argv=_argv(_shared, "--split", "train"), error="train"),
    Case("leaderboard-resamples-too-few", argv=_argv(_shared, "--n-resamples", "3"), error="3 resamples"),
    Case("leaderboard-alpha-outside", argv=_argv(_shared, "--alpha", "1.5"), error="alpha 1.5"),
    Case("leaderboard-out-is-a-file", argv=_out_is_a_file, error="taken"),
    Case("leaderboard-every-test-split-closed-book", call=_test_split, check=_check_closed_book),
    Case("leaderboard-two-experiments-of-one-model", call=_dev_board, check=_check_two_rows),
]
