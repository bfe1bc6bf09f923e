"""The LLM options shared by every LLM-driven command, and the client they describe."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airbench_mteb.generation.llm import LLMClient
    from airbench_mteb.generation.llm.factory import LLMOptions


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


def llm_options(args: argparse.Namespace, **changes: Any) -> LLMOptions:
    """The LLM options of the command line (``changes`` replace some: a co*cktail source's own endpoint),
    checked before anything is read or loaded."""
    from airbench_mteb.generation.llm.factory import LLMOptions

    given = {"backend": args.backend, "model": args.model, "base_url": args.base_url,
             "structured_output": args.structured_output, "concurrency": args.concurrency, "timeout": args.timeout,
             "max_retries": args.max_retries, "price_in": args.price_in, "price_out": args.price_out,
             "threads": args.threads}
    return LLMOptions(**{**given, **changes})


def client_from_args(options: LLMOptions, args: argparse.Namespace) -> LLMClient:
    """The client the options describe, its answers cached in ``--cache`` (default: the run's work folder)."""
    from airbench_mteb.generation.store import llm_cache_path

    return options.client(args.cache or llm_cache_path(args.out))
