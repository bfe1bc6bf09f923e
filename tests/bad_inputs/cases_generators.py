"""Bad inputs of the three generators: every numeric option out of range or contradicting another, bad --llm
specs and LLM options, missing inputs and inputs with bad rows.

No case may start an LLM: every command line names an OpenAI-compatible endpoint where nothing listens
(``--max-retries 0``), so a check that let a bad value through would end in a connection error that
names no culprit (an unclear error, counted against the project), never in LLM work. The llama.cpp
cases name a GGUF file that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bad_inputs.framework import Case, Workspace, shared_data

NO_LLM = ["--backend", "openai", "--model", "never-called", "--base-url", "http://127.0.0.1:9/v1",
          "--max-retries", "0", "--timeout", "1"]
WORDS = ("river", "stone", "market", "winter", "garden", "signal", "harbor", "letter", "forest", "engine")


@dataclass
class Inputs:
    airbench_corpus: Path  # five QA documents of 40 words
    beir: Path  # a BEIR folder of five documents, two queries, test qrels
    irsc_source: Path  # IRSC records in both languages


def _document(number: int) -> str:
    return " ".join(WORDS[(number + i) % len(WORDS)] + str(i) for i in range(40))


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@shared_data("generator_inputs")
def _build(folder: Path) -> Inputs:
    documents = [{"_id": f"d{i}", "text": _document(i)} for i in range(5)]
    corpus = _write_jsonl(folder / "airbench" / "corpus.jsonl", [{"id": d["_id"], "text": d["text"]} for d in documents])
    beir = folder / "beir"
    _write_jsonl(beir / "corpus.jsonl", documents)
    _write_jsonl(beir / "queries.jsonl", [{"_id": "q0", "text": "river stone"}, {"_id": "q1", "text": "winter"}])
    (beir / "qrels").mkdir()
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\nq1\td3\t1\n")
    source = _write_jsonl(folder / "irsc.jsonl", [
        {"lang": "en", "paragraph": _document(7), "task": "part"},
        {"lang": "zh", "paragraph": "今天天气很好，我们去公园散步，看见很多人在湖边钓鱼。" * 3, "task": "keyword"},
    ])
    return Inputs(corpus, beir, source)


def _inputs(ws: Workspace) -> Inputs:
    return ws.shared("generator_inputs")


def _file(ws: Workspace, name: str, text: str | bytes) -> Path:
    path = ws.tmp / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- command lines ----------------------------------------------------------------------------------

def _airbench(*options: str, corpus: Callable[[Workspace], Path] | None = None) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        path = corpus(ws) if corpus is not None else _inputs(ws).airbench_corpus
        return ["generate", "airbench", "--corpus", str(path), "--domain", "law", "--language", "en",
                "--num-queries", "2", "--out", str(ws.tmp / "out"), *NO_LLM, *options]
    return argv


def _cocktail(*options: str, llm: tuple[str, ...] = ("smol",),
              corpus: Callable[[Workspace], Path] | None = None) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        folder = corpus(ws) if corpus is not None else _inputs(ws).beir
        return ["generate", "cocktail", "--corpus", str(folder), "--out", str(ws.tmp / "out"), *NO_LLM,
                "--llm", *llm, *options]
    return argv


def _irsc(*options: str, source: Callable[[Workspace], Path] | None = None) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        path = source(ws) if source is not None else _inputs(ws).irsc_source
        return ["generate", "irsc", "--source", str(path), "--out", str(ws.tmp / "out"), *NO_LLM, *options]
    return argv


# --- inputs with bad rows ---------------------------------------------------------------------------

def _airbench_corpus(*extra_rows: str) -> Callable[[Workspace], Path]:
    def make(ws: Workspace) -> Path:
        good = _inputs(ws).airbench_corpus.read_text(encoding="utf-8")
        return _file(ws, "corpus.jsonl", good + "".join(row + "\n" for row in extra_rows))
    return make


def _beir_with(name: str, text: str) -> Callable[[Workspace], Path]:
    """A copy of the shared BEIR folder with one file replaced."""
    def make(ws: Workspace) -> Path:
        import shutil

        folder = Path(shutil.copytree(_inputs(ws).beir, ws.tmp / "beir"))
        (folder / name).write_text(text, encoding="utf-8")
        return folder
    return make


def _beir_without_qrels(ws: Workspace) -> Path:
    import shutil

    folder = Path(shutil.copytree(_inputs(ws).beir, ws.tmp / "beir"))
    shutil.rmtree(folder / "qrels")
    (folder / "qrels").mkdir()
    return folder


def _irsc_source(*rows: str) -> Callable[[Workspace], Path]:
    return lambda ws: _file(ws, "source.jsonl", "".join(row + "\n" for row in rows))


def _missing(name: str) -> Callable[[Workspace], Path]:
    return lambda ws: ws.tmp / name


def _long_doc(data: bytes) -> Callable[[Workspace], Path]:
    return lambda ws: _file(ws, "long.txt", data)


# --- library calls: the same checks without the command line ----------------------------------------

def _candidate_settings(ws: Workspace) -> Any:
    from airbench_mteb.generation.airbench.candidates import CandidateSettings

    return CandidateSettings(hard_negatives=(5, 4))


def _client_with_negative_retries(ws: Workspace) -> Any:
    from airbench_mteb.generation.llm.client import LLMClient

    class Unused:
        kind, model, identity = "stub", "stub", {"kind": "stub"}

    return LLMClient(Unused(), max_retries=-1)  # type: ignore[arg-type]


def _cache_in_a_folder(ws: Workspace) -> Any:
    from airbench_mteb.generation.llm.cache import ResponseCache

    return ResponseCache(ws.tmp)


def _hub_limit_zero(ws: Workspace) -> Any:
    from airbench_mteb.generation.irsc.sources import source_records

    return source_records([], hub=True, hub_limit=0)


def _cocktail_config_without_sources(ws: Workspace) -> Any:
    from airbench_mteb.generation.cocktail import CocktailConfig

    return CocktailConfig(corpus=str(_inputs(ws).beir), sources=())


BAD_ID_ON_LINE_6 = "line 6: field 'id' must be a string or an integer"  # the shared corpus has five good rows first

CASES = [
    # generate airbench: counts, ranges and their relations
    Case("gen-airbench-max-below-min-negatives", argv=_airbench("--max-negatives", "2"),
         error="--min-negatives (3) must not exceed --max-negatives (2)"),
    Case("gen-airbench-min-above-max-negatives", argv=_airbench("--min-negatives", "5", "--max-negatives", "4"),
         error="--min-negatives (5) must not exceed --max-negatives (4)"),
    Case("gen-airbench-min-negatives-zero", argv=_airbench("--min-negatives", "0"), error="--min-negatives must be at least 1"),
    Case("gen-airbench-num-queries-zero", argv=_airbench("--num-queries", "0"), error="--num-queries must be at least 1"),
    Case("gen-airbench-num-queries-negative", argv=_airbench("--num-queries", "-3"), error="--num-queries must be at least 1"),
    # issue 36: the kept task's name at the 200-character limit passed, the pre-QC set's (207) died after the LLM work
    Case("gen-airbench-pre-qc-name-over-200", argv=_airbench("--dataset", "d" * 183),
         error="written as dataset '" + "d" * 183 + "-pre-qc'"),
    Case("gen-airbench-num-queries-above-corpus", argv=_airbench("--num-queries", "50"),
         error="--num-queries 50 exceeds the 5 documents"),
    Case("gen-airbench-seed-negative", argv=_airbench("--seed", "-1"), error="--seed must be between 0 and 2147483647"),
    Case("gen-airbench-seed-too-large", argv=_airbench("--seed", str(2**31)), error="--seed must be between 0"),
    Case("gen-airbench-rewrites-negative", argv=_airbench("--rewrites", "-1"), error="--rewrites must be at least 0"),
    Case("gen-airbench-hard-negative-chars-zero", argv=_airbench("--hard-negative-chars", "0"),
         error="--hard-negative-chars must be at least 1"),
    Case("gen-airbench-document-chars-zero", argv=_airbench("--document-chars", "0"),
         error="--document-chars must be at least 1"),
    Case("gen-airbench-min-length-zero", argv=_airbench("--min-length", "0"), error="--min-length must be at least 1"),
    Case("gen-airbench-release-date-no-day", argv=_airbench("--release-date", "2026-02-30"),
         error="--release-date must be a date written YYYY-MM-DD, got '2026-02-30'"),
    Case("gen-airbench-release-date-other-form", argv=_airbench("--release-date", "26/11/2026"),
         error="--release-date must be a date written YYYY-MM-DD"),
    Case("gen-airbench-length-range", argv=_airbench("--min-length", "100", "--max-length", "50"),
         error="--min-length (100) must not exceed --max-length (50)"),
    Case("gen-airbench-recall-depth-zero", argv=_airbench("--recall-depth", "0"), error="--recall-depth must be at least 1"),
    Case("gen-airbench-qc-batch-size-zero", argv=_airbench("--qc-batch-size", "0"),
         error="--qc-batch-size must be at least 1"),
    Case("gen-airbench-judge-level-four", argv=_airbench("--judge-positive-levels", "2", "4"),
         error="--judge-positive-levels must be between 0 and 3, got 4"),
    Case("gen-airbench-judge-level-negative", argv=_airbench("--judge-positive-levels", "-1"),
         error="--judge-positive-levels must be between 0 and 3, got -1"),
    Case("gen-airbench-unknown-reranker", argv=_airbench("--rerankers", "minilm,bge"), error="unknown reranker 'bge'"),
    Case("gen-airbench-empty-reranker", argv=_airbench("--rerankers", "minilm,"), error="unknown reranker ''"),
    Case("gen-airbench-reranker-without-path", argv=_airbench("--rerankers", "flag:"), error="unknown reranker 'flag:'"),
    # the LLM options every generator shares
    Case("gen-airbench-temperature-high", argv=_airbench("--temperature", "2.5"),
         error="--temperature must be between 0.0 and 2.0, got 2.5"),
    Case("gen-airbench-temperature-negative", argv=_airbench("--temperature", "-0.1"), error="--temperature must be between"),
    Case("gen-airbench-temperature-nan", argv=_airbench("--temperature", "nan"), error="--temperature must be a finite number"),
    Case("gen-airbench-max-tokens-zero", argv=_airbench("--max-tokens", "0"), error="--max-tokens must be at least 1"),
    Case("gen-airbench-concurrency-zero", argv=_airbench("--concurrency", "0"), error="--concurrency must be at least 1"),
    Case("gen-airbench-timeout-zero", argv=_airbench("--timeout", "0"), error="--timeout must be greater than 0"),
    Case("gen-airbench-timeout-infinite", argv=_airbench("--timeout", "inf"), error="--timeout must be a finite number"),
    Case("gen-airbench-max-retries-negative", argv=_airbench("--max-retries", "-1"), error="--max-retries must be at least 0"),
    Case("gen-airbench-price-negative", argv=_airbench("--price-out", "-2"), error="--price-out must be at least 0"),
    Case("gen-airbench-threads-zero",
         argv=lambda ws: [*_airbench("--threads", "0")(ws), "--backend", "llamacpp", "--model", str(ws.tmp / "no.gguf")],
         error="--threads must be at least 1"),
    Case("gen-airbench-base-url-without-scheme", argv=_airbench("--base-url", "localhost:8000"),
         error="--base-url 'localhost:8000' must be an http(s) URL"),
    Case("gen-airbench-base-url-bad-port", argv=_airbench("--base-url", "http://127.0.0.1:port/v1"),
         error="--base-url is not a URL (Port could not be cast"),
    Case("gen-airbench-base-url-credential-and-bad-port", argv=_airbench("--base-url", "http://me:secret@h:port/v1"),
         error="--base-url is not a URL"),
    Case("gen-airbench-base-url-with-credential", argv=_airbench("--base-url", "http://user:secret@127.0.0.1:9/v1"),
         error="credential in its user info"),
    Case("gen-airbench-openai-without-model", argv=_airbench("--model", ""), error="the openai backend needs --model"),
    Case("gen-airbench-cache-a-folder", argv=lambda ws: _airbench("--cache", str(ws.tmp))(ws),
         error="is not a file (--cache)"),
    # generate airbench: inputs
    Case("gen-airbench-corpus-missing", argv=_airbench(corpus=_missing("missing.jsonl")), error="missing.jsonl"),
    Case("gen-airbench-corpus-a-folder", argv=_airbench(corpus=lambda ws: ws.tmp), error="corpus is not a file"),
    Case("gen-airbench-corpus-bool-id", argv=_airbench(corpus=_airbench_corpus('{"id": true, "text": "x y z"}')),
         error=BAD_ID_ON_LINE_6),
    Case("gen-airbench-corpus-float-id", argv=_airbench(corpus=_airbench_corpus('{"id": 2.5, "text": "x y z"}')),
         error=BAD_ID_ON_LINE_6),
    Case("gen-airbench-corpus-duplicate-id", argv=_airbench(corpus=_airbench_corpus('{"id": "d1", "text": "again"}')),
         error="duplicate document id (first seen on line 2)"),
    Case("gen-airbench-corpus-number-text", argv=_airbench(corpus=_airbench_corpus('{"id": "d9", "text": 9}')),
         error="field 'text' must be a string"),
    Case("gen-airbench-corpus-malformed-json", argv=_airbench(corpus=_airbench_corpus('{"id": "d9", "text": ')),
         error="line 6"),
    Case("gen-airbench-unknown-language", argv=_airbench("--language", "xx"), error="'xx'"),
    # names register-dataset would refuse, refused before any work
    Case("gen-airbench-domain-with-slash", argv=_airbench("--domain", "a/b"), error="domain 'a/b'"),
    Case("gen-airbench-domain-empty", argv=_airbench("--domain", ""), error="domain ''"),
    Case("gen-airbench-dataset-with-slash", argv=_airbench("--dataset", "x/y"), error="dataset 'x/y'"),
    Case("gen-airbench-official-version", argv=_airbench("--version", "AIR-Bench_24.05"),
         error="'AIR-Bench_24.05' is an official AIR-Bench release"),
    Case("gen-airbench-unknown-recall-encoder", argv=_airbench("--recall-encoder", "bogus-encoder"),
         error="--recall-encoder: unknown model 'bogus-encoder'"),
    Case("gen-airbench-out-a-file", argv=lambda ws: [*_airbench()(ws), "--out", str(_file(ws, "taken", "a file"))],
         error="taken is a file, not a folder"),
    Case("gen-airbench-long-doc-missing", argv=_airbench("--task-type", "long-doc", corpus=_missing("book.txt")),
         error="book.txt"),
    Case("gen-airbench-long-doc-not-utf8", argv=_airbench("--task-type", "long-doc", corpus=_long_doc(b"caf\xe9 au lait")),
         error="not valid UTF-8"),
    # generate cocktail: options and --llm specs
    Case("gen-cocktail-max-docs-zero", argv=_cocktail("--max-docs", "0"), error="--max-docs must be at least 1"),
    Case("gen-cocktail-min-words-zero", argv=_cocktail("--min-words", "0"), error="--min-words must be at least 1"),
    Case("gen-cocktail-word-range", argv=_cocktail("--min-words", "50", "--max-words", "10"),
         error="--min-words (50) must not exceed --max-words (10)"),
    Case("gen-cocktail-max-tokens-zero", argv=_cocktail("--max-tokens", "0"), error="--max-tokens must be at least 1"),
    Case("gen-cocktail-max-failures-zero", argv=_cocktail("--max-failures", "0"), error="--max-failures must be at least 1"),
    Case("gen-cocktail-seed-negative", argv=_cocktail("--seed", "-7"), error="--seed must be between 0"),
    Case("gen-cocktail-concurrency-zero", argv=_cocktail("--concurrency", "0"), error="--concurrency must be at least 1"),
    Case("gen-cocktail-default-temperature-high", argv=_cocktail("--temperature", "4"),
         error="--llm smol: temperature must be between 0.0 and 2.0, got 4.0"),
    Case("gen-cocktail-llm-temperature-word", argv=_cocktail(llm=("smol", "temperature=warm")),
         error="--llm smol: temperature must be a number, got 'warm'"),
    Case("gen-cocktail-llm-temperature-high", argv=_cocktail(llm=("smol", "temperature=3")),
         error="--llm smol: temperature must be between 0.0 and 2.0"),
    Case("gen-cocktail-llm-unknown-key", argv=_cocktail(llm=("smol", "top_p=0.9")), error="cannot read 'top_p=0.9'"),
    Case("gen-cocktail-llm-unknown-backend", argv=_cocktail(llm=("smol", "vllm")), error="unknown backend 'vllm'"),
    Case("gen-cocktail-llm-openai-without-model", argv=_cocktail("--model", "", llm=("smol", "openai")),
         error="--llm smol: the openai backend needs model=NAME"),
    Case("gen-cocktail-llm-credential-url", argv=_cocktail(llm=("smol", "base-url=http://me:secret@127.0.0.1:9/v1")),
         error="credential in its user info"),
    Case("gen-cocktail-llm-base-url-bad-port", argv=_cocktail(llm=("smol", "base-url=http://me:secret@h:port/v1")),
         error="--llm smol: base-url is not a URL"),
    Case("gen-cocktail-llm-base-url-without-host", argv=_cocktail(llm=("smol", "base-url=http:///v1")),
         error="--llm smol: base-url 'http:///v1' must be an http(s) URL with a host"),
    Case("gen-cocktail-llm-named-human", argv=_cocktail(llm=("human",)), error="LLM source names"),
    Case("gen-cocktail-llm-openai-without-base-url", argv=_cocktail("--base-url", "", llm=("x", "openai", "model=m")),
         env={"AIRBENCH_MTEB_LLM_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
         error="calls api.openai.com, which needs an API key"),
    Case("gen-cocktail-unknown-language", argv=_cocktail("--language", "xx"), error="--language: unknown ISO 639-1"),
    Case("gen-cocktail-out-a-file", argv=lambda ws: [*_cocktail()(ws), "--out", str(_file(ws, "taken", "a file"))],
         error="taken is a file, not a folder"),
    Case("gen-cocktail-llm-names-twice", argv=lambda ws: [*_cocktail()(ws), "--llm", "smol"], error="LLM source names"),
    # generate cocktail: inputs
    Case("gen-cocktail-corpus-missing", argv=_cocktail(corpus=_missing("no-beir")), error="corpus folder not found"),
    Case("gen-cocktail-query-number-text", argv=_cocktail(corpus=_beir_with("queries.jsonl", '{"_id": "q0", "text": 1}\n')),
         error="field 'text' must be a string, got 1"),
    Case("gen-cocktail-corpus-bool-id",
         argv=_cocktail(corpus=_beir_with("corpus.jsonl", '{"_id": false, "text": "a b c"}\n')),
         error="field '_id' must be a string or an integer, got false"),
    Case("gen-cocktail-no-qrels", argv=_cocktail(corpus=_beir_without_qrels), error="no qrels/<split>.tsv"),
    # generate irsc: options, sources, LLM options
    Case("gen-irsc-per-task-zero", argv=_irsc("--per-task", "0"), error="--per-task must be at least 1"),
    Case("gen-irsc-cross-per-task-zero", argv=_irsc("--cross-per-task", "0"), error="--cross-per-task must be at least 1"),
    Case("gen-irsc-corpus-limit-zero", argv=_irsc("--corpus-limit", "0"), error="--corpus-limit must be at least 1"),
    Case("gen-irsc-hub-limit-zero", argv=_irsc("--hub-limit", "0"), error="--hub-limit must be at least 1"),
    Case("gen-irsc-seed-negative", argv=_irsc("--seed", "-1"), error="--seed must be between 0"),
    Case("gen-irsc-temperature-high", argv=_irsc("--llm", "--temperature", "2.1"), error="--temperature must be between"),
    Case("gen-irsc-max-tokens-zero", argv=_irsc("--llm", "--max-tokens", "0"), error="--max-tokens must be at least 1"),
    Case("gen-irsc-llm-concurrency-zero", argv=_irsc("--llm", "--concurrency", "0"), error="--concurrency must be at least 1"),
    Case("gen-irsc-llm-base-url-not-http", argv=_irsc("--llm", "--base-url", "ftp://127.0.0.1/v1"),
         error="must be an http(s) URL"),
    Case("gen-irsc-source-missing", argv=_irsc("--llm", source=_missing("records.jsonl")), error="records.jsonl"),
    Case("gen-irsc-source-unknown-language",
         argv=_irsc("--llm", source=_irsc_source('{"lang": "fr", "paragraph": "Il fait beau."}')),
         error="language 'fr'"),
    Case("gen-irsc-source-unknown-task",
         argv=_irsc("--llm", source=_irsc_source('{"lang": "en", "paragraph": "Fine weather.", "task": "nope"}')),
         error="task 'nope'"),
    Case("gen-irsc-source-query-without-task",
         argv=_irsc("--llm", source=_irsc_source('{"lang": "en", "paragraph": "Fine weather.", "query": "weather"}')),
         error="a 'query' needs the 'task'"),
    Case("gen-irsc-source-number-paragraph", argv=_irsc("--llm", source=_irsc_source('{"lang": "en", "paragraph": 5}')),
         error="missing or empty 'paragraph'"),
    Case("gen-irsc-source-empty", argv=_irsc("--llm", source=_irsc_source()), error="the sources gave no paragraphs"),
    # the library: the same checks for callers without the command line
    Case("gen-lib-candidate-settings-range", call=_candidate_settings,
         error="--min-negatives (5) must not exceed --max-negatives (4)"),
    Case("gen-lib-client-negative-retries", call=_client_with_negative_retries, error="max_retries must be at least 0"),
    Case("gen-lib-response-cache-a-folder", call=_cache_in_a_folder, error="is not a file (--cache)"),
    Case("gen-lib-source-records-hub-limit", call=_hub_limit_zero, error="--hub-limit must be at least 1"),
    Case("gen-lib-cocktail-without-sources", call=_cocktail_config_without_sources, error="at least one --llm"),
]
