"""The LLM options shared by every LLM-driven command, and the client they describe."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airbench_mteb.generation.llm import LLMClient


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM (the API key is read from AIRBENCH_MTEB_LLM_API_KEY or OPENAI_API_KEY)")
    group.add_argument("--backend", choices=("llamacpp", "openai"), default="llamacpp",
                       help="llamacpp: in-process GGUF (default: the bundled SmolLM2-135M-Instruct); "
                            "openai: any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, ...)")
    group.add_argument("--model", help="GGUF path (llamacpp) or served model name (openai)")
    group.add_argument("--base-url", help="endpoint of the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    group.add_argument("--structured-output", default="json_object_schema",
                       choices=("json_object_schema", "json_schema", "guided_json", "none"),
                       help="how the server takes a JSON schema (llama.cpp server: json_object_schema; "
                            "OpenAI/vLLM: json_schema)")
    group.add_argument("--concurrency", type=int, default=4, help="LLM calls in flight at once")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per LLM call before a retry")
    group.add_argument("--max-retries", type=int, default=6)
    group.add_argument("--temperature", type=float, default=0.7)
    group.add_argument("--max-tokens", type=int, default=256, help="per generation step")
    group.add_argument("--price-in", type=float, default=0.0, help="cost per million prompt tokens")
    group.add_argument("--price-out", type=float, default=0.0, help="cost per million completion tokens")
    group.add_argument("--cache", type=Path, help="response cache file (default: OUT/.work/llm_cache.sqlite)")
    group.add_argument("--threads", type=int, default=1, help="llama.cpp threads (llamacpp backend)")


def client_from_args(args: argparse.Namespace, out: Path) -> LLMClient:
    from airbench_mteb.generation.llm import (
        Account,
        LLMClient,
        ResponseCache,
        make_backend,
    )

    backend = make_backend(args.backend, model=args.model, base_url=args.base_url, timeout=args.timeout,
                           structured_output=args.structured_output, n_threads=args.threads)
    cache = ResponseCache(args.cache or out / ".work" / "llm_cache.sqlite")
    return LLMClient(backend, cache, concurrency=args.concurrency, max_retries=args.max_retries,
                     account=Account(price_in=args.price_in, price_out=args.price_out))
