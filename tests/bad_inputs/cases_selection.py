"""Bad selections of `bias` and `export-beir` (sources, settings, splits, subsets), a relabelled rerun into
the same results folder, and an unreadable AIRBENCH_MTEB_NO_HOOK in mteb's own command line.

Every case stops before a model is searched with, except the relabelling, whose first run is BM25 on one
setting of NQ-UTD (800 documents).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

from tests.bad_inputs.framework import Case, Workspace
from tests.conftest import SAMPLE_DATA

BM25 = ["-m", "airbench-mteb/bm25"]
NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"
LLM_FILE = "llama-2-7b-chat-tmp0.2"


def _bias_sources(*options: str, sources: tuple[str, ...] = ("human", f"llm={LLM_FILE}")
                  ) -> Callable[[Workspace], list[str]]:
    return lambda ws: ["bias", *BM25, "--data-dir", str(NQ_UTD), "--sources", *sources, *options,
                       "--output-folder", str(ws.tmp / "results")]


def _bias_task(*options: str) -> Callable[[Workspace], list[str]]:
    return lambda ws: ["bias", *BM25, "-t", "CocktailNQUTD", "--data-dir", str(SAMPLE_DATA), *options,
                       "--output-folder", str(ws.tmp / "results")]


def _export(*options: str, task: str = "CocktailNQUTD") -> Callable[[Workspace], list[str]]:
    return lambda ws: ["export-beir", "-t", task, "--data-dir", str(SAMPLE_DATA), "--out", str(ws.tmp / "beir"),
                       *options]


def _relabelled_rerun(ws: Workspace) -> None:
    """`bias --sources a=human b=<llm>`, then the swapped labels into the same results folder."""
    import argparse

    from airbench_mteb.cli import main
    from airbench_mteb.commands import bias

    results = ws.tmp / "results"
    first = ["bias", *BM25, "--data-dir", str(NQ_UTD), "--settings", "a", "--name", "RelabelBias",
             "--output-folder", str(results), "--sources"]
    assert main([*first, "a=human", f"b={LLM_FILE}"]) == 0
    parser = argparse.ArgumentParser()
    bias.register(parser.add_subparsers())
    bias.bias(parser.parse_args([*first, "b=human", f"a={LLM_FILE}"]))


def _stock_mteb_without_hook(ws: Workspace) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "mteb", "run", *BM25, "-t", "CocktailNQUTD", "--output-folder",
                           str(ws.tmp / "results")], env={**os.environ, "AIRBENCH_MTEB_NO_HOOK": "maybe"}, cwd=ws.tmp,
                          capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stderr


def _one_line_and_exit_2(ws: Workspace, value: tuple[int, str]) -> None:
    code, stderr = value
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in stderr, stderr[-1500:]
    assert len(lines) == 1 and "AIRBENCH_MTEB_NO_HOOK='maybe'" in lines[0], stderr[-1500:]


CASES = [
    # bias --sources: the sources, settings and splits, before any data is read
    Case("cli-bias-one-source", argv=_bias_sources(sources=("human",)), error="at least two sources"),
    Case("cli-bias-same-source-twice", argv=_bias_sources(sources=("human", "human")),
         error="must be distinct"),
    Case("cli-bias-same-file-two-labels", argv=_bias_sources(sources=("human", "copy=human")),
         error="must be distinct"),
    Case("cli-bias-sources-setting-bogus", argv=_bias_sources("--settings", "bogus"), error="--settings bogus"),
    Case("cli-bias-sources-eval-split-bogus", argv=_bias_sources("--eval-splits", "bogus"),
         error="--eval-splits bogus"),
    Case("cli-bias-task-setting-bogus", argv=_bias_task("--settings", "bogus"), error="--settings bogus"),
    Case("cli-bias-task-eval-split-bogus", argv=_bias_task("--eval-splits", "bogus"), error="--eval-splits bogus"),
    Case("cli-bias-relabelled-rerun", call=_relabelled_rerun, error="computed on other data"),
    # export-beir: splits and subsets the task has
    Case("cli-export-beir-subset-bogus", argv=_export("--subsets", "bogus"), error="--subsets bogus"),
    Case("cli-export-beir-split-bogus", argv=_export("--splits", "bogus"), error="--splits bogus"),
    # mteb's own command line with an unreadable switch of the start-up hook: its one line, exit 2
    Case("cli-mteb-run-env-no-hook-maybe", call=_stock_mteb_without_hook, check=_one_line_and_exit_2,
         slow=True),
]
