"""BM25 baselines as MTEB search models: Lucene-scored Okapi BM25 over language-aware index terms, streamed from Arrow.

``airbench-mteb/bm25`` analyses text as Pyserini's ``--language`` does (:mod:`airbench_mteb.models.lucene_analysis`),
so its numbers are comparable with the AIR-Bench leaderboard's BM25; ``airbench-mteb/bm25-words`` analyses
Chinese, Japanese and Korean into words with real segmenters (:mod:`airbench_mteb.models.segmenters`).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from mteb.models import ModelMeta
from tqdm.auto import tqdm

from airbench_mteb.data.arrow_corpus import id_positions
from airbench_mteb.models import segmenters
from airbench_mteb.models.bm25.build import IndexWriter, StringsWriter
from airbench_mteb.models.bm25.c_allocator import release_freed_memory
from airbench_mteb.models.bm25.format import IndexDamage, IndexHeader
from airbench_mteb.models.bm25.index import BM25Index, TieOrder, best_first, mapped_strings
from airbench_mteb.models.bm25.mapped_pages import release_mapped
from airbench_mteb.models.bm25.store import IndexKey, stored_index
from airbench_mteb.models.bm25.worker_pool import available_cores
from airbench_mteb.models.bm25.workers import analysed_rows, searched
from airbench_mteb.models.lucene_analysis import ISO_639_1, LUCENE_LANGUAGES, analyzer_for

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata

logger = logging.getLogger(__name__)

BM25 = "airbench-mteb/bm25"
BM25_WORDS = "airbench-mteb/bm25-words"
TORCH_FREE_MODELS = (BM25, BM25_WORDS)  # `run` loads neither torch nor sentence-transformers for them
LUCENE, WORDS = "lucene", "words"  # the two analyses
# Bump when tokenisation or scoring changes, so results of different analyses are not mixed.
REVISION = "2"
WORDS_REVISION = "1"
# Anserini's defaults: AIR-Bench reports Pyserini's BM25 (AIR-Bench, arXiv 2412.13102); co*cktail (arXiv 2405.16546) names
# BM25 (Robertson et al., 2009) without parameters.
K1 = 0.9
B = 0.4


Terms = Callable[[str], list[str]]


def analysis_terms(analysis: str, languages: tuple[str, ...]) -> Terms:
    """The index-term function of an analysis (``lucene`` or ``words``) for a subset's languages."""
    if analysis == LUCENE:
        return analyzer_for(languages)
    if analysis == WORDS:
        return segmenters.analyzer(languages).terms
    raise ValueError(f"BM25: unknown analysis {analysis!r}; expected {LUCENE!r} or {WORDS!r}")


@dataclass
class _Index:
    terms: Terms
    doc_ids: pa.LargeStringArray  # corpus order, in one piece (a take from 2,000 chunks took 1 ms per query)
    index: BM25Index
    rebuild: Callable[[IndexDamage], _Index]  # the same index built again, in place of a damaged one


class _ByDocumentId:
    """Anserini's order of documents tied at a cut-off: by id (as Python sorts strings), smallest kept."""

    def __init__(self, doc_ids: pa.LargeStringArray) -> None:
        self._doc_ids = doc_ids

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        return pc.sort_indices(self._doc_ids.take(pa.array(positions, pa.int64()))).to_numpy()


