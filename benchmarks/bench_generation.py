"""Generation pipeline speed against a local llama.cpp OpenAI-compatible server (bundled SmolLM2).

Prints calls/s at 1, 4 and 16 concurrent requests, and the pipeline's own overhead as a share of
the wall time of the LLM stage (candidate generation: time when no LLM call is in flight) and of
the whole run (which also loads and runs the QC embedding models). Last line: name=value.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from airbench_mteb.generation.airbench import AirBenchConfig, AirBenchPipeline
from airbench_mteb.generation.airbench.candidates import CandidateSettings
from airbench_mteb.generation.llm import Completion, LLMClient, LLMParams, ResponseCache
from airbench_mteb.generation.llm.base import Backend, Messages
from airbench_mteb.generation.llm.local_server import llama_server
from airbench_mteb.generation.llm.openai_backend import OpenAICompatibleBackend

LEE = Path(__import__("gensim").__file__).parent / "test" / "test_data" / "lee_background.cor"


class TimedBackend:
    """Records when each backend call was in flight."""

    def __init__(self, inner: Backend) -> None:
        self.inner, self.kind, self.model, self.identity = inner, inner.kind, inner.model, inner.identity
        self.intervals: list[tuple[float, float]] = []

    async def complete(self, messages: Messages, params: LLMParams) -> Completion:
        start = time.perf_counter()
        try:
            return await self.inner.complete(messages, params)
        finally:
            self.intervals.append((start, time.perf_counter()))

    async def aclose(self) -> None:
        await self.inner.aclose()


def busy_seconds(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Length of the union of the intervals, clipped to [start, end]."""
    total, reach = 0.0, start
    for a, b in sorted(intervals):
        a, b = max(a, reach), min(b, end)
        if b > a:
            total += b - a
            reach = b
    return total


async def calls_per_second(base: str, concurrency: int, calls: int) -> float:
    client = LLMClient(OpenAICompatibleBackend("smollm2", base), cache=None, concurrency=concurrency)
    messages = [[{"role": "user", "content": f"Name one fruit. ({i})"}] for i in range(calls)]
    start = time.perf_counter()
    await asyncio.gather(*(client.complete(m, LLMParams(max_tokens=12, seed=i)) for i, m in enumerate(messages)))
    elapsed = time.perf_counter() - start
    await client.aclose()
    return calls / elapsed


async def pipeline_overhead(base: str, out: Path) -> tuple[float, float, dict]:
    backend = TimedBackend(OpenAICompatibleBackend("smollm2", base))
    client = LLMClient(backend, ResponseCache(out / "cache.sqlite"), concurrency=4)
    config = AirBenchConfig(corpus=str(LEE), domain="news", language="en", num_queries=4, seed=3, rewrites=1,
                            min_length=60, max_length=110,
                            candidates=CandidateSettings(hard_negatives=(3, 3), hard_negative_chars=150,
                                                         document_chars=500, max_tokens=96))
    pipeline = AirBenchPipeline(config, client, out / "run")
    start = time.perf_counter()
    await pipeline.run()
    end = time.perf_counter()
    pipeline.close()
    await client.aclose()
    stages = pipeline.stage_seconds
    candidates_start = start + stages["prepare_corpus"]
    candidates_end = candidates_start + stages["candidates"]
    llm_stage = 1 - busy_seconds(backend.intervals, candidates_start, candidates_end) / stages["candidates"]
    whole = 1 - busy_seconds(backend.intervals, start, end) / (end - start)
    return llm_stage, whole, stages


def main() -> None:
    with llama_server() as base, tempfile.TemporaryDirectory() as tmp:
        rates = {c: asyncio.run(calls_per_second(base, c, calls=16)) for c in (1, 4, 16)}
        for concurrency, rate in rates.items():
            print(f"concurrency {concurrency:>2}: {rate:.2f} calls/s ({rate / rates[1]:.2f}x of concurrency 1)")
        llm_stage, whole, stages = asyncio.run(pipeline_overhead(base, Path(tmp)))
        print(f"stage seconds: {stages}")
        print(f"whole-run share of wall time with no LLM call in flight: {whole:.1%} "
              f"(includes loading and running the QC embedding models)")
        print(f"pipeline_overhead_share_llm_stage={llm_stage:.4f}")


if __name__ == "__main__":
    main()
