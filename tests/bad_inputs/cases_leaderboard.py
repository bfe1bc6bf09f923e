"""Bad inputs of `airbench-mteb leaderboard`: the results it reads, the per-query scores behind its intervals, its
options. The shared results are significance's (BM25 and BM25 with other parameters, one AIR-Bench task, dev
scored, test closed-book)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airbench_mteb.metrics.resampling import Resampling
from tests.bad_inputs.cases_significance import (
    _corrupt_kept,
    _dev_data_other,
    _edit_kept,
    _edit_result,
    _every_score_changed,
    _files,
    _mutated,
    _nan_main_score,
    _one_model_on_other_data,
    _query_missing_results_agreeing,
    _shared,
    _subset_renamed,
    _without_kept,
)
from tests.bad_inputs.framework import Case, Workspace, mutated_results


def _argv(root: Callable[[Workspace], Path], *options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["leaderboard", "--results", str(root(ws)), "--out", str(ws.tmp / "out"), "--resamples", "99",
                *options]
    return argv


def _malformed_result(root: Path) -> None:
    _files(root, ".json")[0].write_text('{"task_name": ', encoding="utf-8")


def _out_is_a_file(ws: Workspace) -> list[str]:
    (ws.tmp / "taken").write_text("x", encoding="utf-8")
    return ["leaderboard", "--results", str(_shared(ws)), "--out", str(ws.tmp / "taken"), "--resamples", "99"]


def _test_split(ws: Workspace) -> Any:
    from airbench_mteb.report.leaderboard import leaderboard

    return leaderboard(_shared(ws), split="test", resampling=Resampling(n_resamples=99))


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


def _dev_score(value: Any, key: str = "ndcg_at_10") -> Callable[[Path], None]:
    """The default BM25's dev ``key`` in its results file set to ``value`` (as an edit of the file would)."""
    def mutate(root: Path) -> None:
        _edit_result(_files(root, ".json")[0], lambda data: data["scores"]["dev"][0].update({key: value}))
    return mutate


def _digest_removed(root: Path) -> None:
    """A results file of a version that writes digests (it has judged_at_10, ndcg_at_10_tie_neutral), digest removed
    and a per-query value changed: nothing binds the edit but the digest's absence."""
    def change(data: dict) -> None:
        values = data["scores"]["dev"]["default"]["metrics"]["judged_at_10"]
        values[0], values[-1] = values[-1], values[0]
    _edit_kept(_files(root, ".per_query.json.gz")[0], change)
    _edit_result(_files(root, ".json")[0], lambda data: data["scores"]["dev"][0].pop("per_query_sha256"))


def _renamed(name: str) -> Callable[[Path], None]:
    """The tuned BM25's results (an experiment) as those of a model named ``name``."""
    def mutate(root: Path) -> None:
        meta = _files(root, ".json")[1].parent / "model_meta.json"
        data = json.loads(meta.read_text())
        meta.write_text(json.dumps({**data, "name": name, "experiment_kwargs": None}))
        _edit_kept(_files(root, ".per_query.json.gz")[1], lambda kept: kept.update(model_name=name))
    return mutate


def _hostile_name(name: str) -> Callable[[Workspace], list[str]]:
    """The leaderboard command over results whose tuned BM25 is named ``name``."""
    return _argv(_mutated(_renamed(name)))


def _check_name_is_data(name: str) -> Callable[[Workspace, Any], None]:
    """Both rows in the app's files, each inside ``eval_results/<version>/<retriever>/<reranker>/`` (as the app's
    loader walks them: one row per timestamp), ``name`` exactly as given; the Markdown table two rows of 7 cells,
    split at unescaped ``|``, no raw HTML."""
    def check(ws: Workspace, code: Any) -> None:
        assert code == 0, code
        out = ws.tmp / "out"
        version = (out / "eval_results" / "AIR-Bench_24.05").resolve()
        files = list((out / "eval_results").rglob("results_*.json"))
        assert all(path.resolve().parents[2] == version for path in files), files
        rows = {json.loads(path.read_text(encoding="utf-8"))[0]["config"]["timestamp"]:
                json.loads(path.read_text(encoding="utf-8"))[0]["config"]["retrieval_model"] for path in files}
        assert sorted(rows.values()) == sorted(["airbench-mteb/bm25", name]), rows
        table = [line for line in (out / "leaderboard.md").read_text(encoding="utf-8").splitlines()
                 if line.startswith("| ") and not line.startswith("| Rank")]
        assert len(table) == 2 and all(len(re.split(r"(?<!\\)\|", line)) == 8 for line in table), table
        assert "<img" not in "\n".join(table) and "<b>" not in "\n".join(table)
    return check


