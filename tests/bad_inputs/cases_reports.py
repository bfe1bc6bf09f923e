"""Bad inputs of the reports (issue 43): numbers read back out of their definitions' ranges, names that would be
Markdown or HTML, commands that fail with an ``--out``/``--output-folder`` that did not exist or held a previous
output, and the AIR-Bench layout example written from the shipped data. The shared results are significance's."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bad_inputs.cases_leaderboard import HOSTILE_NAMES, _renamed
from tests.bad_inputs.cases_significance import BM25, TASK, _edit_result, _files, _mutated, _shared
from tests.bad_inputs.framework import Case, Workspace

# --- numbers read back: each key family held to the range its definition gives ---


def _row_edit(update: dict[str, Any]) -> Callable[[Path], None]:
    """The default BM25's dev score dict in its results file with ``update`` applied (as an edit of the file)."""
    def mutate(root: Path) -> None:
        _edit_result(_files(root, ".json")[0], lambda data: data["scores"]["dev"][0].update(update))
    return mutate


def _board(update: dict[str, Any]) -> Callable[[Workspace], list[str]]:
    return lambda ws: ["leaderboard", "--results", str(_mutated(_row_edit(update))(ws)), "--out", str(ws.tmp / "out"),
                       "--resamples", "99"]


def _written(ws: Workspace, _: Any) -> None:
    assert (ws.tmp / "out" / "leaderboard.json").is_file()


def _bias(**flat: Any) -> dict[str, Any]:
    return {"source_bias": flat}


RANGE_CASES = [
    # MTEB's nAUC is (AUC - flat) / (oracle - flat): at most 1, unbounded below, NaN where the oracle is flat
    Case("reader-nauc-above-one-is-mtebs-own", argv=_board({"nauc_precision_at_3_max": 3.0}), check=_written),
    Case("reader-nauc-a-string", argv=_board({"nauc_ndcg_at_10_std": "0.5"}), error="nauc_ndcg_at_10_std"),
    Case("reader-nauc-infinite", argv=_board({"nauc_map_at_10_diff1": -math.inf}), error="nauc_map_at_10_diff1"),
    Case("reader-nauc-nan-is-mteb-undefined", argv=_board({"nauc_ndcg_at_10_max": math.nan}), check=_written),
    Case("reader-nauc-below-minus-one-is-possible", argv=_board({"nauc_ndcg_at_10_max": -3.25}), check=_written),
    Case("reader-hit-rate-above-one", argv=_board({"hit_rate_at_10": 1.01}), error="hit_rate_at_10"),
    # Relative Δ = (a - b) / ((a + b) / 2) x 100 with a, b >= 0: [-200, 200], both ends reached
    Case("reader-relative-delta-above-200", argv=_board(_bias(relative_delta_ndcg_at_1_llm=200.5)),
         error="source_bias.relative_delta_ndcg_at_1_llm is 200.5"),
    Case("reader-relative-delta-extremes", argv=_board(_bias(relative_delta_ndcg_at_1_llm=-200.0,
                                                             relative_delta_map_at_1_llm=200)), check=_written),
    Case("reader-relative-delta-null", argv=_board(_bias(relative_delta_ndcg_at_1_llm_tie_neutral=None)),
         error="relative_delta_ndcg_at_1_llm_tie_neutral"),
    Case("reader-relative-delta-interval-bound-out", argv=_board(_bias(relative_delta_ndcg_at_1_llm_ci_high=250.0)),
         error="relative_delta_ndcg_at_1_llm_ci_high"),
    Case("reader-relative-delta-interval-undefined", argv=_board(_bias(relative_delta_ndcg_at_1_llm_ci_low=math.nan,
                                                                       relative_delta_ndcg_at_1_llm_p_value=math.nan)),
         check=_written),
    Case("reader-bias-p-value-above-one", argv=_board(_bias(relative_delta_ndcg_at_1_llm_p_value=1.5)),
         error="relative_delta_ndcg_at_1_llm_p_value"),
    Case("reader-delta-ndsr-out", argv=_board(_bias(delta_ndsr_at_5_llm=-1.5)), error="delta_ndsr_at_5_llm"),
    Case("reader-share-negative", argv=_board(_bias(share_at_1_human=-0.1)), error="share_at_1_human"),
    Case("reader-tie-count-fractional", argv=_board(_bias(tie_decided_queries_at_1=2.5)),
         error="tie_decided_queries_at_1"),
    # issue 50, finding 6: a count is a whole number however JSON spells it (80.0 was refused), 80.5 is not
    Case("reader-count-written-as-float", argv=_board(_bias(ndsr_queries=80.0, tie_checked_queries=1e1)),
         check=_written),
    Case("reader-count-fractional", argv=_board(_bias(ndsr_queries=80.5)),
         error="source_bias.ndsr_queries is 80.5, not a whole number"),
]

