"""Generate an AIR-Bench dataset when one machine is not enough.

The LLM work goes to an OpenAI-compatible serving cluster (e.g. vLLM:
``vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000``), and candidate generation runs over JSONL
shards with Ray Data (``pip install 'ray[data]'``). Quality control needs the whole corpus and
runs once at the end, on one machine, against the same server.

    python examples/generate_airbench_ray_vllm.py corpus.jsonl out/ --base-url http://vllm-host:8000/v1 \
        --model Qwen/Qwen2.5-7B-Instruct --domain law --language en --num-queries 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import ray

from airbench_mteb.generation.airbench import AirBenchConfig, AirBenchPipeline
from airbench_mteb.generation.airbench.candidates import CandidateSettings
from airbench_mteb.generation.airbench.generate import generate_candidates, plan_items, prepare_corpus
from airbench_mteb.generation.airbench.records import Candidate
from airbench_mteb.generation.llm import LLMClient, ResponseCache
from airbench_mteb.generation.llm.openai_backend import OpenAICompatibleBackend
from airbench_mteb.generation.store import llm_cache_path, work_folder


def make_client(args: argparse.Namespace, cache: Path) -> LLMClient:
    # vLLM takes OpenAI's json_schema response format; the API key (if any) comes from the environment
    backend = OpenAICompatibleBackend(args.model, args.base_url, structured_output="json_schema")
    return LLMClient(backend, ResponseCache(cache), concurrency=args.concurrency)


class CandidateShard:
    """A Ray Data actor: one LLM client (and response cache) per worker, many batches of rows each."""

    def __init__(self, args: argparse.Namespace, config: AirBenchConfig) -> None:
        self.config = config
        self.client = make_client(args, work_folder(args.out) / f"cache-{ray.get_runtime_context().get_actor_id()}.sqlite")

    def __call__(self, batch: dict) -> dict:
        rows = [dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)]
        records = asyncio.run(generate_candidates(rows, self.config, self.client))
        # JSON text: a dropped candidate lacks the fields it never reached, which a table column cannot say
        return {"record": [json.dumps(r.as_json()) for r in records]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("out")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--domain", required=True)
    parser.add_argument("--language", required=True)
    parser.add_argument("--num-queries", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=32, help="LLM calls in flight per worker")
    args = parser.parse_args()

    config = AirBenchConfig(corpus=args.corpus, domain=args.domain, language=args.language,
                            num_queries=args.num_queries,
                            candidates=CandidateSettings(language=args.language))
    corpus = prepare_corpus(config)
    rows = plan_items(config, corpus)  # seeded: the same rows whatever the number of workers

    candidates = (ray.data.from_items(rows)
                  .map_batches(CandidateShard, fn_constructor_args=(args, config), batch_size=64,
                               concurrency=args.workers)
                  .take_all())
    records = sorted((Candidate.from_json(json.loads(row["record"])) for row in candidates), key=lambda r: r.index)

    client = make_client(args, llm_cache_path(args.out))
    pipeline = AirBenchPipeline(config, client, args.out)
    try:
        asyncio.run(pipeline.finish(corpus, records))
    finally:
        pipeline.close()
    print(f"dataset written to {args.out}")


if __name__ == "__main__":
    main()