HOSTILE_NAMES = {"dots": "../../..", "slash-parts": "org/../../x", "html": '<img src=x onerror="alert(1)"><b>b</b>',
                 "pipe-newline": "a|b\nc", "long": "m" * 300, "cjk": "語" * 100, "empty-parts": "/", "dot": "."}


def _second_revision(root: Path) -> None:
    """BM25's results copied under a second revision ``<revision>__top10`` whose dev nDCG@10 differs (0.5): a run
    of another configuration, as a re-ranked run rerun at another depth leaves it."""
    results = _files(root, ".json")[0]
    copy = results.parent.with_name(results.parent.name + "__top10")
    shutil.copytree(results.parent, copy, ignore=shutil.ignore_patterns("experiments"))
    meta = copy / "model_meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "revision": copy.name}))

    def other_depth(data: dict) -> None:
        data["model_revision"] = copy.name
        metrics = data["scores"]["dev"]["default"]["metrics"]
        metrics["ndcg_at_10"] = [0.5] * len(metrics["ndcg_at_10"])
    _edit_kept(copy / results.name.replace(".json", ".per_query.json.gz"), other_depth)
    _edit_result(copy / results.name, lambda data: data["scores"]["dev"][0].update(ndcg_at_10=0.5, main_score=0.5))


def _two_revisions_board(ws: Workspace) -> Any:
    from airbench_mteb.report.leaderboard import leaderboard

    return leaderboard(mutated_results("significance_results", _second_revision)(ws), resampling=Resampling(n_resamples=99))


def _check_two_configurations(ws: Workspace, board: Any) -> None:
    """One row per revision, each with its own file's value; the default BM25 row's label says what differs."""
    rows = {row.retriever: row.cells["healthcare_en"].score for row in board.tab("qa").rows}
    original = json.loads(_files(ws.tmp / "results", ".json")[0].read_text())["scores"]["dev"][0]["ndcg_at_10"]
    bm25 = {name: score for name, score in rows.items() if name.startswith("airbench-mteb/bm25 [")}
    assert len(rows) == 3 and sorted(bm25.values()) == sorted([0.5, original]), rows
    assert sorted(bm25) == ["airbench-mteb/bm25 [2]", "airbench-mteb/bm25 [2__top10]"], rows


def _other_splits_board(ws: Workspace) -> Any:
    """Issue 43: the tuned BM25's mirror also held other files (the gated test qrels): its data revision differs,
    its dev split's data (corpus, dev queries and qrels) is the same."""
    from airbench_mteb.report.leaderboard import leaderboard

    return leaderboard(mutated_results("significance_results", _one_model_on_other_data)(ws), resampling=Resampling(n_resamples=99))


def _run(argv: list[str]) -> int:
    from airbench_mteb.cli import main

    return main(argv)


def _dev_board(ws: Workspace) -> Any:
    from airbench_mteb.report.leaderboard import leaderboard

    return leaderboard(_shared(ws), resampling=Resampling(n_resamples=99))


