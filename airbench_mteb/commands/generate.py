"""`airbench-mteb generate <generator>`: build a benchmark with an LLM.

Each generator is a sub-command of ``generate``. A generator module exposes
``register_generator(generate_subparsers)``; add its "module:function" to ``GENERATORS``. The
LLM options and the client they describe are in ``commands/llm_arguments.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.commands.llm_arguments import add_llm_arguments, client_from_args, llm_options

if TYPE_CHECKING:
    from airbench_mteb.generation.airbench import AirBenchConfig
    from airbench_mteb.generation.summary import GenerationSummary

GENERATORS = (
    "airbench_mteb.commands.generate:register_airbench",
    "airbench_mteb.commands.generate_cocktail:register_generator",
    "airbench_mteb.commands.generate_cocktail:register_report",
    "airbench_mteb.commands.generate_irsc:register_generator",
)


def _airbench_config(args: argparse.Namespace) -> AirBenchConfig:
    from airbench_mteb.generation.airbench import AirBenchConfig
    from airbench_mteb.generation.airbench.candidates import CandidateSettings
    from airbench_mteb.generation.airbench.qc import QCSettings

    return AirBenchConfig(
        corpus=str(args.corpus), domain=args.domain, language=args.language, task_type=args.task_type,
        dataset=args.dataset, version=args.version, num_queries=args.num_queries, seed=args.seed,
        rewrites=args.rewrites, min_length=args.min_length, max_length=args.max_length,
        candidates=CandidateSettings(task_type=args.task_type, language=args.language, temperature=args.temperature,
                                     max_tokens=args.max_tokens, hard_negatives=(args.min_negatives, args.max_negatives),
                                     hard_negative_chars=args.hard_negative_chars, document_chars=args.document_chars),
        qc=QCSettings(recall_depth=args.recall_depth, positive_levels=tuple(args.judge_positive_levels)),
        recall_encoder=args.recall_encoder, rerankers=tuple(spec.strip() for spec in args.rerankers.split(",")),
        source_name=args.source_name or Path(args.corpus).name, source_url=args.source_url,
        source_license=args.source_license, release_date=args.release_date)


def _check_recall_encoder(name: str) -> None:
    """A bundled encoder, a model mteb knows or a local model folder: else refused before any LLM call."""
    from airbench_mteb.errors import UnknownNameError
    from airbench_mteb.generation.shared_models import BUNDLED
    from airbench_mteb.names import model_argument

    if name and name not in BUNDLED:
        try:
            model_argument(name)
        except UnknownNameError as error:
            raise UnknownNameError(f"--recall-encoder: {error}") from None


def _airbench(args: argparse.Namespace) -> int:
    from airbench_mteb.generation import checks
    from airbench_mteb.generation.airbench import generate, prepare_corpus
    from airbench_mteb.generation.shared_models import ModelPlacement

    # every option, then the corpus, is checked before an LLM is loaded
    checks.out_folder("--out", args.out)
    config = _airbench_config(args)
    _check_recall_encoder(config.recall_encoder)
    placement = ModelPlacement(device=args.device, batch_size=args.qc_batch_size, fp16=args.fp16)
    options = llm_options(args)
    corpus = prepare_corpus(config)

    async def run() -> GenerationSummary:
        client = client_from_args(options, args)
        try:
            return await generate(config, args.out, client, placement=placement, corpus=corpus, show_progress=True)
        finally:
            await client.aclose()
            print(f"LLM: {client.account.summary()}")

    summary = asyncio.run(run())
    out = summary.root
    print(summary.describe())
    print(f"card: {out / 'README.md'}; use --data-dir {out} to evaluate it")
    if not summary.total("queries"):
        print("airbench-mteb generate airbench: no query survived quality control; see "
              f"{out / 'qc_decisions.jsonl'} and {out / 'candidates.jsonl'}", file=sys.stderr)
        return 1
    return 0


def register_airbench(generators: argparse._SubParsersAction) -> None:
    parser = generators.add_parser("airbench", help="an AIR-Bench QA or Long-Doc dataset from your own corpus")
    parser.add_argument("--corpus", type=Path, required=True,
                        help="QA: .jsonl ({id, text[, title]}) or text with one document per line; "
                             "Long-Doc: one long text file")
    parser.add_argument("--domain", required=True, help="e.g. law, finance, my-domain")
    parser.add_argument("--language", required=True, help="ISO 639-1 code, e.g. en, zh")
    parser.add_argument("--out", type=Path, required=True, help="output folder (also the resume point)")
    parser.add_argument("--task-type", choices=("qa", "long-doc"), default="qa")
    parser.add_argument("--dataset", default="default", help="dataset name within the domain")
    parser.add_argument("--version", default="custom", help="version name in the AIR-Bench layout")
    parser.add_argument("--num-queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rewrites", type=int, default=2, help="rewrite rounds per query")
    parser.add_argument("--min-negatives", type=int, default=3)
    parser.add_argument("--max-negatives", type=int, default=7)
    parser.add_argument("--hard-negative-chars", type=int, default=500)
    parser.add_argument("--document-chars", type=int, default=1500, help="positive document cut in prompts")
    parser.add_argument("--min-length", type=int, default=30, help="QA filter, words (characters for zh/ja/ko)")
    parser.add_argument("--max-length", type=int, default=2000)
    parser.add_argument("--recall-encoder", default="", help="minilm, e5 or a sentence-transformers path "
                                                             "(default: minilm for en, e5 otherwise)")
    parser.add_argument("--recall-depth", type=int, default=1000)
    parser.add_argument("--rerankers", default="minilm,e5",
                        help="comma-separated: minilm, e5, llm, cross-encoder:PATH, flag:PATH, bi-encoder:PATH")
    parser.add_argument("--device", default=None,
                        help="torch device of the recall encoder and rerankers, e.g. cuda:1 (default: the best available)")
    parser.add_argument("--qc-batch-size", type=int, default=64, help="batch size of the recall encoder and rerankers")
    parser.add_argument("--fp16", action="store_true", help="half precision for the recall encoder and rerankers")
    parser.add_argument("--judge-positive-levels", type=int, nargs="+", default=[2, 3],
                        help="judge levels (0-3) counted as relevant")
    parser.add_argument("--source-name", default="")
    parser.add_argument("--source-url", default="")
    parser.add_argument("--source-license", default="unknown")
    parser.add_argument("--release-date", default="", help="the catalog entry's release date, YYYY-MM-DD "
                        "(default: the day the dataset is written)")
    add_llm_arguments(parser)
    parser.set_defaults(func=_airbench)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("generate", help="generate a benchmark dataset with an LLM")
    generators = parser.add_subparsers(dest="generator", required=True)
    for spec in GENERATORS:
        module, _, function = spec.partition(":")
        getattr(importlib.import_module(module), function)(generators)
