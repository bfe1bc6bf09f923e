"""An IRSC build end to end: records -> sampled query -> paragraph pairs per setting and task -> folder.

Per language and query type the build samples ``per_task`` pairs with a seed; every paragraph of a
language, sampled or not, goes into that language's ONE unified corpus, which all five tasks
search. Queries the source does not give are derived: a fragment of the paragraph (``part``), its
keywords (``keyword``), or written by the LLM (``query``, ``summary``). The cross-lingual settings
translate sampled queries with the LLM: C2E asks English paragraphs in Chinese, E2C asks Chinese
paragraphs in English. Without an LLM those parts are skipped and the manifest and the returned
summary say so.

Resumable like the other generators: each LLM-made query is a journal record
(``<out>/.work/journal.jsonl``) once finished, so a killed build restarts without asking the LLM
again. The same records, seed and sizes give byte-identical files.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable
from pathlib import Path

from tqdm.auto import tqdm

from airbench_mteb.catalog.irsc import CROSS_SETTINGS, LANGUAGES, LLM_TASKS, SETTINGS, TASKS
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.irsc import output
from airbench_mteb.generation.irsc.config import BuildConfig
from airbench_mteb.generation.irsc.llm_queries import LLMWriter
from airbench_mteb.generation.irsc.records import QueryPair, SourceRecord
from airbench_mteb.generation.irsc.sampling import SourcePool, pairs_to_translate, sample_pairs, seeded_rng, trim_corpus
from airbench_mteb.generation.irsc.text import paragraph_fragment, paragraph_keywords
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.generation.store import open_journal
from airbench_mteb.generation.summary import GenerationSummary, LLMUse, published_files


class _Build:
    """One build's pairs per setting and task, and what it skipped and why (the corpus is trimmed last)."""

    def __init__(self, pool: SourcePool, config: BuildConfig, llm: LLMWriter | None, show_progress: bool) -> None:
        self.pool = pool
        self.config = config
        self.llm = llm
        self.show_progress = show_progress
        self.pairs: dict[str, dict[str, list[QueryPair]]] = {s: {} for s in SETTINGS}
        self.skipped: list[dict[str, str]] = []

    def _skip(self, setting: str, task: str, reason: str) -> None:
        self.skipped.append({"setting": setting, "task": task, "reason": reason})

    async def _sample_task(self, lang: str, task: str) -> None:
        candidates = self.pool.candidates.get((lang, task), {})
        if not candidates:
            reason = ("the sources have no titles in this language" if task == "title"
                      else "the sources give no paragraphs for this task")
            self._skip(lang, task, reason)
            return
        if self.llm is None and task in LLM_TASKS and all(q is None for q in candidates.values()):
            self._skip(lang, task, "needs an LLM backend (--llm) to write the queries")
            return
        # one stream for the order and the fragments cut from the paragraphs, as the order is drawn first
        rng = seeded_rng(self.config.seed, lang, task)
        with tqdm(total=min(self.config.per_task, len(candidates)), desc=f"IRSC {lang}/{task}", unit="pair",
                  leave=False, disable=not self.show_progress) as bar:
            chosen = await sample_pairs(candidates, self.config.per_task, rng,
                                        lambda batch: self._queries(lang, task, batch, rng), bar.update)
        if not chosen:
            self._skip(lang, task, "no usable query could be made from the sources")
            return
        self.pairs[lang][task] = [QueryPair(f"{lang}-{task}-{i:05d}", q, d) for i, (d, q) in enumerate(chosen)]

    async def _queries(self, lang: str, task: str, doc_ids: list[str], rng: random.Random) -> list[str | None]:
        given = self.pool.candidates[(lang, task)]
        texts = [self.pool.corpus[lang][d] for d in doc_ids]
        if task == "part":
            return [given[d] or paragraph_fragment(t, lang, rng) for d, t in zip(doc_ids, texts, strict=True)]
        if task == "keyword":
            return [given[d] or paragraph_keywords(t, lang) for d, t in zip(doc_ids, texts, strict=True)]
        out = [given[d] for d in doc_ids]
        missing = [i for i, d in enumerate(doc_ids) if given[d] is None]
        if task in LLM_TASKS and missing and self.llm is not None:
            written = await self.llm.write(task, [texts[i] for i in missing], lang)
            for i, text in zip(missing, written, strict=True):
                out[i] = text
        return out

    async def _cross_lingual(self, setting: str) -> None:
        source_lang, target_lang = CROSS_SETTINGS[setting]
        for task in TASKS:
            pairs = self.pairs[source_lang].get(task)
            if not pairs:
                self._skip(setting, task, f"no {source_lang} queries to translate")
                continue
            if self.llm is None:
                self._skip(setting, task, "needs an LLM backend (--llm) to translate the queries")
                continue
            chosen = pairs_to_translate(pairs, self.config.cross_per_task, seeded_rng(self.config.seed, setting, task))
            translated = await self.llm.write("translate", [p.query for p in chosen], target_lang)
            out = [QueryPair(f"{setting}-{task}-{i:05d}", text, p.doc_id, p.qid)
                   for i, (p, text) in enumerate((p, t) for p, t in zip(chosen, translated, strict=True) if t)]
            if out:
                self.pairs[setting][task] = out
            else:
                self._skip(setting, task, "the LLM gave no usable translation")

    def _trim_corpus(self) -> None:
        if self.config.corpus_limit is None:
            return
        targets = {p.doc_id for tasks in self.pairs.values() for pairs in tasks.values() for p in pairs}
        for lang in LANGUAGES:
            self.pool.corpus[lang] = trim_corpus(self.pool.corpus[lang], targets, self.config.corpus_limit,
                                                 seeded_rng(self.config.seed, "corpus", lang))

    async def run(self) -> None:
        for lang in LANGUAGES:
            for task in TASKS:
                await self._sample_task(lang, task)
        for task in TASKS:
            mixed = self.pairs["en"].get(task, []) + self.pairs["zh"].get(task, [])
            if not all(self.pool.corpus[lang] for lang in LANGUAGES):  # it searches every language's corpus
                self._skip("mixed", task, "the sources have no paragraphs in " + " and ".join(
                    lang for lang in LANGUAGES if not self.pool.corpus[lang]))
            elif mixed:
                self.pairs["mixed"][task] = mixed
            else:
                self._skip("mixed", task, "built in neither language")
        for setting in CROSS_SETTINGS:
            await self._cross_lingual(setting)
        self._trim_corpus()


