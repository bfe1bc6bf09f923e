"""Cocktail-style mixed-source corpora from any BEIR corpus and any LLMs (seed ``001``, section 3.1, A.2).

Every kept document is rewritten by every LLM source with the paper's post-instruction prompt
(``cocktail_prompts/rewrite.txt``: the original text, then "Please rewrite the above given text.
Your answer must be formatted as follows: Rewritten Text: <your rewritten text>."), without any
query information. The output is a multi-source folder the source-bias tasks read directly::

    OUT/corpus/human.jsonl, OUT/corpus/<source>.jsonl   same ``_id`` set, titles copied
    OUT/queries.jsonl, OUT/qrels/<split>.tsv            restricted to the kept documents
    OUT/cocktail.json, OUT/README.md                    how it was made (sources, seed, counts, LLM account)

Sampling (A.2): documents of 10-2,000 words are kept; with ``max_docs`` and a larger corpus, every
judged document (any split, any grade) is kept and random others top it up to ``max_docs``.
Refusals (A.2) keep the human text, flagged ``"rewrite": "refused"`` in the row's ``metadata``,
so they can be removed later; so do answers that never parsed and calls that failed.

Resumable exactly like the AIR-Bench pipeline: each finished rewrite is a journal record
(``OUT/.work/journal.jsonl``) and each LLM answer is in the response cache before it is used,
so a killed run restarts without repeating a call and writes the same files.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from tqdm.auto import tqdm

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, write_jsonl, write_tsv
from airbench_mteb.data.qrels import read_qrels_tsv
from airbench_mteb.data.retrieval_data import Document, Qrels, read_corpus_jsonl, read_queries_jsonl
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import Completion, LLMParams, Messages
from airbench_mteb.generation.llm.client import LLMClient, ParseError
from airbench_mteb.generation.llm.credentials import refuse_credentials
from airbench_mteb.generation.store import Journal

HUMAN = "human"
MANIFEST = "cocktail.json"
WORK_DIR = ".work"
# rewrite outcomes: only "rewritten" rows hold LLM text, the others keep the human text
REWRITTEN, REFUSED, UNPARSED, FAILED = "rewritten", "refused", "unparsed", "failed"
_REFUSAL_WINDOW = 300  # refusals open the answer; later "I cannot" is content


# --- the prompt and the answer -----------------------------------------------------------------

@cache
def prompt_template() -> Template:
    text = resources.files(__package__).joinpath("cocktail_prompts", "rewrite.txt").read_text(encoding="utf-8")
    return Template(text)


def prompt_sha256() -> str:
    return hashlib.sha256(prompt_template().template.encode("utf-8")).hexdigest()[:16]


def rewrite_messages(text: str) -> Messages:
    return [{"role": "user", "content": prompt_template().substitute(text=text).strip()}]


_MARKER = re.compile(r"rewritten\s+text\s*:", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^<\s*your rewritten text\s*>\.?\s*", re.IGNORECASE)
# small models echo the prompt's own label before the text; it is no part of a rewrite
_ECHOED_LABEL = re.compile(r"^original\s+text\s*:\s*", re.IGNORECASE)
# a first line like "Sure! Here is the rewritten text:" before an answer without the marker
_PREAMBLE = re.compile(r"^(?:sure|certainly|of course|okay|ok|here)\b[^\n]{0,120}:\s*\n", re.IGNORECASE)
_CAN_NOT = r"(?:cannot|can ?not|can't|won't|will not|am unable to|am not able to|must (?:respectfully )?decline)"
# each rule says "this opening is a refusal"; a rule that also fits the original's opening says nothing
_REFUSAL_RULES = (
    re.compile(rf"^\W*(?:i'?m sorry|i am sorry|sorry|i apologi[sz]e|unfortunately)\b.{{0,200}}\b{_CAN_NOT}",
               re.IGNORECASE | re.DOTALL),
    re.compile(rf"^\W*(?:i {_CAN_NOT}|as an ai\b|i'?m (?:just )?an ai\b|i am (?:just )?an ai\b)", re.IGNORECASE),
    re.compile(r"fulfil+ your request|(?:cannot|can't|unable to|not able to) (?:rewrite|assist|comply|help with)"
               r"|ethical guidelines|(?:within|against) my programming|as an ai\b|ai language model"
               r"|i'?m (?:just )?an ai\b", re.IGNORECASE),
)


def is_refusal(answer: str, original: str) -> bool:
    """True when the opening of ``answer`` is a refusal ("I apologize, but I cannot...", "As an AI...",
    "I'm just an AI, it's not within my programming...") that the original's opening does not share."""
    head, original_head = answer.strip()[:_REFUSAL_WINDOW], original.strip()[:_REFUSAL_WINDOW]
    return any(rule.search(head) and not rule.search(original_head) for rule in _REFUSAL_RULES)


