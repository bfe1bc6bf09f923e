"""`airbench-mteb generate cocktail` and `generate cocktail-report`: the co*cktail generator's command line.

Each ``--llm`` is ``NAME [BACKEND] [model=M] [base-url=U] [temperature=T]``; what a spec omits comes
from the shared LLM options (``commands/llm_arguments.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airbench_mteb.commands.llm_arguments import add_llm_arguments, client_from_args, llm_options
from airbench_mteb.generation import checks
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.factory import BACKENDS, LLMOptions, check_base_url

if TYPE_CHECKING:
    from airbench_mteb.generation.cocktail import CocktailRun, LLMSource
    from airbench_mteb.generation.llm import LLMClient
    from airbench_mteb.generation.summary import GenerationSummary

Endpoint = tuple[str, str | None, str | None]  # (backend, model, base URL): sources on one endpoint share a client

_SPEC_KEYS = {"model": "model", "base-url": "base_url", "base_url": "base_url", "temperature": "temperature"}


def parse_llm_spec(values: Sequence[str], *, backend: str, model: str | None, base_url: str | None,
                   temperature: float) -> LLMSource:
    """``NAME [BACKEND] [model=M] [base-url=U] [temperature=T]``; what is not given comes from the defaults
    (the ``--backend``/``--model``/``--base-url``/``--temperature`` options)."""
    from airbench_mteb.generation.cocktail import LLMSource

    if not values:
        raise GenerationError("--llm needs a source name")
    name, *rest = values
    settings: dict[str, Any] = {"backend": backend, "model": model, "base_url": base_url, "temperature": temperature}
    if rest and "=" not in rest[0]:
        settings["backend"], *rest = rest
    for item in rest:
        key, sep, value = item.partition("=")
        if not sep or key not in _SPEC_KEYS:
            raise GenerationError(f"--llm {name}: cannot read {item!r}; use model=..., base-url=..., temperature=...")
        settings[_SPEC_KEYS[key]] = value
    try:
        settings["temperature"] = float(settings["temperature"])
    except ValueError:
        raise GenerationError(f"--llm {name}: temperature must be a number, got {settings['temperature']!r}") from None
    if settings["backend"] not in BACKENDS:
        raise GenerationError(f"--llm {name}: unknown backend {settings['backend']!r}; use one of {', '.join(BACKENDS)}")
    if settings["backend"] == "openai" and not settings["model"]:
        raise GenerationError(f"--llm {name}: the openai backend needs model=NAME (or --model)")
    if settings["base_url"]:
        check_base_url(settings["base_url"], f"--llm {name}: base-url")  # the spec is journaled and published
    return LLMSource(name=name, **settings)


def _endpoint_options(args: argparse.Namespace, sources: Sequence[LLMSource]) -> dict[Endpoint, LLMOptions]:
    """The checked LLM options of every endpoint (sources on one endpoint share its client)."""
    return {s.endpoint: llm_options(args, backend=s.backend, model=s.model, base_url=s.base_url) for s in sources}


async def _run_with_clients(args: argparse.Namespace, cocktail_run: CocktailRun, sources: Sequence[LLMSource],
                            endpoints: Mapping[Endpoint, LLMOptions]) -> GenerationSummary:
    """One client per endpoint; each endpoint's account is printed and written to ``run_account.json``, also
    when the run fails."""
    by_endpoint: dict[Endpoint, LLMClient] = {}
    try:
        for endpoint, options in endpoints.items():
            by_endpoint[endpoint] = client_from_args(options, args)
        return await cocktail_run.run({s.name: by_endpoint[s.endpoint] for s in sources}, args.concurrency,
                                      show_progress=True)
    finally:
        from airbench_mteb.generation.cocktail.output import write_run_account

        cocktail_run.close()
        accounts: dict[str, dict[str, Any]] = {}
        for endpoint, client in by_endpoint.items():
            names = ",".join(s.name for s in sources if s.endpoint == endpoint)
            label = f"{names} ({endpoint[0]}:{client.backend.model})"
            accounts[label] = client.account.as_dict()
            await client.aclose()
            print(f"LLM {label}: {client.account.summary()}")
        if accounts:
            write_run_account(args.out, accounts)


def _cocktail(args: argparse.Namespace) -> int:
    from airbench_mteb.generation.cocktail import CocktailConfig, CocktailRun
    from airbench_mteb.generation.cocktail.answers import FAILED

    # every option and --llm spec, then the input, is checked before an LLM is loaded
    checks.out_folder("--out", args.out)
    sources = tuple(parse_llm_spec(values, backend=args.backend, model=args.model, base_url=args.base_url,
                                   temperature=args.temperature) for values in args.llm)
    config = CocktailConfig(corpus=str(args.corpus), sources=sources, max_docs=args.max_docs, seed=args.seed,
                            min_words=args.min_words, max_words=args.max_words, max_tokens=args.max_tokens,
                            require_marker=args.require_marker, max_failures=args.max_failures,
                            language=args.language)
    endpoints = _endpoint_options(args, sources)
    cocktail_run = CocktailRun(config, args.out)
    summary = asyncio.run(_run_with_clients(args, cocktail_run, sources, endpoints))
    print(summary.describe())
    print(f"card: {args.out / 'README.md'}")
    failed = sum(outcomes.get(FAILED, 0) for outcomes in summary.counts.values())
    if failed:
        print(f"airbench-mteb generate cocktail: {failed} rewrites failed and hold the human text; run the same "
              "command again to retry them", file=sys.stderr)
        return 1
    return 0


def register_generator(generators: argparse._SubParsersAction) -> None:
    parser = generators.add_parser(
        "cocktail", help="a co*cktail-style mixed human/LLM corpus from a BEIR folder, one source per LLM",
        description="Rewrite every document of a BEIR folder with each LLM (co*cktail's prompt, no query "
                    "information). Each --llm is NAME [BACKEND] [model=M] [base-url=U] [temperature=T], e.g. "
                    "--llm smollm2-tmp0.2 llamacpp  --llm gpt-4o-mini-tmp0.2 openai model=gpt-4o-mini; what a "
                    "spec omits comes from --backend/--model/--base-url/--temperature.")
    parser.add_argument("--corpus", type=Path, required=True,
                        help="BEIR folder: corpus.jsonl (or corpus/human.jsonl), queries.jsonl, qrels/<split>.tsv")
    parser.add_argument("--out", type=Path, required=True, help="output folder (also the resume point)")
    parser.add_argument("--llm", nargs="+", action="append", metavar="SPEC", required=True,
                        help="one LLM source: NAME [BACKEND] [model=M] [base-url=U] [temperature=T] (repeatable)")
    parser.add_argument("--max-docs", type=int, default=None,
                        help="keep every judged document and top up with random ones to this many (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-words", type=int, default=10)
    parser.add_argument("--max-words", type=int, default=2000)
    parser.add_argument("--require-marker", action="store_true",
                        help="treat an answer without 'Rewritten Text:' as unparsed (retried, then kept human)")
    parser.add_argument("--max-failures", type=int, default=20, help="failed LLM calls before the run stops")
    parser.add_argument("--language", default="en", help="ISO 639-1 code of the corpus, for the dataset card")
    add_llm_arguments(parser)
    parser.set_defaults(func=_cocktail, temperature=0.2, max_tokens=4096)


def _report_summary(figures: Mapping[str, Any]) -> None:
    from airbench_mteb.generation.cocktail.quality_output import plus_minus

    for source, entry in figures["sources"].items():
        print(f"{source}: rewritten {entry['rewritten']}/{figures['documents']}, cosine matching "
              f"{plus_minus(entry.get('cosine_matching'))} vs random {plus_minus(entry.get('cosine_random'))}, "
              f"Jaccard {plus_minus(entry.get('jaccard'))}")


def _cocktail_report(args: argparse.Namespace) -> int:
    from airbench_mteb.generation.cocktail.quality import compute_quality
    from airbench_mteb.generation.cocktail.quality_output import write_plot_data, write_report
    from airbench_mteb.report.cocktail_quality import draw_quality_plots

    models = {"models": args.model} if args.model else {}  # else the report's default
    result = compute_quality(args.data, **models, embedder=args.embedder, seed=args.seed)
    write_plot_data(args.out, result)
    plots = draw_quality_plots(result.plot_data(), Path(args.out))
    _report_summary(write_report(args.out, result, plots))
    print(f"report written to {Path(args.out) / 'report.md'}")
    return 0


def register_report(generators: argparse._SubParsersAction) -> None:
    parser = generators.add_parser("cocktail-report", help="quality report of a `generate cocktail` folder "
                                                           "(lengths, term overlap, cosine, each corpus alone)")
    parser.add_argument("--data", type=Path, required=True, help="the folder `generate cocktail` wrote")
    parser.add_argument("--out", type=Path, required=True, help="report folder (report.md, report.json, PNGs)")
    parser.add_argument("--model", action="append",
                        help="retrieval model for the each-corpus-alone table (repeatable; default: the bundled "
                             "airbench-mteb/all-MiniLM-L6-v2)")
    parser.add_argument("--embedder", default="minilm", help="embeddings for the cosine figures: minilm, e5 or a "
                                                             "sentence-transformers folder")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random pairs")
    parser.set_defaults(func=_cocktail_report)
