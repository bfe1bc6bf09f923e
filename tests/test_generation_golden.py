"""Every generator writes the same bytes as the recorded run: a scripted LLM (answers derived from the
prompt's hash), small real inputs, and a sha256 per published file in tests/data/generator_golden/<family>.

Record again (only when an output change is intended) with AIRBENCH_MTEB_RECORD_GOLDEN=1.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
from datetime import date
from pathlib import Path

import pytest

from airbench_mteb.generation.llm import Completion, LLMClient, LLMParams, ResponseCache
from tests.conftest import SAMPLE_DATA

GOLDEN = Path(__file__).parent / "data" / "generator_golden"
LEE = Path(__import__("gensim").__file__).parent / "test" / "test_data" / "lee_background.cor"
NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"


def _number(prompt: str) -> int:
    return int.from_bytes(hashlib.sha256(prompt.encode("utf-8")).digest()[:4], "big")


class HashBackend:
    """A deterministic stand-in for an LLM: each answer is a function of the prompt and the output schema."""

    kind, model = "scripted", "hash"

    def __init__(self) -> None:
        self.identity = {"kind": self.kind, "model": self.model}

    async def complete(self, messages: list[dict[str, str]], params: LLMParams) -> Completion:
        prompt = messages[0]["content"]
        return Completion(self.reply(prompt, params), len(prompt.split()), 9)

    @staticmethod
    def reply(prompt: str, params: LLMParams) -> str:
        n = _number(prompt)
        words = [w.strip(".,;:\"'()") for w in prompt.split()[-40:] if len(w) > 3]
        schema = params.json_schema or {}
        if schema.get("type") == "integer":  # the AIR-Bench judge's level
            return str(n % 4)
        key = next(iter(schema.get("properties", {})), None)
        if key is None:
            return prompt_free_reply(prompt, n, words)
        if schema["properties"][key]["type"] == "string":
            return json.dumps({key: " ".join(words[n % 7: n % 7 + 6]) or f"query {n % 97}"})
        count = schema["properties"][key]["maxItems"]
        return json.dumps({key: [" ".join(words[(n + i) % 9: (n + i) % 9 + 5]) + f" {i}" for i in range(count)]})

    async def aclose(self) -> None:
        pass


def prompt_free_reply(prompt: str, n: int, words: list[str]) -> str:
    """co*cktail rewrites and IRSC queries/translations: plain text (sometimes unusable, to reach those paths)."""
    if n % 5 == 0:
        return "I'm sorry, but I cannot help with that."
    if prompt.startswith("Write one question"):
        return "Question: what about " + " ".join(words[:4]) + "?"
    if prompt.startswith("Summarize"):
        return " ".join(words[: 8])
    if "into Simplified Chinese" in prompt:
        return "中文：" + " ".join(words[-5:])
    if prompt.startswith("Translate"):
        return "in English: " + str(n % 1000)
    return "Rewritten Text: " + " ".join(reversed(words))


def published(out: Path) -> dict[str, str]:
    """sha256 of every published file (not the private work folder or the run's own cost and time account)."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*"))
            if p.is_file() and ".work" not in p.parts and p.name != "run_account.json"}


def check_golden(family: str, out: Path) -> None:
    listing = GOLDEN / family / "sha256.txt"
    found = "".join(f"{digest}  {name}\n" for name, digest in published(out).items())
    if os.environ.get("AIRBENCH_MTEB_RECORD_GOLDEN"):
        listing.parent.mkdir(parents=True, exist_ok=True)
        listing.write_text(found, encoding="utf-8")
    assert found == listing.read_text(encoding="utf-8")


def client(out: Path) -> LLMClient:
    return LLMClient(HashBackend(), ResponseCache(out / ".work" / "llm_cache.sqlite"))


def run_airbench(out: Path) -> None:
    from airbench_mteb.generation.airbench import AirBenchConfig, generate
    from airbench_mteb.generation.airbench.candidates import CandidateSettings
    from airbench_mteb.generation.airbench.qc import QCSettings

    config = AirBenchConfig(corpus=str(LEE), domain="news", language="en", num_queries=4, seed=5, rewrites=1,
                            min_length=60, max_length=110, source_name="gensim Lee background corpus",
                            recall_encoder="minilm", rerankers=("minilm",), release_date="2026-11-24",
                            candidates=CandidateSettings(hard_negatives=(2, 3), max_tokens=96),
                            # the scripted LLM's queries are words of their passage: the overlap rule would drop
                            # them all; the easiness rule is on so that its decisions are recorded too
                            qc=QCSettings(copied_overlap=0.0, easy_percentile=50.0))
    llm = client(out)
    asyncio.run(generate(config, out, llm))
    llm.cache.close()


def small_cocktail_input(folder: Path) -> Path:
    """8 real NQ-UTD documents, the queries judging them and those judgments."""
    (folder / "qrels").mkdir(parents=True)
    rows = [json.loads(line) for line in (NQ_UTD / "corpus" / "human.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = {row["_id"] for row in rows[:8]}
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:8]), encoding="utf-8")
    lines = (NQ_UTD / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    judged = [line for line in lines[1:] if line.split("\t")[1] in docs]
    (folder / "qrels" / "test.tsv").write_text("\n".join([lines[0], *judged]) + "\n", encoding="utf-8")
    qids = {line.split("\t")[0] for line in judged}
    queries = [line for line in (NQ_UTD / "queries.jsonl").read_text(encoding="utf-8").splitlines()
               if json.loads(line)["_id"] in qids]
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    return folder


def run_cocktail(out: Path, corpus: Path) -> None:
    from airbench_mteb.generation.cocktail import CocktailConfig, LLMSource, generate

    config = CocktailConfig(corpus=str(corpus), seed=2, max_words=200,
                            sources=(LLMSource("hash-a", "scripted"), LLMSource("hash-b", "scripted", "other")))
    llm = client(out)
    asyncio.run(generate(config, out, {"hash-a": llm, "hash-b": llm}, show_progress=False))
    llm.cache.close()


def run_irsc(out: Path) -> None:
    from airbench_mteb.generation.irsc import BuildConfig, build_irsc
    from airbench_mteb.generation.irsc.sources import shipped_records

    llm = client(out)
    build_irsc(shipped_records(), out, BuildConfig(per_task=4, cross_per_task=2, corpus_limit=40, seed=3), llm,
               show_progress=False)
    llm.cache.close()


class OtherDay(date):
    """``date`` whose today() is years after the recording."""

    @classmethod
    def today(cls) -> OtherDay:
        return cls(2031, 2, 3)


# the AIR-Bench and IRSC generators run the bundled models (minutes for IRSC); co*cktail's takes a second
@pytest.mark.parametrize("family", [pytest.param("airbench", marks=pytest.mark.slow), "cocktail",
                                    pytest.param("irsc", marks=pytest.mark.slow)])
def test_generator_outputs_are_byte_identical_to_the_recorded_run(family: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the co*cktail manifest names its input as given: a relative path
    out = Path("out")
    if family == "airbench":
        # Run on another day than the recording's: the output depends on the configured release date only.
        # (the package exports the function `generate`, which hides its module of the same name)
        monkeypatch.setattr(importlib.import_module("airbench_mteb.generation.airbench.generate"), "date", OtherDay)
        run_airbench(out)
    elif family == "cocktail":
        run_cocktail(out, small_cocktail_input(Path("input")))
    else:
        run_irsc(out)
    check_golden(family, out)