@dataclass(frozen=True)
class Answer:
    status: str  # REWRITTEN or REFUSED
    text: str  # the rewrite ("" when refused)
    marker: bool  # the answer used the requested "Rewritten Text:" format
    truncated: bool  # the answer used the whole token budget
    excerpt: str = ""  # the refusal's opening, for the record


def parse_answer(completion: Completion, original: str, *, max_tokens: int, require_marker: bool) -> Answer:
    """The rewrite after the last "Rewritten Text:" (or the whole answer minus a "Sure, here is...:" line
    unless ``require_marker``), or a refusal.

    Raises:
        ParseError: no marker while ``require_marker``, or nothing after it.
    """
    answer = completion.text.strip()
    truncated = completion.tokens_out >= max_tokens
    matches = list(_MARKER.finditer(answer))
    body = answer[matches[-1].end():] if matches else _PREAMBLE.sub("", answer, count=1)
    body = _ECHOED_LABEL.sub("", _PLACEHOLDER.sub("", body.strip().lstrip("*").strip()))
    if len(body) > 1 and body[0] == "<" and body[-1] == ">":
        body = body[1:-1].strip()
    if is_refusal(answer, original) or (matches and is_refusal(body, original)):
        return Answer(REFUSED, "", bool(matches), truncated, excerpt=answer[:200])
    if not matches and require_marker:
        raise ParseError("the answer has no 'Rewritten Text:'")
    if not body:
        raise ParseError("empty rewrite")
    return Answer(REWRITTEN, body, bool(matches), truncated)


# --- LLM sources ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class LLMSource:
    """One LLM that rewrites the corpus; ``name`` is its corpus file stem and evaluation setting."""

    name: str
    backend: str = "llamacpp"
    model: str | None = None  # GGUF path (llamacpp, default: the bundled SmolLM2) or served model name
    base_url: str | None = None
    temperature: float = 0.2  # the co*cktail corpora were written at 0.2 (llama-2-7b-chat-tmp0.2)

    @property
    def endpoint(self) -> tuple[str, str | None, str | None]:
        """Sources with the same endpoint share one client (one loaded model, one concurrency limit)."""
        return (self.backend, self.model, self.base_url)


_SPEC_KEYS = {"model": "model", "base-url": "base_url", "base_url": "base_url", "temperature": "temperature"}


def parse_llm_spec(values: Sequence[str], *, backend: str, model: str | None, base_url: str | None,
                   temperature: float) -> LLMSource:
    """``NAME [BACKEND] [model=M] [base-url=U] [temperature=T]``; what is not given comes from the defaults
    (the ``--backend``/``--model``/``--base-url``/``--temperature`` options)."""
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
    if settings["base_url"]:
        refuse_credentials(settings["base_url"])  # the spec is journaled and published
    return LLMSource(name=name, **settings)


def check_source_names(sources: Sequence[LLMSource]) -> None:
    """Names must be valid, distinct evaluation settings besides ``human`` (the task's own rules)."""
    from airbench_mteb.tasks.cocktail import parse_sources

    if not sources:
        raise GenerationError("give at least one --llm NAME ...")
    try:
        parse_sources([HUMAN, *(s.name for s in sources)])
    except ValueError as error:
        raise GenerationError(f"LLM source names: {error}") from None


# --- the input corpus and its sample -------------------------------------------------------------

@dataclass
class InputCorpus:
    folder: Path
    corpus: dict[str, Document]
    queries: dict[str, str]
    qrels: dict[str, Qrels]  # split -> qrels, judgments on unknown documents already set aside
    files: list[Path]
    unknown_judgments: int = 0


