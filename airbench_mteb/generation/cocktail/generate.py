"""A resumable co*cktail run: check the input and the journal, rewrite what is missing, write the folder.

Resumable exactly like the AIR-Bench pipeline: each finished rewrite is a journal record
(``OUT/.work/journal.jsonl``) and each LLM answer is in the response cache before it is used,
so a killed run restarts without repeating a call and writes the same files.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from airbench_mteb.generation.cocktail.answers import FAILED
from airbench_mteb.generation.cocktail.config import CocktailConfig
from airbench_mteb.generation.cocktail.corpus import read_input
from airbench_mteb.generation.cocktail.output import write_output
from airbench_mteb.generation.cocktail.rewrite import rewrite
from airbench_mteb.generation.cocktail.sampling import sample_corpus
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.generation.store import open_journal
from airbench_mteb.generation.summary import GenerationSummary, LLMUse, published_files


def files_sha256(paths: Sequence[Path]) -> str:
    """One digest of the files' bytes in order: the journaled identity of the input."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


class CocktailRun:
    """Input, sample and journal are checked on creation, before any LLM is loaded or called."""

    def __init__(self, config: CocktailConfig, out: str | Path) -> None:
        self.config = config
        self.out = Path(out)
        self.data = read_input(config.corpus)
        self.sample = sample_corpus(self.data.corpus, self.data.qrels, max_docs=config.max_docs, seed=config.seed,
                                    min_words=config.min_words, max_words=config.max_words)
        if not self.sample.ids:
            raise GenerationError(f"no document of {config.corpus} has {config.min_words}-{config.max_words} words")
        self.journal = open_journal(self.out)
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

    def _check_llms(self, clients: Mapping[str, LLMClient]) -> None:
        """A source's rewrites come from one LLM: same endpoint, served model and model file as journaled."""
        for source in self.config.sources:
            self.journal.pin("llm", source.name, dict(clients[source.name].backend.identity),
                             f"source {source.name!r} was made by another LLM; give the new LLM another name")

    async def _rewrite_all(self, clients: Mapping[str, LLMClient], concurrency: int, show_progress: bool) -> None:
        c = self.config
        pending = [(s, doc_id) for doc_id in self.sample.ids for s in c.sources
                   if self.journal.get("rewrite", f"{s.name}/{doc_id}") is None]
        total = len(self.sample.ids) * len(c.sources)
        work = iter(pending)
        with tqdm(total=total, initial=total - len(pending), desc="rewrites", unit="doc",
                  disable=not show_progress) as bar:
            async def worker() -> None:
                for source, doc_id in work:
                    try:
                        record = await rewrite(clients[source.name], source, self.data.corpus[doc_id].text, c, doc_id)
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
            workers = max(1, concurrency) * len({id(client) for client in clients.values()})
            await asyncio.gather(*(worker() for _ in range(workers)))

    def _record(self, source: str, doc_id: str) -> dict[str, Any]:
        journaled = self.journal.get("rewrite", f"{source}/{doc_id}")
        if journaled is not None:
            return journaled
        return {"status": FAILED, "reason": self.failures[(source, doc_id)]}

    async def run(self, clients: Mapping[str, LLMClient], concurrency: int = 4, *,
                  show_progress: bool = True) -> GenerationSummary:
        """Rewrite what the journal lacks and write the folder; ``clients`` maps source names to LLM clients
        (sources with one endpoint share one), ``concurrency`` is each client's limit of calls in flight.
        The summary counts each source's rewrite outcomes."""
        missing = [s.name for s in self.config.sources if s.name not in clients]
        if missing:
            raise GenerationError(f"no LLM client for sources {missing}")
        self._check_llms(clients)
        await self._rewrite_all(clients, concurrency, show_progress)
        records = {s.name: [self._record(s.name, doc_id) for doc_id in self.sample.ids] for s in self.config.sources}
        manifest = write_output(self.out, self.config, self.data, self.sample, records, clients)
        return GenerationSummary(family="co*cktail", root=self.out, files=published_files(self.out),
                                 counts={name: source["outcomes"] for name, source in manifest["sources"].items()},
                                 llm=LLMUse.of(client.account for client in clients.values()))

    def close(self) -> None:
        self.journal.close()


async def generate(config: CocktailConfig, out: str | Path, clients: Mapping[str, LLMClient], *,
                   concurrency: int = 4, show_progress: bool = True) -> GenerationSummary:
    """Rewrite, write ``out`` (see :meth:`CocktailRun.run`)."""
    run = CocktailRun(config, out)
    try:
        return await run.run(clients, concurrency, show_progress=show_progress)
    finally:
        run.close()