class BM25Search:
    """Okapi BM25 with Lucene's IDF, ``log(1 + (N - df + 0.5) / (df + 0.5))``, and term weight
    ``tf / (tf + k1 * (1 - b + b * dl / avgdl))`` summed over the query terms (repeats count).

    Implements MTEB's ``SearchProtocol``. Terms come from the ``analysis`` (``lucene``: Pyserini's Lucene analyzers;
    ``words``: word segmenters) for the languages of the evaluated subset. The corpus is read in batches (an Arrow
    corpus stays memory-mapped), analysed on ``workers`` cores (default: MTEB's ``num_proc`` where given, else every
    core this process may use): this process and ``workers - 1`` forked ones (1 analyses in this process alone, with
    the same result) into a numpy index (:class:`~airbench_mteb.models.bm25.index.BM25Index`) that scores queries a
    block at a time, the blocks spread the same way where the platform can fork (the workers share the index with
    this process). The ``max_indexes`` most recent indexes are kept, keyed by the corpus content, the analysis and
    the languages, so a corpus shared by splits, subsets, tasks or settings is indexed once. Only documents sharing a term
    with the query are returned (an exact tie at the ``top_k`` cut-off is decided by corpus order);
    ``pyserini_ties=True`` reports their scores as Pyserini's run files do (:func:`pyserini_scores`), which
    reproduces the leaderboard's evaluation exactly but also decides exact ties (identical copies, as in
    co*cktail's mixed corpora) by id, at the cut-off too (the smallest ids of those tied at the ``top_k``-th
    score are kept, as Anserini keeps them). For reranking, every candidate of ``top_ranked`` is scored. An
    index found damaged while searching is reported (:class:`~airbench_mteb.models.bm25.store.BM25IndexWarning`),
    built again and searched again. Top-k search passes over postings that cannot change its result
    (:mod:`~airbench_mteb.models.bm25.prune`: the same documents, scores and order); ``pruning=False`` scores
    every posting instead (to measure what pruning saves).
    """

    def __init__(self, model_name: str = BM25, revision: str | None = None, *, k1: float = K1, b: float = B,
                 max_indexes: int = 4, analysis: str = LUCENE, pyserini_ties: bool = False,
                 workers: int | None = None, device: str | None = None, pruning: bool = True) -> None:
        if not 0 <= k1 < math.inf or not 0 <= b <= 1 or max_indexes < 1 or (workers is not None and workers < 1):
            raise ValueError("BM25 needs a finite k1 >= 0, 0 <= b <= 1, max_indexes >= 1 and workers >= 1; got "
                             f"{k1=}, {b=}, {max_indexes=}, {workers=}")
        analysis_terms(analysis, ())  # fails early on an unknown analysis
        self.analysis = analysis
        self.pyserini_ties = pyserini_ties
        self.pruning = pruning
        self.k1 = float(k1)  # k1=1 and k1=1.0 are one index (its key is their JSON)
        self.b = float(b)
        self.max_indexes = max_indexes
        self.workers = workers
        self.index_builds = 0
        self._indexes: OrderedDict[str, _Index] = OrderedDict()
        self._current: _Index | None = None

    def index(self, corpus: Any, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
              encode_kwargs: Any, num_proc: int | None = None, **kwargs: Any) -> None:
        languages = subset_languages(task_metadata, hf_subset)
        show_progress = _show_progress(encode_kwargs)
        key = IndexKey(_content_key((self.analysis, *languages), corpus),
                       REVISION if self.analysis == LUCENE else WORDS_REVISION, self.k1, self.b)
        if key in self._indexes:
            self._indexes.move_to_end(key)
            logger.info("BM25: reusing the index of this corpus (%d documents)", len(corpus))
        else:
            self._indexes[key] = self._stored(key, languages, corpus, show_progress, self._workers(num_proc))
            while len(self._indexes) > self.max_indexes:
                self._indexes.popitem(last=False)
        self._current = self._indexes[key]

    def search(self, queries: Any, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: Any, top_ranked: dict[str, list[str]] | None = None, num_proc: int | None = None,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        if self._current is None:
            raise RuntimeError("BM25Search.search called before index()")
        arguments = (queries, top_k, top_ranked or {}, num_proc, _show_progress(encode_kwargs))
        try:
            return self._search(self._current, *arguments)
        except IndexDamage as damage:
            key = next(key for key, index in self._indexes.items() if index is self._current)
            self._current = self._indexes[key] = self._current.rebuild(damage)
            return self._search(self._current, *arguments)

    def _search(self, current: _Index, queries: Any, top_k: int, reranked: dict[str, list[str]],
                num_proc: int | None, show_progress: bool) -> dict[str, dict[str, float]]:
        ids, texts = list(queries["id"]), list(queries["text"])
        term_ids = current.index.term_ids_of([current.terms(text) for text in texts])
        tie_order: TieOrder | None = _ByDocumentId(current.doc_ids) if self.pyserini_ties else None
        current.index.pruning = self.pruning
        ranked = searched(current.index, [terms for query_id, terms in zip(ids, term_ids, strict=True)
                                          if query_id not in reranked], top_k, self._workers(num_proc), tie_order)
        candidates = _candidate_positions(current.doc_ids, [reranked[query_id] for query_id in ids
                                                            if query_id in reranked])
        found: list[tuple[np.ndarray, np.ndarray]] = []
        for query_id, terms in tqdm(zip(ids, term_ids, strict=True), total=len(ids), desc="BM25 search", unit="query",
                                    leave=False, disable=not show_progress):
            if query_id in reranked:  # every candidate is scored, sharing a term or not
                positions = next(candidates)
                scores = current.index.scores_of(terms, positions)
                order = best_first(positions, scores, top_k, tie_order)
                found.append((positions[order], scores[order]))
            else:
                found.append(next(ranked))
        results: dict[str, dict[str, float]] = {}
        for query_id, best_ids, (_, best_scores) in zip(ids, _id_lists(current.doc_ids, [b for b, _ in found]), found,
                                                         strict=True):
            if self.pyserini_ties:
                results[query_id] = pyserini_scores(best_ids, best_scores)
            else:
                results[query_id] = dict(zip(best_ids, best_scores.tolist(), strict=True))
        return results

    def _workers(self, num_proc: int | None) -> int:
        """Processes for analysis and search: as given, else MTEB's ``num_proc``, else every core this process may use."""
        return self.workers or num_proc or available_cores()

    def _stored(self, key: IndexKey, languages: tuple[str, ...], corpus: Any, show_progress: bool,
                workers: int) -> _Index:
        """The corpus's index from the store (:mod:`~airbench_mteb.models.bm25.store`), built there if it is not."""
        terms = analysis_terms(self.analysis, languages)

        def opened(damage: IndexDamage | None) -> _Index:
            stored = stored_index(key, lambda folder: self._write(folder, terms, corpus, show_progress, workers),
                                  damage)
            if stored.built:
                self.index_builds += 1
            index = stored.index
            logger.info("BM25: %s %d documents, %d terms, %.1f MB of index", "indexed" if stored.built else "read",
                        index.num_documents, len(index.vocabulary), index.nbytes / 1e6)
            return _Index(terms, stored.doc_ids, index, opened)

        return opened(None)

    def _write(self, folder: Path, terms: Terms, corpus: Any, show_progress: bool, workers: int) -> IndexHeader:
        """The corpus's ids and index files, written into ``folder`` in bounded memory (:mod:`.build`)."""
        with StringsWriter(folder, "doc_ids") as doc_ids:
            for batch in _arrow_batches(corpus):
                doc_ids.append(batch["id"])
        if pc.count_distinct(mapped_strings(folder, "doc_ids", doc_ids.count)).as_py() != doc_ids.count:
            raise ValueError("BM25: the corpus has duplicate document ids")
        release_freed_memory()  # before the analysers fork: what the passes so far freed would be resident in each
        writer = IndexWriter(folder, k1=self.k1, b=self.b, workers=workers)
        with tqdm(total=len(corpus), desc="BM25 index corpus", unit="doc", leave=False,
                  disable=not show_progress) as progress:
            for batch in analysed_rows(terms, _CorpusRows(corpus), _row_ranges(corpus),
                                       min(workers, -(-len(corpus) // _BATCH_ROWS))):
                writer.add(batch)
                progress.update(len(batch.pairs.lengths))
        header = writer.finish()
        release_freed_memory()  # what the build freed would otherwise stay resident beside the mapped index
        return header


_BATCH_ROWS = 4096
# A batch's text in bytes, at most (but one document): what an analyser holds as Python strings at once is about
# 25 times this, so long documents come in batches of a few hundred.
_BATCH_TEXT_BYTES = 1 << 21


def _show_progress(encode_kwargs: Any) -> bool:
    """MTEB's own switch: ``show_progress_bar`` in the encode kwargs (on unless it says otherwise)."""
    return bool((encode_kwargs or {}).get("show_progress_bar", True))


def _row_ranges(corpus: Any) -> Iterator[tuple[int, int]]:
    """The rows of each batch of :func:`_corpus_batches`, as ranges (found from the text columns' offsets: no
    text is read)."""
    start = 0
    for batch in _corpus_batches(corpus):
        yield start, start + batch.num_rows
        start += batch.num_rows


class _CorpusRows:
    """Ranges of the corpus's rows as Arrow tables, read by the process that asks: a forked analyser reads its
    batch itself, so only a range goes through the pipe to it, not the rows' text (pickling the batches took an
    eighth of a build's CPU). A ``datasets.Dataset`` is read through its Arrow format (a selection followed, the
    memory map sliced without a copy where there is none); anything else is converted to one table first. Every
    ``_RELEASE_BYTES`` read, the pages of the corpus files are handed back, as :func:`_arrow_batches` does."""

    def __init__(self, corpus: Any) -> None:
        self._table = corpus.with_format("arrow") if isinstance(corpus, datasets.Dataset) else _as_table(corpus)
        self._files = _cache_files(corpus)
        self._unreleased = 0

    def __call__(self, rows: tuple[int, int]) -> pa.Table:
        if self._unreleased >= _RELEASE_BYTES:  # the batches read before this one are analysed by now
            release_mapped(self._files)
            self._unreleased = 0
        start, stop = rows
        table = self._table[start:stop]
        self._unreleased += table.nbytes
        return table


def _as_table(corpus: Any) -> pa.Table:
    return pa.table({name: corpus[name] for name in corpus.column_names})


def _cache_files(corpus: Any) -> list[str]:
    """The files a ``datasets.Dataset`` is memory-mapped from (none for anything else)."""
    return [entry["filename"] for entry in getattr(corpus, "cache_files", None) or []]


def _arrow_batches(corpus: Any) -> Iterator[pa.RecordBatch]:
    """The corpus as Arrow record batches, read from its memory map (or converted once if it is not Arrow); every
    ``_RELEASE_BYTES`` (32 MiB) read, the pages of the corpus files read so far are handed back
    (:func:`~airbench_mteb.models.bm25.mapped_pages.release_mapped`), so a pass over the corpus does not keep it resident.

    A ``datasets.Dataset`` is read through its own Arrow iterator, which follows a ``select`` or ``filter``
    (an indices mapping over the table) and slices the memory map without a copy where there is none.
    """
    files = _cache_files(corpus)
    unreleased = 0
    for batch in _corpus_batches(corpus):
        yield batch
        unreleased += batch.nbytes
        if unreleased >= _RELEASE_BYTES:
            release_mapped(files)
            unreleased = 0
    release_mapped(files)


_RELEASE_BYTES = 1 << 25


def _corpus_batches(corpus: Any) -> Iterator[pa.RecordBatch]:
    if isinstance(corpus, datasets.Dataset):
        tables: Iterator[pa.Table] = corpus.with_format("arrow").iter(batch_size=_BATCH_ROWS)
    else:
        tables = iter([_as_table(corpus)])
    for table in tables:
        batches = table.to_batches(max_chunksize=_BATCH_ROWS)
        if len(batches) > 1 and table.num_rows < len(batches) * _SMALL_CHUNK_ROWS:
            # a shuffled ``select`` takes its rows one chunk per row: one batch of copied rows, not one-row batches
            batches = table.combine_chunks().to_batches(max_chunksize=_BATCH_ROWS)
        for batch in batches:
            yield from _cut_by_text_bytes(batch)


_SMALL_CHUNK_ROWS = 64


def _cut_by_text_bytes(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """The batch in consecutive slices of at most ``_BATCH_TEXT_BYTES`` of text (a longer document alone)."""
    sizes = np.zeros(batch.num_rows, dtype=np.int64)
    for name in ("title", "text"):
        if name in batch.schema.names:
            sizes += pc.binary_length(pc.cast(batch.column(name), pa.large_string())).fill_null(0).to_numpy()
    ends = np.cumsum(sizes)
    start = 0
    while start < batch.num_rows:
        before = ends[start - 1] if start else 0
        end = max(int(np.searchsorted(ends, before + _BATCH_TEXT_BYTES, side="right")), start + 1)
        yield batch.slice(start, end - start)
        start = end


def _id_lists(doc_ids: pa.LargeStringArray, positions: list[np.ndarray]) -> Iterator[list[str]]:
    """The ids of the documents at each array's positions, one Python string per distinct document: a document in
    many queries' results is one object, not one per hit (2,000 queries of 1,000 hits made 2 M strings, 130 MB)."""
    unique, inverse = np.unique(np.concatenate([np.zeros(0, np.int64), *positions]), return_inverse=True)
    get = doc_ids.take(pa.array(unique, pa.int64())).to_pylist().__getitem__
    start = 0
    for part in positions:
        yield list(map(get, inverse[start:start + len(part)].tolist()))
        start += len(part)


def _candidate_positions(doc_ids: pa.LargeStringArray, wanted: list[list[str]]) -> Iterator[np.ndarray]:
    """Each query's candidates' corpus positions (those in the corpus, ascending), found in one lookup for all
    queries: building the set of the corpus ids is what costs (2.5 s at 8.87 M passages)."""
    found = id_positions(doc_ids, chain.from_iterable(wanted))
    bounds = np.cumsum([0, *map(len, wanted)])
    for start, end in pairwise(bounds):
        part = found[start:end]
        yield np.unique(part[part >= 0])


def subset_languages(task_metadata: TaskMetadata, hf_subset: str) -> tuple[str, ...]:
    """ISO 639-3 codes of the subset's evaluation languages, in declared order."""
    langs = task_metadata.eval_langs
    if isinstance(langs, dict):
        if hf_subset not in langs:
            raise ValueError(f"task {task_metadata.name!r} declares no languages for subset {hf_subset!r}")
        langs = langs[hf_subset]
    return tuple(dict.fromkeys(code.split("-")[0] for code in langs))


def _content_key(labels: tuple[str, ...], corpus: Any) -> str:
    """A hash of the labels (analysis, languages) and every document's id, title and text, read from the Arrow
    buffers batch by batch (no Python object per document).

    Each column is hashed as two streams, its values' lengths (-1 for a null) and their bytes end to end:
    an unambiguous encoding, and the same however the corpus is cut into batches.
    """
    streams = {(name, part): hashlib.blake2b(digest_size=20) for name in _KEYED_COLUMNS for part in range(2)}
    for batch in _arrow_batches(corpus):
        for name in _KEYED_COLUMNS:
            if name in batch.schema.names:
                column = pc.cast(batch.column(name), pa.large_string())  # int64 offsets, whatever the type
                offsets = np.frombuffer(column.buffers()[1], dtype=np.int64, count=len(column) + 1,
                                        offset=8 * column.offset)
                lengths = np.diff(offsets)
                lengths[column.is_null().to_numpy(zero_copy_only=False)] = -1
                streams[name, 0].update(lengths.tobytes())
                if column.buffers()[2] is not None:
                    streams[name, 1].update(memoryview(column.buffers()[2])[offsets[0]:offsets[-1]])
    digest = hashlib.blake2b(digest_size=20)
    digest.update("\x1f".join(labels).encode())
    for stream in streams.values():
        digest.update(stream.digest())
    return digest.hexdigest()


_KEYED_COLUMNS = ("id", "title", "text")
_SCORE_DECIMALS = 10_000  # Anserini keeps 4 decimals
_TIE_GAP, _TIE_STEP = np.float32(1e-4), np.float32(1e-6)


def pyserini_scores(doc_ids: list[str], scores: np.ndarray) -> dict[str, float]:
    """The ranking's scores as Pyserini reports them (Anserini's score-ties adjustment), best first.

    Documents are ordered by score, ties by id; each float32 score is rounded to 4 decimals, and a score
    within 1e-4 of the one before it (a tie after rounding) is lowered by 1e-6 per place in the tie, so
    evaluation tools see the order Pyserini's run files have.
    """
    out: dict[str, float] = {}
    previous, tied = None, 0
    for i in sorted(range(len(doc_ids)), key=lambda i: (-scores[i], doc_ids[i])):
        score = np.float32(math.floor(float(scores[i]) * _SCORE_DECIMALS + 0.5) / _SCORE_DECIMALS)
        tied = tied + 1 if previous is not None and previous - score <= _TIE_GAP else 0
        score = np.float32(score - _TIE_STEP * np.float32(tied))
        out[doc_ids[i]] = float(score)
        previous = score
    return out


# BM25S under MTEB's own id and title for it (one paper, one id); entries in bibtexparser's order (by id).
_CITATION = r"""
@misc{bm25s,
  archiveprefix = {arXiv},
  author = {L{\`u}, Xing Han},
  eprint = {2407.03618},
  title = {BM25S: Orders of magnitude faster lexical search via eager sparse scoring},
  year = {2024},
}

@article{robertson2009bm25,
  author = {Robertson, Stephen and Zaragoza, Hugo},
  journal = {Foundations and Trends in Information Retrieval},
  number = {4},
  pages = {333--389},
  title = {The Probabilistic Relevance Framework: {BM25} and Beyond},
  volume = {3},
  year = {2009},
}
"""

_SCRIPTS = {"cmn": ["Hans", "Hant"], "zho": ["Hans", "Hant"], "yue": ["Hant"], "jpn": ["Jpan"], "kor": ["Hang"],
            "rus": ["Cyrl"], "ara": ["Arab"], "arb": ["Arab"], "fas": ["Arab"], "pes": ["Arab"], "hye": ["Armn"],
            "ell": ["Grek"], "hin": ["Deva"], "nep": ["Deva"], "tam": ["Taml"], "yid": ["Hebr"], "srp": ["Cyrl"],
            "ben": ["Beng"]}


def _with_scripts(codes: object) -> list[str]:
    return sorted(f"{code}-{script}" for code in codes for script in _SCRIPTS.get(code, ["Latn"]))


def bm25_model_meta() -> ModelMeta:
    """The ``airbench-mteb/bm25`` alias: BM25 (k1=0.9, b=0.4) analysed as Pyserini's Lucene analyzers do."""
    languages = _with_scripts(code for code, iso1 in ISO_639_1.items() if iso1 in LUCENE_LANGUAGES)
    return _model_meta(BM25, REVISION, languages, {})


def bm25_words_model_meta() -> ModelMeta:
    """The ``airbench-mteb/bm25-words`` alias: BM25 (k1=0.9, b=0.4) over words from real segmenters."""
    languages = _with_scripts((*segmenters.LATIN_ANALYSIS, *segmenters.CJK_LANGUAGES))
    return _model_meta(BM25_WORDS, WORDS_REVISION, languages, {"analysis": WORDS})


def _model_meta(name: str, revision: str, languages: list[str], loader_kwargs: dict[str, Any]) -> ModelMeta:
    return ModelMeta(
        loader=BM25Search,
        loader_kwargs=loader_kwargs,
        name=name,
        model_type=["sparse"],
        languages=languages,
        open_weights=True,
        revision=revision,
        release_date="2026-11-22",
        n_parameters=0,
        n_embedding_parameters=0,
        memory_usage_mb=None,
        embed_dim=None,
        license=None,
        max_tokens=None,
        reference="https://github.com/xhluca/bm25s",
        similarity_fn_name=None,
        framework=[],
        use_instructions=False,
        public_training_code=None,
        public_training_data=None,
        training_datasets=set(),
        citation=_CITATION,
    )