def corpus_path(folder: Path) -> Path:
    """``corpus.jsonl`` (BEIR) or, for a co*cktail folder, its ``corpus/human.jsonl``."""
    for path in (folder / "corpus.jsonl", folder / "corpus" / f"{HUMAN}.jsonl"):
        if path.is_file():
            return path
    raise DatasetError("no corpus.jsonl (BEIR layout) or corpus/human.jsonl (co*cktail layout)", path=folder)


def read_input(folder: str | Path) -> InputCorpus:
    """A BEIR folder; qrels naming documents absent from the corpus are counted, not kept (BEIR corpora
    that were cleaned after judging have some)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError("corpus folder not found", path=folder)
    path = corpus_path(folder)
    corpus = read_corpus_jsonl(path, id_key="_id")
    queries = read_queries_jsonl(folder / "queries.jsonl", id_key="_id")
    qrels_files = sorted((folder / "qrels").glob("*.tsv"))
    if not qrels_files:
        raise DatasetError("no qrels/<split>.tsv", path=folder / "qrels")
    qrels: dict[str, Qrels] = {}
    unknown = 0
    for qrels_path in qrels_files:
        split: Qrels = {}
        for qid, docs in read_qrels_tsv(qrels_path).items():
            if qid not in queries:
                raise DatasetError(f"qrels name query {qid!r}, which is not in queries.jsonl", path=qrels_path,
                                   item_id=qid)
            kept = {doc_id: grade for doc_id, grade in docs.items() if doc_id in corpus}
            unknown += len(docs) - len(kept)
            if kept:
                split[qid] = kept
        if not split:
            raise DatasetError("no judgment names a document of the corpus, so this split has no judged query",
                               path=qrels_path)
        qrels[qrels_path.stem] = split
    return InputCorpus(folder, corpus, queries, qrels, [path, folder / "queries.jsonl", *qrels_files], unknown)


def word_count(text: str) -> int:
    return len(text.split())


@dataclass
class Sample:
    ids: list[str]  # kept documents, in corpus order
    stats: dict[str, int] = field(default_factory=dict)


def sample_corpus(corpus: Mapping[str, Document], qrels: Mapping[str, Qrels], *, max_docs: int | None, seed: int,
                  min_words: int = 10, max_words: int = 2000) -> Sample:
    """Seed ``001`` A.2: keep documents of ``min_words``-``max_words`` words; when more than ``max_docs``
    remain, keep every judged one (any split, any grade) and top up with a seeded random choice of the
    others to ``max_docs``. ``max_docs=None`` keeps the whole filtered corpus."""
    lengths = {doc_id: word_count(doc.text) for doc_id, doc in corpus.items()}
    filtered = [doc_id for doc_id in corpus if min_words <= lengths[doc_id] <= max_words]
    stats = {"input": len(corpus), "too_short": sum(n < min_words for n in lengths.values()),
             "too_long": sum(n > max_words for n in lengths.values())}
    if max_docs is None or len(filtered) <= max_docs:
        return Sample(filtered, {**stats, "judged": 0, "random": 0, "kept": len(filtered)})
    judged = {doc_id for split in qrels.values() for docs in split.values() for doc_id in docs}
    keep = {doc_id for doc_id in filtered if doc_id in judged}
    others = [doc_id for doc_id in filtered if doc_id not in judged]
    extra = random.Random(f"cocktail-sample:{seed}").sample(others, max(0, max_docs - len(keep)))
    keep.update(extra)
    ids = [doc_id for doc_id in filtered if doc_id in keep]
    return Sample(ids, {**stats, "judged": len(ids) - len(extra), "random": len(extra), "kept": len(ids)})


# --- the run ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CocktailConfig:
    corpus: str
    sources: tuple[LLMSource, ...]
    max_docs: int | None = None
    seed: int = 0
    min_words: int = 10
    max_words: int = 2000
    max_tokens: int = 4096  # cap; each document gets 64 + 3 tokens per word of it, up to this
    require_marker: bool = False  # an answer without "Rewritten Text:" is retried, then kept human
    max_failures: int = 20  # failed calls (after retries) before the run stops

    def sampling(self) -> dict[str, Any]:
        """What decides the documents and prompts; a journal made under other values cannot be resumed."""
        return {"seed": self.seed, "max_docs": self.max_docs, "min_words": self.min_words,
                "max_words": self.max_words, "max_tokens": self.max_tokens, "require_marker": self.require_marker,
                "prompt_sha256": prompt_sha256()}


def token_budget(text: str, cap: int) -> int:
    return min(cap, 64 + 3 * word_count(text))


def call_seed(seed: int, doc_id: str) -> int:
    """The same seed for a document in every source and every run: outputs never depend on order."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{doc_id}".encode()).digest()[:4], "big") % 2**31


