"""Building the IRSC benchmark (seed 004, section 3.2) from paired source data.

Input: :class:`SourceRecord` s -- a paragraph in English or Chinese, optionally with the query
type it serves and its query. Per language and query type the builder samples ``per_task``
query -> paragraph pairs with a seed; every paragraph of a language, sampled or not, goes into
that language's ONE unified corpus, which all five tasks search. Queries the source does not
give are derived: a fragment of the paragraph (``part``), the paragraph's keywords from a real
keyword extractor (``keyword``: YAKE for English, jieba's TF-IDF for Chinese), or an LLM
(``query``: a question the paragraph answers; ``summary``: a one-sentence summary). The
cross-lingual settings translate sampled queries with the LLM: C2E asks English paragraphs in
Chinese, E2C asks Chinese paragraphs in English. Without an LLM those parts are skipped and the
manifest and the returned summary say so.

Output layout (read by ``airbench_mteb.tasks.irsc``)::

    <out>/irsc/manifest.json                    what was built, with which seed and sizes, what was skipped
    <out>/irsc/README.md                        dataset card
    <out>/irsc/corpus/{en,zh}.jsonl             the unified corpus per language: {"id", "text"}
    <out>/irsc/<setting>/<task>/queries.jsonl   {"id", "text"[, "source_id"]}
    <out>/irsc/<setting>/<task>/qrels/test.tsv  query-id, corpus-id, score (one relevant paragraph)

with ``setting`` in en, zh, mixed (both languages' queries over both corpora), c2e (Chinese
queries, English corpus) and e2c (English queries, Chinese corpus), and ``task`` in query,
title, part, keyword, summary. Corpus documents carry no title, so the title task cannot be
answered by matching a document's own title. The same records, seed and sizes give
byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tqdm.auto import tqdm

from airbench_mteb.catalog.irsc import CROSS_SETTINGS, LANGUAGE_NAMES, LANGUAGES, LLM_TASKS, SETTINGS, TASKS, corpus_languages
from airbench_mteb.data.files import atomic_write, write_jsonl, write_tsv
from airbench_mteb.generation.errors import GenerationError

FORMAT_VERSION = 1

# Many prompts in, one completion (or None when the backend gave up on that prompt) out, in order.
BatchComplete = Callable[[list[str]], list["str | None"]]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceRecord:
    """One paragraph of a source and, optionally, the IRSC query type it serves.

    ``task`` None: the paragraph only joins the unified corpus. ``query`` None with a task: the
    builder derives the query (``part`` and ``keyword`` always, ``query`` and ``summary`` with an
    LLM; a ``title`` must be given).
    """

    lang: str
    paragraph: str
    source: str
    task: str | None = None
    query: str | None = None

    def __post_init__(self) -> None:
        if self.lang not in LANGUAGES:
            raise GenerationError(f"{self.source}: language {self.lang!r} is not one of {LANGUAGES}")
        if self.task is not None and self.task not in TASKS:
            raise GenerationError(f"{self.source}: task {self.task!r} is not one of {TASKS}")
        if self.task == "title" and not self.query:
            raise GenerationError(f"{self.source}: a title record needs its title as query")
        if not self.paragraph.strip():
            raise GenerationError(f"{self.source}: empty paragraph")


@dataclass(frozen=True)
class BuildConfig:
    per_task: int = 5000          # query -> paragraph pairs per task and language (the paper's size)
    cross_per_task: int = 1000    # translated queries per task in C2E and E2C (the paper's size)
    seed: int = 0
    corpus_limit: int | None = None  # at most this many paragraphs per language (all sampled targets kept)

    def __post_init__(self) -> None:
        if self.per_task < 1 or self.cross_per_task < 1:
            raise GenerationError("per_task and cross_per_task must be at least 1")
        if self.corpus_limit is not None and self.corpus_limit < 1:
            raise GenerationError("corpus_limit must be at least 1")


@dataclass
class BuildSummary:
    root: Path
    corpus_sizes: dict[str, int]
    built: dict[str, dict[str, int]]  # setting -> task -> number of queries
    skipped: list[dict[str, str]] = field(default_factory=list)  # {setting, task, reason}

    def describe(self) -> str:
        lines = [f"IRSC benchmark written to {self.root}"]
        lines += [f"  corpus {lang}: {size} paragraphs" for lang, size in self.corpus_sizes.items()]
        for setting, tasks in self.built.items():
            lines.append(f"  {setting}: " + ", ".join(f"{task} {count}" for task, count in tasks.items()))
        lines += [f"  skipped {s['setting']}/{s['task']}: {s['reason']}" for s in self.skipped]
        return "\n".join(lines)


@dataclass(frozen=True)
class _Pair:
    qid: str
    query: str
    doc_id: str
    source_id: str | None = None


def doc_id(lang: str, text: str) -> str:
    """Content-derived id: the same paragraph gets the same id in every build."""
    return f"{lang}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]}"


# ---------------------------------------------------------------- queries derived without an LLM

_EN_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])")
_ZH_SENTENCE = re.compile(r"[^。！？]+[。！？]*[”’」』）]*")
_EN_CLAUSE_END = re.compile(r"(?<=[,;:])\s+")
_ZH_CLAUSE = re.compile(r"[^，；：、。！？]+[，；：、。！？]*[”’」』）]*")


def split_sentences(text: str, lang: str) -> list[str]:
    if lang == "zh":
        return [s for s in (m.group().strip() for m in _ZH_SENTENCE.finditer(text)) if s]
    return [s for s in (p.strip() for p in _EN_SENTENCE_END.split(text)) if s]


def _split_clauses(text: str, lang: str) -> list[str]:
    if lang == "zh":
        return [s for s in (m.group().strip() for m in _ZH_CLAUSE.finditer(text)) if s]
    return [s for s in (p.strip() for p in _EN_CLAUSE_END.split(text)) if s]


def paragraph_fragment(text: str, lang: str, rng: random.Random) -> str | None:
    """A contiguous part of the paragraph, about a quarter to a half of it, never all of it.

    Cut at sentence boundaries when the paragraph has three or more sentences, else at clause
    boundaries, else a window of words (English) or characters (Chinese). None when the
    paragraph is too short to have a proper part.
    """
    joiner = "" if lang == "zh" else " "
    for units in (split_sentences(text, lang), _split_clauses(text, lang)):
        if len(units) >= 3:
            size = min(len(units) - 1, max(1, round(len(units) * rng.uniform(0.25, 0.5))))
            start = rng.randrange(len(units) - size + 1)
            return joiner.join(units[start:start + size])
    tokens: Sequence[str] = text if lang == "zh" else text.split()
    size = max(10 if lang == "zh" else 5, round(len(tokens) * rng.uniform(0.3, 0.5)))
    if size >= len(tokens):
        return None
    start = rng.randrange(len(tokens) - size + 1)
    return joiner.join(tokens[start:start + size]).strip() or None


@cache
def _yake_extractor():
    try:
        import yake
    except ModuleNotFoundError:
        raise GenerationError("English keyword queries need `pip install yake`") from None
    return yake.KeywordExtractor(lan="en", n=2, top=5, dedupLim=0.7)


def paragraph_keywords(text: str, lang: str, top: int = 5) -> str | None:
    """The paragraph's top keywords joined by spaces (YAKE for English, jieba TF-IDF for Chinese).

    None when fewer than two keywords come out: one word is too weak to call a keyword query.
    """
    if lang == "zh":
        import jieba
        import jieba.analyse

        jieba.setLogLevel(logging.WARNING)
        words = jieba.analyse.extract_tags(text, topK=top)
    else:
        phrases = [phrase for phrase, _ in _yake_extractor().extract_keywords(text)][:top]
        # YAKE's two-word phrases overlap ("Red Army", "Army paratroops"): keep each word once
        words = list(dict.fromkeys(word for phrase in phrases for word in phrase.split()))
    return " ".join(words) if len(words) >= 2 else None


# ---------------------------------------------------------------- queries written by an LLM

def llm_prompt(task: str, text: str, lang: str) -> str:
    language = LANGUAGE_NAMES[lang]
    if task == "query":
        return (f"Write one question, in {language}, that the following passage answers. "
                f"Reply with the question only.\n\nPassage: {text}")
    if task == "summary":
        return (f"Summarize the following passage in one sentence, in {language}. "
                f"Reply with the summary only.\n\nPassage: {text}")
    if task == "translate":
        return f"Translate the following text into {language}. Reply with the translation only.\n\nText: {text}"
    raise GenerationError(f"no LLM prompt for {task!r}")


_LABEL = re.compile(r"^(question|summary|translation|answer|query|问题|摘要|翻译)\s*[:：]\s*", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def clean_llm_text(reply: str | None, lang: str, source: str) -> str | None:
    """The first non-empty line of a reply without labels or quotes; None if it is unusable.

    Unusable: empty, not in the wanted language (no CJK for Chinese, mostly CJK for English),
    or a copy of / longer than the text it was made from.
    """
    if not reply:
        return None
    line = next((x.strip() for x in reply.splitlines() if x.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'“”‘’「」").strip()
    if not line or line == source.strip() or len(line) > len(source) * 2 + 20:
        return None
    cjk_share = len(_CJK.findall(line)) / len(line)
    if (lang == "zh" and cjk_share == 0) or (lang == "en" and cjk_share > 0.3):
        return None
    return line


# ---------------------------------------------------------------- the builder

class _Builder:
    def __init__(self, records: Iterable[SourceRecord], config: BuildConfig, llm: BatchComplete | None) -> None:
        self.config = config
        self.llm = llm
        self.corpus: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
        # (lang, task) -> {doc id: given query or None}, first record per paragraph wins
        self.candidates: dict[tuple[str, str], dict[str, str | None]] = {}
        self.sources: dict[str, int] = {}
        for record in records:
            text = record.paragraph.strip()
            did = doc_id(record.lang, text)
            self.corpus[record.lang][did] = text
            self.sources[record.source] = self.sources.get(record.source, 0) + 1
            if record.task is not None:
                given = record.query.strip() if record.query else None
                self.candidates.setdefault((record.lang, record.task), {}).setdefault(did, given)
        self.pairs: dict[str, dict[str, list[_Pair]]] = {s: {} for s in SETTINGS}
        self.skipped: list[dict[str, str]] = []

    def _rng(self, *parts: str) -> random.Random:
        return random.Random("/".join(["irsc", str(self.config.seed), *parts]))

    def _skip(self, setting: str, task: str, reason: str) -> None:
        self.skipped.append({"setting": setting, "task": task, "reason": reason})

    def _sample_task(self, lang: str, task: str) -> None:
        candidates = self.candidates.get((lang, task), {})
        if not candidates:
            reason = ("the sources have no titles in this language" if task == "title"
                      else "the sources give no paragraphs for this task")
            self._skip(lang, task, reason)
            return
        if self.llm is None and task in LLM_TASKS and all(q is None for q in candidates.values()):
            self._skip(lang, task, "needs an LLM backend (--llm) to write the queries")
            return
        order = sorted(candidates)
        rng = self._rng(lang, task)
        rng.shuffle(order)
        chosen: list[tuple[str, str]] = []
        seen_queries: set[str] = set()
        position = 0
        progress = tqdm(total=min(self.config.per_task, len(order)), desc=f"IRSC {lang}/{task}", unit="pair",
                        leave=False)
        while len(chosen) < self.config.per_task and position < len(order):
            batch = order[position:position + self.config.per_task - len(chosen)]
            position += len(batch)
            for did, query in zip(batch, self._queries(lang, task, batch, rng), strict=True):
                if query and query not in seen_queries:
                    seen_queries.add(query)
                    chosen.append((did, query))
                    progress.update(1)
        progress.close()
        if not chosen:
            self._skip(lang, task, "no usable query could be made from the sources")
            return
        self.pairs[lang][task] = [_Pair(f"{lang}-{task}-{i:05d}", q, d) for i, (d, q) in enumerate(chosen)]

    def _queries(self, lang: str, task: str, doc_ids: list[str], rng: random.Random) -> list[str | None]:
        given = self.candidates[(lang, task)]
        texts = [self.corpus[lang][d] for d in doc_ids]
        if task == "part":
            return [given[d] or paragraph_fragment(t, lang, rng) for d, t in zip(doc_ids, texts, strict=True)]
        if task == "keyword":
            return [given[d] or paragraph_keywords(t, lang) for d, t in zip(doc_ids, texts, strict=True)]
        if task in LLM_TASKS:
            missing = [i for i, d in enumerate(doc_ids) if given[d] is None]
            written = self._ask(task, [texts[i] for i in missing], lang, [texts[i] for i in missing]) if missing else []
            out = [given[d] for d in doc_ids]
            for i, text in zip(missing, written, strict=True):
                out[i] = text
            return out
        return [given[d] for d in doc_ids]

    def _ask(self, task: str, texts: list[str], lang: str, sources: list[str]) -> list[str | None]:
        if self.llm is None:
            return [None] * len(texts)
        replies = self.llm([llm_prompt(task, t, lang) for t in texts])
        if len(replies) != len(texts):
            raise GenerationError(f"the LLM backend returned {len(replies)} replies for {len(texts)} prompts")
        return [clean_llm_text(r, lang, s) for r, s in zip(replies, sources, strict=True)]

    def _cross_lingual(self, setting: str) -> None:
        source_lang, target_lang = CROSS_SETTINGS[setting]
        for task in TASKS:
            pairs = self.pairs[source_lang].get(task)
            if not pairs:
                self._skip(setting, task, f"no {source_lang} queries to translate")
                continue
            if self.llm is None:
                self._skip(setting, task, "needs an LLM backend (--llm) to translate the queries")
                continue
            picked = sorted(self._rng(setting, task).sample(range(len(pairs)),
                                                            min(self.config.cross_per_task, len(pairs))))
            chosen = [pairs[i] for i in picked]
            translated = self._ask("translate", [p.query for p in chosen], target_lang, [p.query for p in chosen])
            out = [_Pair(f"{setting}-{task}-{i:05d}", text, p.doc_id, p.qid)
                   for i, (p, text) in enumerate((p, t) for p, t in zip(chosen, translated, strict=True) if t)]
            if out:
                self.pairs[setting][task] = out
            else:
                self._skip(setting, task, "the LLM gave no usable translation")

    def _trim_corpus(self) -> None:
        """Keep every paragraph some query points at, fill up to the limit with a seeded sample."""
        if self.config.corpus_limit is None:
            return
        targets = {p.doc_id for tasks in self.pairs.values() for pairs in tasks.values() for p in pairs}
        for lang in LANGUAGES:
            others = sorted(d for d in self.corpus[lang] if d not in targets)
            room = max(0, self.config.corpus_limit - sum(1 for d in self.corpus[lang] if d in targets))
            kept = set(self._rng("corpus", lang).sample(others, min(room, len(others))))
            self.corpus[lang] = {d: t for d, t in self.corpus[lang].items() if d in targets or d in kept}

    def build(self) -> None:
        for lang in LANGUAGES:
            for task in TASKS:
                self._sample_task(lang, task)
        for task in TASKS:
            mixed = self.pairs["en"].get(task, []) + self.pairs["zh"].get(task, [])
            if mixed:
                self.pairs["mixed"][task] = mixed
            else:
                self._skip("mixed", task, "built in neither language")
        for setting in CROSS_SETTINGS:
            self._cross_lingual(setting)
        self._trim_corpus()


def build_irsc(records: Iterable[SourceRecord], out: str | Path, config: BuildConfig | None = None,
               llm: BatchComplete | None = None, llm_name: str | None = None) -> BuildSummary:
    """Build the IRSC dataset folder ``<out>/irsc`` (replaced as a whole only once complete)."""
    config = config or BuildConfig()
    builder = _Builder(records, config, llm)
    if not any(builder.corpus.values()):
        raise GenerationError("the sources gave no paragraphs")
    builder.build()
    built = {s: {t: len(p) for t, p in tasks.items()} for s, tasks in builder.pairs.items() if tasks}
    if not built:
        raise GenerationError("nothing could be built: " + "; ".join(
            f"{s['setting']}/{s['task']}: {s['reason']}" for s in builder.skipped))
    root = Path(out) / "irsc"
    staging = Path(out) / f".irsc.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _write(builder, staging, config, built, llm_name)
        _replace_dir(staging, root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    sizes = {lang: len(builder.corpus[lang]) for lang in LANGUAGES if builder.corpus[lang]}
    return BuildSummary(root, sizes, built, builder.skipped)


def _replace_dir(new: Path, target: Path) -> None:
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


def _write(builder: _Builder, root: Path, config: BuildConfig, built: dict[str, dict[str, int]],
           llm_name: str | None) -> None:
    for lang in LANGUAGES:
        if builder.corpus[lang]:
            write_jsonl(root / "corpus" / f"{lang}.jsonl",
                        ({"id": d, "text": t} for d, t in sorted(builder.corpus[lang].items())))
    for setting, tasks in builder.pairs.items():
        for task, pairs in tasks.items():
            folder = root / setting / task
            write_jsonl(folder / "queries.jsonl",
                        ({"id": p.qid, "text": p.query, **({"source_id": p.source_id} if p.source_id else {})}
                         for p in pairs))
            write_tsv(folder / "qrels" / "test.tsv", ["query-id", "corpus-id", "score"],
                      ((p.qid, p.doc_id, 1) for p in pairs))
    manifest = {
        "format": FORMAT_VERSION,
        "seed": config.seed,
        "per_task": config.per_task,
        "cross_per_task": config.cross_per_task,
        "corpus_limit": config.corpus_limit,
        "llm": llm_name,
        "sources": dict(sorted(builder.sources.items())),
        "corpus": {lang: {"file": f"corpus/{lang}.jsonl", "documents": len(builder.corpus[lang])}
                   for lang in LANGUAGES if builder.corpus[lang]},
        "settings": {s: {"corpus": list(corpus_languages(s)), "tasks": tasks} for s, tasks in built.items()},
        "skipped": builder.skipped,
    }
    with atomic_write(root / "manifest.json") as handle:
        handle.write(json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    with atomic_write(root / "README.md") as handle:
        handle.write(_card(manifest))


def _card(manifest: dict) -> str:
    rows = [f"| {s} | {', '.join(info['corpus'])} | " + ", ".join(f"{t} {n}" for t, n in info["tasks"].items()) + " |"
            for s, info in manifest["settings"].items()]
    skipped = [f"- {s['setting']}/{s['task']}: {s['reason']}" for s in manifest["skipped"]] or ["- nothing"]
    sources = [f"- {name}: {count} records" for name, count in manifest["sources"].items()]
    return "\n".join([
        "---",
        "task_categories: [text-retrieval]",
        "language: [en, zh]",
        "pretty_name: IRSC (built by airbench-mteb build-irsc)",
        "---",
        "# IRSC benchmark data",
        "",
        "Five query types (query, title, part of paragraph, keyword, summary) -> paragraph, every setting "
        "searching one unified corpus per language (Lin et al., IRSC, 2024). Built with "
        f"seed {manifest['seed']}, up to {manifest['per_task']} pairs per task and language, "
        f"up to {manifest['cross_per_task']} translated queries per cross-lingual task; LLM: {manifest['llm'] or 'none'}.",
        "",
        "| setting | corpus | queries per task |",
        "|---|---|---|",
        *rows,
        "",
        "## Skipped",
        *skipped,
        "",
        "## Sources",
        *sources,
        "",
    ])