CASES = [
    Case("leaderboard-results-folder-missing", argv=_argv(lambda ws: ws.tmp / "nowhere"), error="nowhere"),
    Case("leaderboard-result-malformed", argv=_argv(_mutated(_malformed_result)), error="malformed JSON"),
    Case("leaderboard-older-results-without-kept-scores", argv=_argv(_mutated(_without_kept)),
         error="--overwrite-strategy always"),
    Case("leaderboard-kept-scores-corrupt", argv=_argv(_mutated(_corrupt_kept)), error=".per_query.json.gz"),
    # issue 50, finding 5: the same refusal as significance's (one rule, results.kept.read_kept_file)
    Case("leaderboard-results-subset-not-in-kept-scores", argv=_argv(_mutated(_subset_renamed)),
         error="no per-query scores of dev/renamed for airbench-mteb/bm25 (b=0.75, k1=1.2)"),
    Case("leaderboard-kept-scores-contradict-results", argv=_argv(_mutated(_every_score_changed)),
         error="ndcg_at_10"),
    Case("leaderboard-runs-on-different-data", argv=_argv(_mutated(_dev_data_other)), error="mirror-other-dev"),
    Case("leaderboard-runs-differing-only-in-splits-not-shown", call=_other_splits_board, check=_check_two_rows),
    Case("leaderboard-runs-scored-on-different-queries", argv=_argv(_mutated(_query_missing_results_agreeing)),
         error="scored for"),
    Case("leaderboard-nan-main-score-not-closed-book", argv=_argv(_mutated(_nan_main_score)),
         error="main_score is NaN"),
    # issue 43: every number read from a results file is checked, in one line naming file, task, split and key
    Case("leaderboard-result-nan", argv=_argv(_mutated(_dev_score(float("nan")))),
         error="dev/default: ndcg_at_10 is NaN and the split was not searched closed-book"),
    Case("leaderboard-result-infinity", argv=_argv(_mutated(_dev_score(float("inf")))), error="ndcg_at_10 is Infinity"),
    Case("leaderboard-result-above-one", argv=_argv(_mutated(_dev_score(1.7))), error="ndcg_at_10 is 1.7"),
    Case("leaderboard-result-negative", argv=_argv(_mutated(_dev_score(-0.2))), error="ndcg_at_10 is -0.2"),
    Case("leaderboard-result-a-string", argv=_argv(_mutated(_dev_score("0.5"))), error='ndcg_at_10 is "0.5"'),
    Case("leaderboard-result-null", argv=_argv(_mutated(_dev_score(None, "recall_at_10"))),
         error="recall_at_10 is null"),
    Case("leaderboard-digest-removed-from-a-digest-writer", argv=_argv(_mutated(_digest_removed)),
         error="has no per_query_sha256"),
    Case("leaderboard-reranker-named-noreranker",
         argv=_argv(_mutated(_renamed("airbench-mteb/bm25__reranked-by__NoReranker"))), error="'NoReranker'"),
    Case("leaderboard-reranker-named-nothing", argv=_argv(_mutated(_renamed("airbench-mteb/bm25__reranked-by__"))),
         error="names the reranker ''"),
    Case("leaderboard-two-revisions-are-two-rows", call=_two_revisions_board, check=_check_two_configurations),
    *(Case(f"leaderboard-model-name-{kind}", call=lambda ws, name=name: _run(_hostile_name(name)(ws)),
           check=_check_name_is_data(name)) for kind, name in HOSTILE_NAMES.items()),
    Case("leaderboard-unknown-benchmark", argv=_argv(_shared, "--benchmark", "NoSuchBench"), error="NoSuchBench"),
    Case("leaderboard-not-airbench", argv=_argv(_shared, "--benchmark", "MTEB(eng, v2)"), error="AIR-Bench version"),
    Case("leaderboard-split-unknown", argv=_argv(_shared, "--split", "train"), error="train"),
    Case("leaderboard-resamples-too-few", argv=_argv(_shared, "--resamples", "3"), error="3 resamples"),
    Case("leaderboard-alpha-outside", argv=_argv(_shared, "--alpha", "1.5"), error="alpha 1.5"),
    Case("leaderboard-out-is-a-file", argv=_out_is_a_file, error="taken"),
    Case("leaderboard-every-test-split-closed-book", call=_test_split, check=_check_closed_book),
    Case("leaderboard-two-experiments-of-one-model", call=_dev_board, check=_check_two_rows),
]