def files_sha256(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


async def rewrite(client: LLMClient, source: LLMSource, text: str, config: CocktailConfig, doc_id: str) -> dict[str, Any]:
    """The journal record of one (source, document): outcome, rewrite, flags."""
    budget = token_budget(text, config.max_tokens)
    params = LLMParams(temperature=source.temperature, max_tokens=budget, seed=call_seed(config.seed, doc_id))
    parsed = await client.parsed(
        rewrite_messages(text), params,
        lambda c: parse_answer(c, text, max_tokens=budget, require_marker=config.require_marker),
        f"rewrite:{source.name}")
    if not parsed.ok:
        return {"status": UNPARSED, "reason": parsed.reason, "attempts": parsed.attempts}
    answer = parsed.value
    record = {"status": answer.status, "marker": answer.marker, "truncated": answer.truncated,
              "attempts": parsed.attempts}
    if answer.status == REWRITTEN:
        record["text"] = answer.text
    else:
        record["reason"] = answer.excerpt
    return record


class CocktailRun:
    """Input, sample and journal are checked on creation, before any LLM is loaded or called."""

    def __init__(self, config: CocktailConfig, out: str | Path) -> None:
        check_source_names(config.sources)
        self.config = config
        self.out = Path(out)
        self.clients: Mapping[str, LLMClient] = {}
        self.data = read_input(config.corpus)
        self.sample = sample_corpus(self.data.corpus, self.data.qrels, max_docs=config.max_docs, seed=config.seed,
                                    min_words=config.min_words, max_words=config.max_words)
        if not self.sample.ids:
            raise GenerationError(f"no document of {config.corpus} has {config.min_words}-{config.max_words} words")
        self.journal = Journal(self.out / WORK_DIR / "journal.jsonl")
        self._check_journal()
        self.failures: dict[tuple[str, str], str] = {}

    def _check_journal(self) -> None:
        """One output folder, one input and sampling; sources may be added later, never redefined."""
        run = {**self.config.sampling(), "input_sha256": files_sha256(self.data.files)}
        recorded = self.journal.get("run", "sampling")
        if recorded is None:
            self.journal.put("run", "sampling", settings=run)
        elif recorded["settings"] != run:
            raise GenerationError(f"{self.journal.path} belongs to a run with another input or sampling; use another "
                                  f"--out, or the same input and settings to resume it")
        for source in self.config.sources:
            spec = asdict(source)
            known = self.journal.get("source", source.name)
            if known is None:
                self.journal.put("source", source.name, spec=spec)
            elif known["spec"] != spec:
                raise GenerationError(f"source {source.name!r} was made with {known['spec']} in {self.out}; "
                                      f"give the new LLM another name")

    async def _rewrite_all(self, concurrency: int) -> None:
        c = self.config
        pending = [(s, doc_id) for doc_id in self.sample.ids for s in c.sources
                   if self.journal.get("rewrite", f"{s.name}/{doc_id}") is None]
        total = len(self.sample.ids) * len(c.sources)
        work = iter(pending)
        with tqdm(total=total, initial=total - len(pending), desc="rewrites", unit="doc") as bar:
            async def worker() -> None:
                for source, doc_id in work:
                    try:
                        record = await rewrite(self.clients[source.name], source,
                                               self.data.corpus[doc_id].text, c, doc_id)
                    except GenerationError as error:
                        # not journaled: the next run retries it
                        self.failures[(source.name, doc_id)] = str(error)
                        if len(self.failures) >= c.max_failures:
                            raise GenerationError(f"{len(self.failures)} rewrites failed, the last: {error}; "
                                                  "finished rewrites are kept, run again to resume") from None
                    else:
                        self.journal.put("rewrite", f"{source.name}/{doc_id}", **record)
                    bar.update()
            # each client limits its own calls in flight; enough workers keep every client busy
            workers = max(1, concurrency) * len({id(client) for client in self.clients.values()})
            await asyncio.gather(*(worker() for _ in range(workers)))

    def _record(self, source: str, doc_id: str) -> dict[str, Any]:
        journaled = self.journal.get("rewrite", f"{source}/{doc_id}")
        if journaled is not None:
            return journaled
        return {"status": FAILED, "reason": self.failures[(source, doc_id)]}

    def _write(self) -> dict[str, Any]:
        ids, corpus, c = self.sample.ids, self.data.corpus, self.config
        write_jsonl(self.out / "corpus" / f"{HUMAN}.jsonl",
                    ({"_id": i, "title": corpus[i].title, "text": corpus[i].text} for i in ids))
        outcomes: dict[str, Counter[str]] = {}
        flags: dict[str, Counter[str]] = {}
        for source in c.sources:
            rows, tally, flagged = [], Counter(), Counter()
            for doc_id in ids:
                record = self._record(source.name, doc_id)
                tally[record["status"]] += 1
                flagged["without_marker"] += record["status"] == REWRITTEN and not record["marker"]
                flagged["truncated"] += bool(record.get("truncated"))
                metadata = {"rewrite": record["status"], **{k: record[k] for k in ("marker", "truncated", "reason")
                                                             if k in record}}
                rows.append({"_id": doc_id, "title": corpus[doc_id].title,
                             "text": record.get("text") or corpus[doc_id].text, "metadata": metadata})
            write_jsonl(self.out / "corpus" / f"{source.name}.jsonl", rows)
            outcomes[source.name], flags[source.name] = tally, flagged
        kept = set(ids)
        splits = {}
        for split, qrels in self.data.qrels.items():
            lines = [(qid, doc_id, grade) for qid, docs in qrels.items() for doc_id, grade in docs.items()
                     if doc_id in kept]
            if lines:
                write_tsv(self.out / "qrels" / f"{split}.tsv", ["query-id", "corpus-id", "score"], lines)
                splits[split] = {"queries": len({q for q, _, _ in lines}), "judgments": len(lines)}
        judged_queries = {qid for split in self.data.qrels.values() for qid, docs in split.items()
                          if kept.intersection(docs)}
        write_jsonl(self.out / "queries.jsonl",
                    ({"_id": q, "text": t} for q, t in self.data.queries.items() if q in judged_queries))
        manifest = {
            "generator": "airbench-mteb generate cocktail",
            "input": str(self.data.folder), "reference": HUMAN,
            "sources": {s.name: {**asdict(s), "model": s.model or self.clients[s.name].backend.model,
                                 "llm": dict(self.clients[s.name].backend.identity),
                                 "outcomes": dict(outcomes[s.name]), "flags": dict(flags[s.name])}
                        for s in c.sources},
            "sampling": {**c.sampling(), "documents": self.sample.stats,
                         "judgments_on_unknown_documents": self.data.unknown_judgments},
            "splits": splits,
        }
        with atomic_write(self.out / MANIFEST) as handle:
            json.dump(manifest, handle, indent=1, ensure_ascii=False)
        write_card(self.out / "README.md", manifest)
        return manifest

    def _check_llms(self, clients: Mapping[str, LLMClient]) -> None:
        """A source's rewrites come from one LLM: same endpoint, served model and model file as journaled."""
        for source in self.config.sources:
            self.journal.pin("llm", source.name, dict(clients[source.name].backend.identity),
                             f"source {source.name!r} was made by another LLM; give the new LLM another name")

    async def run(self, clients: Mapping[str, LLMClient], concurrency: int = 4) -> dict[str, Any]:
        """Rewrite what the journal lacks and write the folder; ``clients`` maps source names to LLM clients
        (sources with one endpoint share one), ``concurrency`` is each client's limit of calls in flight."""
        missing = [s.name for s in self.config.sources if s.name not in clients]
        if missing:
            raise GenerationError(f"no LLM client for sources {missing}")
        self._check_llms(clients)
        self.clients = clients
        await self._rewrite_all(concurrency)
        return self._write()

    def close(self) -> None:
        self.journal.close()


def write_card(path: Path, manifest: dict[str, Any]) -> None:
    sources = manifest["sources"]
    docs = manifest["sampling"]["documents"]
    lines = [
        f"# co*cktail-style dataset from {manifest['input']}",
        "",
        f"Made with `{manifest['generator']}`: {docs['kept']} human-written documents ({docs['input']} in the input; "
        f"{docs['too_short']} under {manifest['sampling']['min_words']} words and {docs['too_long']} over "
        f"{manifest['sampling']['max_words']} left out) and one LLM rewrite of each per source, with the "
        "co*cktail post-instruction prompt and no query information.",
        "",
        "| source | backend | model | temperature | rewritten | refused | unparsed | failed | without marker "
        "| truncated |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(f"| {name} | {s['backend']} | {s['model']} | {s['temperature']} | {s['outcomes'].get(REWRITTEN, 0)} | "
          f"{s['outcomes'].get(REFUSED, 0)} | {s['outcomes'].get(UNPARSED, 0)} | {s['outcomes'].get(FAILED, 0)} | "
          f"{s['flags']['without_marker']} | {s['flags']['truncated']} |" for name, s in sources.items()),
        "",
        "Refused, unparsed and failed rewrites keep the human text; each row's `metadata.rewrite` says which.",
        f"Evaluate: `airbench-mteb bias -m MODEL --data-dir THIS_FOLDER --sources {HUMAN} {' '.join(sources)}`.",
        "",
    ]
    with atomic_write(path) as handle:
        handle.write("\n".join(lines))