# --- names are data in every Markdown report ---

_UNESCAPE = re.compile(r"\\(.)|&lt;|&gt;|&amp;|&#x([0-9A-F]+);")


def _unescaped(cell: str) -> str:
    """A Markdown cell's text as a reader sees it: backslash escapes and the entities markdown_text writes undone
    (written here apart from the plugin, as the oracle)."""
    def one(match: re.Match[str]) -> str:
        if match[1] is not None:
            return match[1]
        if match[2] is not None:
            return chr(int(match[2], 16))
        return {"&lt;": "<", "&gt;": ">", "&amp;": "&"}[match[0]]
    return _UNESCAPE.sub(one, cell)


def table_cells(markdown: str, first: str) -> list[list[str]]:
    """The cells of the table rows of ``markdown`` that open with ``first``, split at unescaped ``|``."""
    rows = [line for line in markdown.splitlines() if line.startswith(f"| {first}")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def _significance_names(name: str) -> Callable[[Workspace], list[str]]:
    return lambda ws: ["significance", "--results", str(_mutated(_renamed(name))(ws)), "-m", BM25, name, "-t", TASK,
                       "--metrics", "ndcg_at_10", "--resamples", "99", "--out", str(ws.tmp / "out")]


def _check_significance_names(name: str) -> Callable[[Workspace, Any], None]:
    """The model table: two rows of 1 + 1 cells, the second model's cell reading back exactly ``b. <name>``; the CSV
    (quoted as csv writes it) reading back ``name`` in every row."""
    def check(ws: Workspace, _: Any) -> None:
        markdown = (ws.tmp / "out" / "significance.md").read_text(encoding="utf-8")
        rows = table_cells(markdown, "a. ") + table_cells(markdown, "b. ")
        assert [len(row) for row in rows] == [2, 2], rows
        assert _unescaped(rows[1][0]) == f"b. {name}", rows
        assert "<img" not in markdown and "<b>" not in markdown
        with (ws.tmp / "out" / "significance.csv").open(encoding="utf-8", newline="") as handle:
            assert {row["model_b"] for row in csv.DictReader(handle)} == {name}
    return check


NAME_CASES = [Case(f"significance-markdown-name-{key}", argv=_significance_names(name),
                   check=_check_significance_names(name))
              for key, name in HOSTILE_NAMES.items() if key in ("html", "pipe-newline", "cjk")]

# --- a command that fails leaves no new folder and no previous output changed ---


def _run(argv: list[str]) -> tuple[int, str]:
    from airbench_mteb.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return int(code or 0), err.getvalue()


def _fails_leaving_nothing(argv: Callable[[Workspace, Path], list[str]]) -> Callable[[Workspace], Any]:
    """Run the command with an output folder two levels below a folder that did not exist."""
    def call(ws: Workspace) -> Any:
        code, stderr = _run(argv(ws, ws.tmp / "new" / "out"))
        return code, stderr
    return call


def _nothing_left(ws: Workspace, value: Any) -> None:
    code, stderr = value
    last = [line for line in stderr.splitlines() if line.strip()][-1]  # progress bars may come before it
    assert code == 2 and last.startswith("airbench-mteb "), (code, stderr)
    assert not (ws.tmp / "new").exists(), sorted(p.as_posix() for p in (ws.tmp / "new").rglob("*"))


def _bias_argv(ws: Workspace, out: Path) -> list[str]:
    (ws.tmp / "empty-mirror").mkdir(exist_ok=True)  # the data is not there: the run fails after MTEB began
    return ["bias", "-m", BM25, "-t", "CocktailNQUTD", "--settings", "mixed", "--data-dir",
            str(ws.tmp / "empty-mirror"), "--output-folder", str(out)]


def _previous_output_kept(ws: Workspace) -> Any:
    """A significance run, then a rerun with other settings into the same folder whose last file is blocked."""
    out = ws.tmp / "out"
    argv = ["significance", "--results", str(_shared(ws)), "-m", BM25, "airbench-mteb/bm25 (b=0.75, k1=1.2)", "-t",
            TASK, "--metrics", "ndcg_at_10", "--resamples", "99", "--out", str(out)]
    assert _run(argv)[0] == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    (out / "significance.csv").unlink()
    (out / "significance.csv").mkdir()  # in the way of the last file
    code, stderr = _run([*argv[:-4], "--resamples", "199", "--out", str(out)])
    return code, stderr, before


def _check_previous_output_kept(ws: Workspace, value: Any) -> None:
    code, stderr, before = value
    assert code == 2 and "significance.csv" in stderr, stderr
    after = {path.name: path.read_bytes() for path in (ws.tmp / "out").iterdir() if path.is_file()}
    assert after == {name: text for name, text in before.items() if name != "significance.csv"}


FAILURE_CASES = [
    Case("significance-fails-leaving-no-folder", call=_fails_leaving_nothing(
        lambda ws, out: ["significance", "--results", str(_shared(ws)), "-m", BM25, "nosuch/model", "-t", TASK,
                         "--out", str(out)]), check=_nothing_left),
    Case("leaderboard-fails-leaving-no-folder", call=_fails_leaving_nothing(
        lambda ws, out: ["leaderboard", "--results", str(_mutated(_row_edit({"ndcg_at_10": 1.7}))(ws)), "--out",
                         str(out)]), check=_nothing_left),
    Case("compare-fails-leaving-no-folder", call=_fails_leaving_nothing(
        lambda ws, out: ["compare", "--predictions", str(ws.tmp / "nowhere"), str(ws.tmp / "nor-here"),
                         "--out", str(out)]), check=_nothing_left),
    Case("consistency-fails-leaving-no-folder", call=_fails_leaving_nothing(
        lambda ws, out: ["consistency", "--results", str(_shared(ws)), "-m", BM25, "nosuch/model", "--generated",
                         TASK, "--human", TASK, "--out", str(out)]), check=_nothing_left),
    Case("bias-fails-leaving-no-folder", call=_fails_leaving_nothing(_bias_argv), check=_nothing_left),
    Case("significance-failed-rerun-keeps-previous-output", call=_previous_output_kept,
         check=_check_previous_output_kept),
]

# --- the AIR-Bench layout example: real, different texts per dataset, judgments that hold ---


def _example_argv(ws: Workspace) -> list[str]:
    return ["sample-data", "--layout", "airbench", "--out", str(ws.tmp / "mirror")]


def _check_example(ws: Workspace, _: Any) -> None:
    """Every file of both datasets in the hub layout; each dataset's own texts; every judged document in its corpus;
    the NQ-UTD queries, real questions of the shipped file, split between dev and test without overlap."""
    root = ws.tmp / "mirror" / "AIR-Bench"

    def rows(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    texts = {}
    for name in ("qa_healthcare_en", "qa_news_en"):
        corpus = {row["id"]: row["text"] for row in rows(root / name / "AIR-Bench_24.05" / "corpus_default.jsonl")}
        texts[name] = set(corpus.values())
        queries = {split: {row["id"] for row in rows(root / name / "AIR-Bench_24.05" / f"queries_default_{split}.jsonl")}
                   for split in ("dev", "test")}
        assert all(queries.values()) and not queries["dev"] & queries["test"], queries
        for split in ("dev", "test"):
            qrels_repo = f"qrels-{name}-dev" if split == "dev" else f"qrels-{name}"
            judged = rows(root / qrels_repo / "AIR-Bench_24.05" / f"qrels_default_{split}.jsonl")
            assert {row["qid"] for row in judged} == queries[split]
            assert {row["docid"] for row in judged} <= set(corpus)
            assert any(row["relevance"] > 0 for row in judged)
    assert not texts["qa_healthcare_en"] & texts["qa_news_en"]


EXAMPLE_CASES = [
    Case("sample-data-airbench-layout-example", argv=_example_argv, check=_check_example),
    Case("sample-data-unknown-layout", argv=lambda ws: ["sample-data", "--layout", "beir", "--out", str(ws.tmp / "m")],
         error="beir"),
]

CASES = [*RANGE_CASES, *NAME_CASES, *FAILURE_CASES, *EXAMPLE_CASES]
