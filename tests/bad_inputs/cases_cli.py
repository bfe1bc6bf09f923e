"""Bad inputs of `run` and mteb's own `mteb run`, of the settings variables and of the JSON-lines readers' types.

Every case stops before a model is loaded or data are searched: an option or a variable is checked
first, and the readers' cases read a file of two lines written into the case's folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bad_inputs.framework import Case, Workspace

BM25 = ["-m", "airbench-mteb/bm25"]
A_FILE = str(Path(__file__))  # any regular file: where a folder is due
DATA_DIR_ENV = "AIRBENCH_MTEB_DATA_DIR"
KEEP_TITLES_ENV = "AIRBENCH_MTEB_KEEP_TITLES"
ONE_LINE_KEEP_TITLES = "AIRBENCH_MTEB_KEEP_TITLES='maybe' is neither yes nor no"


def _run(*options: str, task: str = "IRSCPartRetrieval") -> Callable[[Workspace], list[str]]:
    return lambda ws: ["run", *BM25, "-t", task, *options, "--output-folder", str(ws.tmp / "results")]


def _settings(attribute: str) -> Callable[[Workspace], Any]:
    def read(ws: Workspace) -> Any:
        from airbench_mteb.settings import current_settings

        return getattr(current_settings(), attribute)
    return read


def _is(expected: Any) -> Callable[[Workspace, Any], None]:
    def check(ws: Workspace, value: Any) -> None:
        assert value == expected, f"{value!r} != {expected!r}"
    return check


def _stock_mteb(variable: str, value: str | None, task: str) -> Callable[[Workspace], tuple[int, str]]:
    """``python -m mteb run`` in a fresh interpreter with one bad variable (``None``: a file of the case)."""
    def run(ws: Workspace) -> tuple[int, str]:
        bad = value if value is not None else str(_a_file(ws))
        done = subprocess.run([sys.executable, "-m", "mteb", "run", *BM25, "-t", task, "--output-folder",
                               str(ws.tmp / "results")], env={**os.environ, variable: bad}, cwd=ws.tmp,
                              capture_output=True, text=True, timeout=300, check=False)
        return done.returncode, done.stderr
    return run


def _one_line_naming(variable: str) -> Callable[[Workspace, tuple[int, str]], None]:
    def check(ws: Workspace, value: tuple[int, str]) -> None:
        code, stderr = value
        last = [line for line in stderr.splitlines() if line.strip()][-1]
        assert code != 0 and "Traceback" not in stderr, stderr[-1500:]
        assert last.startswith("mteb: ") and variable in last, last
    return check


def _a_file(ws: Workspace) -> Path:
    path = ws.tmp / "a-file.txt"
    path.write_text("not a folder")
    return path


def _stale_variable_then_option(ws: Workspace) -> Path | None:
    from airbench_mteb.settings import configure

    return configure(data_dir=ws.tmp).data_dir


# --- the JSON-lines readers: ids are strings or integers, texts are strings ------------------------

def _jsonl(folder: Path, name: str, *rows: str) -> Path:
    path = folder / name
    path.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    return path


def _corpus(*rows: str) -> Callable[[Workspace], Any]:
    def read(ws: Workspace) -> Any:
        from airbench_mteb.data.retrieval_data import read_corpus_jsonl

        return read_corpus_jsonl(_jsonl(ws.tmp, "corpus.jsonl", '{"_id": "d0", "text": "fine"}', *rows), id_key="_id")
    return read


def _queries(*rows: str) -> Callable[[Workspace], Any]:
    def read(ws: Workspace) -> Any:
        from airbench_mteb.data.retrieval_data import read_queries_jsonl

        return read_queries_jsonl(_jsonl(ws.tmp, "queries.jsonl", *rows), id_key="_id")
    return read


def _qrels(*rows: str) -> Callable[[Workspace], Any]:
    def read(ws: Workspace) -> Any:
        from airbench_mteb.data.qrels import read_qrels_jsonl

        return read_qrels_jsonl(_jsonl(ws.tmp, "qrels.jsonl", *rows))
    return read


def _beir_folder_with_a_bool_id(ws: Workspace) -> Any:
    from airbench_mteb.data.beir_folder import read_beir_folder

    folder = ws.tmp / "beir"
    (folder / "qrels").mkdir(parents=True)
    _jsonl(folder, "corpus.jsonl", '{"_id": "d0", "text": "zero"}', '{"_id": true, "text": "one"}')
    _jsonl(folder, "queries.jsonl", '{"_id": "q0", "text": "query"}')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\n")
    return read_beir_folder(folder, "test")


def _corpus_ids(ws: Workspace, corpus: Any) -> None:
    assert list(corpus) == ["d0", "7"] and corpus["7"].text == "seven", corpus


WRONG_ID = "must be a string or an integer"

CASES = [
    # run: count options below 1, before a model is loaded
    Case("cli-run-batch-size-zero", argv=_run("--batch-size", "0"), error="--batch-size must be at least 1, got 0"),
    Case("cli-run-batch-size-negative", argv=_run("--batch-size", "-5"), error="--batch-size must be at least 1"),
    Case("cli-run-rerank-top-k-zero",
         argv=lambda ws: _run("--rerank-top-k", "0", "--previous-results", str(ws.tmp))(ws),
         error="--rerank-top-k must be at least 1, got 0"),
    Case("cli-run-rerank-top-k-negative",
         argv=lambda ws: _run("--rerank-top-k", "-1", "--previous-results", str(ws.tmp))(ws),
         error="--rerank-top-k must be at least 1, got -1"),
    Case("cli-run-data-dir-missing", argv=lambda ws: _run("--data-dir", str(ws.tmp / "no-mirror"))(ws),
         error="no-mirror is not a folder"),
    Case("cli-run-data-dir-a-file", argv=lambda ws: _run("--data-dir", str(_a_file(ws)))(ws),
         error="a-file.txt is not a folder"),
    # settings variables read by run, each named
    Case("cli-run-env-data-dir-a-file", argv=_run(), env={DATA_DIR_ENV: A_FILE}, error=f"${DATA_DIR_ENV}"),
    Case("cli-run-env-keep-titles-maybe", argv=_run(task="CocktailNFCorpus"), env={KEEP_TITLES_ENV: "maybe"},
         error=ONE_LINE_KEEP_TITLES),
    Case("cli-run-env-keep-titles-number", argv=_run(task="CocktailNFCorpus"), env={KEEP_TITLES_ENV: "2"},
         error="1, true, yes, on or 0, false, no, off"),
    Case("cli-run-env-ci-unknown", argv=_run(), env={"AIRBENCH_MTEB_CI": "wilson"}, error="$AIRBENCH_MTEB_CI"),
    Case("cli-run-env-ci-resamples-word", argv=_run(), env={"AIRBENCH_MTEB_CI_RESAMPLES": "many"},
         error="$AIRBENCH_MTEB_CI_RESAMPLES"),
    Case("cli-run-env-ci-resamples-few", argv=_run(), env={"AIRBENCH_MTEB_CI_RESAMPLES": "5"},
         error="$AIRBENCH_MTEB_CI_RESAMPLES"),
    Case("cli-run-env-cache-a-file", argv=_run(), env={"AIRBENCH_MTEB_CACHE": A_FILE}, error="$AIRBENCH_MTEB_CACHE"),
    # the same variables in mteb's own command line: one line, no traceback
    Case("cli-mteb-run-env-data-dir-a-file", call=_stock_mteb(DATA_DIR_ENV, None, "IRSCPartRetrieval"),
         check=_one_line_naming(DATA_DIR_ENV), slow=True),
    Case("cli-mteb-run-env-keep-titles-maybe", call=_stock_mteb(KEEP_TITLES_ENV, "maybe", "CocktailNFCorpus"),
         check=_one_line_naming(ONE_LINE_KEEP_TITLES), slow=True),
    # settings read right
    Case("cli-settings-keep-titles-yes", call=_settings("keep_titles"), env={KEEP_TITLES_ENV: " Yes "},
         check=_is(True)),
    Case("cli-settings-keep-titles-off", call=_settings("keep_titles"), env={KEEP_TITLES_ENV: "OFF"}, check=_is(False)),
    Case("cli-settings-keep-titles-typo", call=_settings("keep_titles"), env={KEEP_TITLES_ENV: "ture"},
         error="$AIRBENCH_MTEB_KEEP_TITLES='ture'"),
    Case("cli-settings-embedding-cache-off", call=_settings("embedding_cache"),
         env={"AIRBENCH_MTEB_EMBEDDING_CACHE": "off"}, check=_is(None)),
    Case("cli-settings-ci-off", call=_settings("ci"), env={"AIRBENCH_MTEB_CI": "off"}, check=_is(None)),
    Case("cli-settings-ci-resamples", call=_settings("ci_resamples"), env={"AIRBENCH_MTEB_CI_RESAMPLES": "1000"},
         check=_is(1000)),
    Case("cli-settings-data-dir-option-over-stale-variable", call=_stale_variable_then_option,
         env={DATA_DIR_ENV: "/no/such/mirror"}, check=lambda ws, value: _is(ws.tmp)(ws, value)),
    # bias and download misuse: one line, exit 2 (they used to exit 1 through a SystemExit of their own)
    Case("cli-bias-without-tasks", argv=lambda ws: ["bias", *BM25], error="give -t TASK"),
    Case("cli-bias-sources-without-data-dir", argv=lambda ws: ["bias", *BM25, "--sources", "human", "llm"],
         error="--sources evaluates the folder given by --data-dir"),
    Case("cli-bias-not-a-source-bias-task", argv=lambda ws: ["bias", *BM25, "-t", "IRSCPartRetrieval"],
         error="'IRSCPartRetrieval' is not a source-bias task"),
    Case("cli-bias-batch-size-zero", argv=lambda ws: ["bias", *BM25, "-t", "CocktailNFCorpus", "--batch-size", "0"],
         error="--batch-size must be at least 1"),
    # issue 36: an IRSC task an LLM writes was told to run `generate irsc --out DIR`, which builds it again without
    Case("cli-irsc-summary-not-built", argv=lambda ws: ["run", *BM25, "-t", "IRSCSummaryRetrieval", "--data-dir",
                                                       str(ws.tmp), "--output-folder", str(ws.tmp / "results")],
         error=lambda ws: f"not built ({ws.tmp}/irsc); run `airbench-mteb generate irsc --out DIR --llm`"),
    Case("cli-irsc-part-not-built", argv=lambda ws: ["run", *BM25, "-t", "IRSCPartRetrieval", "--data-dir", str(ws.tmp),
                                                    "--output-folder", str(ws.tmp / "results")],
         error="run `airbench-mteb generate irsc --out DIR` and point --data-dir"),
    # issue 36: offline, download advised pointing --data-dir at a mirror that download filled (circular)
    Case("cli-download-offline", argv=lambda ws: ["download", "--data-dir", str(ws.tmp / "mirror"), "-t",
                                                 "AIR-Bench_24.05_qa_news_en"],
         env={"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
         error="on a machine that reaches it, `airbench-mteb download --data-dir DIR` fills a mirror; copy DIR here",
         slow=True),
    # a family that does not exist listed "0 tasks" and exited 0
    Case("cli-tasks-unknown-family", argv=lambda ws: ["tasks", "--family", "nope"],
         error="argument --family: invalid choice: 'nope'"),
    Case("cli-download-no-such-version",
         argv=lambda ws: ["download", "--data-dir", str(ws.tmp / "mirror"), "--version", "AIR-Bench_99.01"],
         error="--version AIR-Bench_99.01"),
    # the readers: an id is a string or an integer, a text a string
    Case("cli-reader-corpus-bool-id", call=_corpus('{"_id": true, "text": "one"}'), error=f"'_id' {WRONG_ID}, got true"),
    Case("cli-reader-corpus-float-id", call=_corpus('{"_id": 1.0, "text": "one"}'), error=f"'_id' {WRONG_ID}, got 1.0"),
    Case("cli-reader-corpus-null-id", call=_corpus('{"_id": null, "text": "one"}'), error=f"'_id' {WRONG_ID}, got null"),
    Case("cli-reader-corpus-object-id", call=_corpus('{"_id": {"a": 1}, "text": "one"}'), error=f"'_id' {WRONG_ID}"),
    Case("cli-reader-corpus-number-text", call=_corpus('{"_id": "d1", "text": 12}'),
         error="line 2: field 'text' must be a string, got 12"),
    Case("cli-reader-corpus-list-text", call=_corpus('{"_id": "d1", "text": ["a", "b"]}'),
         error="field 'text' must be a string"),
    Case("cli-reader-corpus-bool-title", call=_corpus('{"_id": "d1", "title": true, "text": "one"}'),
         error="field 'title' must be a string, got true"),
    Case("cli-reader-corpus-integer-id", call=_corpus('{"_id": 7, "text": "seven"}'), check=_corpus_ids),
    Case("cli-reader-queries-number-text", call=_queries('{"_id": "q1", "text": 3.5}'),
         error="field 'text' must be a string, got 3.5"),
    Case("cli-reader-queries-bool-id", call=_queries('{"_id": false, "text": "q"}'), error=f"'_id' {WRONG_ID}"),
    Case("cli-reader-qrels-bool-query-id", call=_qrels('{"qid": true, "docid": "d0", "relevance": 1}'),
         error=f"'qid' {WRONG_ID}, got true"),
    Case("cli-reader-qrels-float-doc-id", call=_qrels('{"qid": "q0", "docid": 2.5, "relevance": 1}'),
         error=f"'docid' {WRONG_ID}, got 2.5"),
    Case("cli-reader-beir-folder-bool-id", call=_beir_folder_with_a_bool_id, error=f"corpus.jsonl, line 2: field '_id' {WRONG_ID}"),
    # issue 36: an empty --out is the current folder, which got 16 MB unasked
    Case("cli-sample-data-empty-out", argv=lambda ws: ["sample-data", "--out", ""], error="--out is empty"),
    Case("cli-omp-threads-not-a-number", call=lambda ws: __import__("mteb").get_model("airbench-mteb/multilingual-e5-small"),
         env={"OMP_NUM_THREADS": "two"}, error="OMP_NUM_THREADS='two'"),
    Case("cli-omp-threads-zero", call=lambda ws: __import__("mteb").get_model("airbench-mteb/multilingual-e5-small"),
         env={"OMP_NUM_THREADS": "0"}, error="OMP_NUM_THREADS='0'"),
]