async def generate_cocktail(config: CocktailConfig, clients: Mapping[str, LLMClient], out: str | Path, *,
                            concurrency: int = 4) -> dict[str, Any]:
    """Rewrite, write ``out``; returns the manifest (see :meth:`CocktailRun.run`)."""
    run = CocktailRun(config, out)
    try:
        return await run.run(clients, concurrency)
    finally:
        run.close()


# --- command line ----------------------------------------------------------------------------------

def _command(args: argparse.Namespace) -> int:
    from airbench_mteb.commands.llm_arguments import client_from_args

    sources = tuple(parse_llm_spec(values, backend=args.backend, model=args.model, base_url=args.base_url,
                                   temperature=args.temperature) for values in args.llm)
    config = CocktailConfig(corpus=str(args.corpus), sources=sources, max_docs=args.max_docs, seed=args.seed,
                            min_words=args.min_words, max_words=args.max_words, max_tokens=args.max_tokens,
                            require_marker=args.require_marker, max_failures=args.max_failures)
    cocktail_run = CocktailRun(config, args.out)  # bad input fails here, before a model is loaded

    async def run() -> dict[str, Any]:
        by_endpoint: dict[tuple[str, str | None, str | None], LLMClient] = {}
        try:
            for source in sources:
                if source.endpoint not in by_endpoint:
                    endpoint_args = argparse.Namespace(**{**vars(args), "backend": source.backend,
                                                          "model": source.model, "base_url": source.base_url})
                    by_endpoint[source.endpoint] = client_from_args(endpoint_args, args.out)
            return await cocktail_run.run({s.name: by_endpoint[s.endpoint] for s in sources}, args.concurrency)
        finally:
            cocktail_run.close()
            accounts = {}
            for endpoint, client in by_endpoint.items():
                names = ",".join(s.name for s in sources if s.endpoint == endpoint)
                label = f"{names} ({endpoint[0]}:{client.backend.model})"
                accounts[label] = client.account.as_dict()
                await client.aclose()
                print(f"LLM {label}: {client.account.summary()}")
            if accounts:
                with atomic_write(args.out / "run_account.json") as handle:
                    json.dump(accounts, handle, indent=1)

    manifest = asyncio.run(run())
    print(f"dataset written to {args.out} (card: {args.out / 'README.md'})")
    failed = sum(s["outcomes"].get(FAILED, 0) for s in manifest["sources"].values())
    if failed:
        print(f"airbench-mteb generate cocktail: {failed} rewrites failed and hold the human text; run the same "
              "command again to retry them", file=sys.stderr)
        return 1
    return 0


def register_generator(generators: argparse._SubParsersAction) -> None:
    from airbench_mteb.commands.llm_arguments import add_llm_arguments

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
    add_llm_arguments(parser)
    parser.set_defaults(func=_command, temperature=0.2, max_tokens=4096)