def read_sources(records: Iterable[SourceRecord]) -> SourcePool:
    """Every record read (a command does it before loading an LLM: a bad source file costs nothing)."""
    pool = SourcePool.from_records(records)
    if not any(pool.corpus.values()):
        raise GenerationError("the sources gave no paragraphs")
    return pool


async def generate(config: BuildConfig, out: str | Path, client: LLMClient | None = None, *,
                   sources: Iterable[SourceRecord] | SourcePool, show_progress: bool = True) -> GenerationSummary:
    """Build the IRSC dataset folder ``<out>/irsc`` (replaced as a whole only once complete) from source
    records (or their :func:`read_sources` pool); without ``client`` the parts that need an LLM are skipped
    and listed."""
    out = Path(out)
    pool = sources if isinstance(sources, SourcePool) else read_sources(sources)
    llm = None
    if client is not None:
        params = LLMParams(temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed)
        llm = LLMWriter(client, open_journal(out), params)
    build = _Build(pool, config, llm, show_progress)
    try:
        await build.run()
    finally:
        if llm is not None:
            llm.journal.close()
    built = {s: {t: len(p) for t, p in tasks.items()} for s, tasks in build.pairs.items() if tasks}
    if not built:
        raise GenerationError("nothing could be built: " + "; ".join(
            f"{s['setting']}/{s['task']}: {s['reason']}" for s in build.skipped))
    manifest = output.manifest(config, pool.sources, pool.corpus, built, build.skipped,
                               llm.name if llm else None)
    root = output.publish(out, lambda folder: output.write_folder(folder, pool.corpus, build.pairs, manifest))
    sizes = {lang: len(pool.corpus[lang]) for lang in LANGUAGES if pool.corpus[lang]}
    return GenerationSummary(family="IRSC", root=root, files=published_files(root),
                             counts={"corpus": sizes, **built}, skipped=tuple(build.skipped),
                             llm=None if client is None else LLMUse.of([client.account]))


def build_irsc(records: Iterable[SourceRecord] | SourcePool, out: str | Path, config: BuildConfig | None = None,
               client: LLMClient | None = None, *, show_progress: bool = True) -> GenerationSummary:
    """:func:`generate` in an event loop of its own, for callers outside one (an offline build, a
    script); a command that also closes its LLM client awaits :func:`generate` in its own loop."""
    return asyncio.run(generate(config or BuildConfig(), out, client, sources=records, show_progress=show_progress))
