"""BM25's corpus analysis and its search, spread over worker processes (:func:`~.worker_pool.in_order`).

Analysis: each worker turns one Arrow batch of documents into an
:class:`~airbench_mteb.models.bm25.build.AnalysedBatch` (the batch's distinct terms and its (document,
term, count) pairs), so what comes back is a few bytes per pair and the batch's distinct terms as one Arrow
array, not a Python object per token or per term. A worker analyses each distinct word once
(:class:`BatchAnalyser`), and where it can, each distinct piece of text between whitespace once per batch.
Search: each worker scores blocks of queries (:meth:`~airbench_mteb.models.bm25.index.BM25Index.search_block`)
on the index it shares with the parent by the fork, and sends back each query's best positions and scores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25.build import AnalysedBatch
from airbench_mteb.models.bm25.index import BM25Index, QueryBlock, TieOrder
from airbench_mteb.models.bm25.worker_pool import available_cores, can_fork, in_order
from airbench_mteb.models.lucene_analysis.tokenizer import standard_words, whitespace_pieces
from airbench_mteb.models.lucene_analysis.wordwise import WordwiseAnalyzer, wordwise

# The pool moved to worker_pool; its names stay importable here for tests/test_bm25.py, kept untouched (issue 41).
__all__ = ["BatchAnalyser", "analysed_batches", "analysed_rows", "available_cores", "can_fork", "in_order", "searched"]

Terms = Callable[[str], list[str]]


def _document_texts(batch: pa.RecordBatch | pa.Table) -> pa.Array:
    """The text BM25 indexes of each document: ``title text`` where there is a title, else the text."""
    texts = _combined(batch.column("text"))
    if "title" not in batch.schema.names:
        return texts
    titles = _combined(batch.column("title")).cast(texts.type)
    titled = pc.and_(pc.fill_null(pc.greater(pc.binary_length(titles), 0), False), pc.is_valid(texts))
    return pc.if_else(titled, pc.binary_join_element_wise(titles, texts, " "), texts)


def _combined(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return array.cast(pa.string()) if pa.types.is_null(array.type) else array  # no value at all: read as strings


class _TermIds(dict[str, int]):
    """Word -> id of its term in ``terms`` (-1: the word makes no term): each distinct word is analysed once."""

    def __init__(self, analyzer: WordwiseAnalyzer) -> None:
        super().__init__()
        self._analyzer = analyzer
        self._ids: dict[str, int] = {}
        self.terms: list[str] = []

    def __missing__(self, word: str) -> int:
        return self._add(word, self._analyzer.term(word))

    def learn(self, words: Iterable[str]) -> None:
        """Analyse those of ``words`` not known yet, all at once (:meth:`WordwiseAnalyzer.terms_of`)."""
        new = [word for word in dict.fromkeys(words) if word not in self]
        for word, term in zip(new, self._analyzer.terms_of(new), strict=True):
            self._add(word, term)

    def _add(self, word: str, term: str | None) -> int:
        found = -1 if term is None else self._ids.setdefault(term, len(self.terms))
        if found == len(self.terms):
            self.terms.append(term)  # a term first met now
        self[word] = found
        return found

    def clear(self) -> None:
        super().clear()
        self._ids.clear()
        self.terms.clear()


# A piece that is one word, itself (a letter or digit joins the next, up to Lucene's longest token), in RE2.
_PLAIN_WORD = r"^[A-Za-z0-9]{1,255}$"


class _PieceIds(dict[str, int]):
    """Piece of text between whitespace -> the term id (in :class:`_TermIds` ``words``) of its one word, or for a
    piece of no word or several, ``-2 - k`` where ``several[k]`` holds their ids: an int per piece, so that a batch's
    pieces are looked up in one C-level pass. Each distinct piece is tokenized once."""

    def __init__(self, words: _TermIds) -> None:
        super().__init__()
        self._words = words
        self.several: list[tuple[int, ...]] = []

    def codes(self, pieces: pa.Array) -> np.ndarray:
        """The code of each of these distinct pieces; the new ones are tokenized (:func:`standard_words`, but
        where Arrow finds the piece a plain word) and their new words analysed together (:meth:`_TermIds.learn`)."""
        listed = pieces.to_pylist()
        codes = list(map(self.get, listed))  # one lookup each: a dict this size costs a cache miss per lookup
        new = [i for i, code in enumerate(codes) if code is None]
        if new:
            plain = pc.match_substring_regex(pieces.take(pa.array(new, pa.int64())), _PLAIN_WORD)
            words_of = [[listed[i]] if is_plain else standard_words(listed[i])
                        for i, is_plain in zip(new, plain.to_numpy(zero_copy_only=False).tolist(), strict=True)]
            self._words.learn(chain.from_iterable(words_of))
            for i, words in zip(new, words_of, strict=True):
                codes[i] = self._add(listed[i], tuple(map(self._words.__getitem__, words)))
        return np.array(codes, dtype=np.int64)

    def _add(self, piece: str, ids: tuple[int, ...]) -> int:
        if len(ids) == 1:
            code = ids[0]
        else:
            code = -2 - len(self.several)
            self.several.append(ids)
        self[piece] = code
        return code

    def clear(self) -> None:
        super().clear()
        self.several.clear()

    def words(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The term ids of the pieces with these ``codes`` (values of this dict), end to end, and each piece's
        number of words."""
        several = np.flatnonzero(codes <= -2)
        if not len(several):
            return codes, np.ones(len(codes), dtype=np.int64)
        ids_of_several = [self.several[-2 - code] for code in codes[several].tolist()]
        widths = np.ones(len(codes), dtype=np.int64)
        widths[several] = np.fromiter(map(len, ids_of_several), dtype=np.int64, count=len(several))
        ids = np.empty(int(widths.sum()), dtype=np.int64)
        starts = np.cumsum(widths) - widths
        one = codes > -2
        ids[starts[one]] = codes[one]
        ids[_gathered(np.arange(len(ids)), widths, several)] = np.fromiter(
            chain.from_iterable(ids_of_several), dtype=np.int64, count=int(widths[several].sum()))
        return ids, widths


# Both caches are emptied together between batches once either holds this many entries, to bound memory (ids only
# need to agree within a batch).
_CACHED_WORDS = 1 << 19
_CACHED_PIECES = 1 << 19


class BatchAnalyser:
    """Turns Arrow batches of documents into :class:`AnalysedBatch` es with an analyzer, each distinct word
    analysed once per process (:class:`~airbench_mteb.models.lucene_analysis.wordwise.WordwiseAnalyzer`;
    any other analyzer's terms are taken as its words).

    Where the words are :func:`standard_words`, Arrow cuts the texts at whitespace and finds a batch's distinct
    pieces in C (:func:`whitespace_pieces`): Python then handles each distinct piece once, not each word (2x
    faster on the realistic long documents); a text that cannot be cut there goes word by word."""

    def __init__(self, analyzer: Terms) -> None:
        self._analyzer = wordwise(analyzer)
        self._ids = _TermIds(self._analyzer)
        self._pieces = _PieceIds(self._ids) if self._analyzer.words is standard_words else None
        # What an analyzer loads on first use (nltk's stemmer: 1 s of CPU) is loaded here, once: forked workers
        # inherit it instead of each loading it again. English stems "warming" in C and "possibly" with nltk.
        self._analyzer("warming possibly")

    def __call__(self, batch: pa.RecordBatch | pa.Table) -> AnalysedBatch:
        """One batch's terms; a document whose text cannot be analysed is a DatasetError naming its id."""
        texts = _document_texts(batch)
        if len(self._ids) >= _CACHED_WORDS or (self._pieces is not None and len(self._pieces) >= _CACHED_PIECES):
            self._ids.clear()  # the pieces' ids are the words' ids: both go
            if self._pieces is not None:
                self._pieces.clear()
        try:
            ids, words = self._by_pieces(batch, texts) if self._pieces is not None else self._by_words(batch, texts)
        except DatasetError:
            raise
        except Exception:  # a word's filters failed: name the document, analysed alone
            for position, text in enumerate(texts.to_pylist()):
                self._terms(batch, position, text)
            raise
        return AnalysedBatch.of_ids(ids, words, self._ids.terms)

    def _by_words(self, batch: pa.RecordBatch | pa.Table, texts: pa.Array,
                  positions: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The term ids of the texts' words end to end and each text's number of words (only the texts at
        ``positions`` where given)."""
        chosen = texts if positions is None else texts.take(pa.array(positions, pa.int64()))
        docs = [self._words(batch, position, text) for position, text in
                zip(range(len(texts)) if positions is None else positions, chosen.to_pylist(), strict=True)]
        counts = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        ids = np.fromiter(map(self._ids.__getitem__, chain.from_iterable(docs)), dtype=np.int64,
                          count=int(counts.sum()))
        return ids, counts

    def _by_pieces(self, batch: pa.RecordBatch | pa.Table, texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_by_words` of :func:`standard_words`, found piece by piece."""
        assert self._pieces is not None
        pieces, cuttable = whitespace_pieces(texts)
        encoded = pc.dictionary_encode(pieces.flatten())
        codes = self._pieces.codes(encoded.dictionary)
        distinct_ids, widths = self._pieces.words(codes)
        found = encoded.indices.to_numpy()
        ids = _gathered(distinct_ids, widths, found)
        offsets = pieces.offsets.to_numpy()
        words_before = np.concatenate([[0], np.cumsum(widths[found])])
        words = words_before[offsets[1:] - offsets[0]] - words_before[offsets[:-1] - offsets[0]]
        if cuttable.all():
            return ids, words
        uncut = np.flatnonzero(~cuttable)  # their few words, spliced in
        uncut_ids, words[uncut] = self._by_words(batch, texts, uncut.tolist())
        return _spliced(ids, words, uncut, uncut_ids), words

    def _words(self, batch: pa.RecordBatch | pa.Table, position: int, text: str | None) -> list[str]:
        try:
            return self._analyzer.words(text)  # type: ignore[arg-type]  # None fails: told as the document's
        except Exception as error:
            raise _document_error(batch, position, text, error) from None

    def _terms(self, batch: pa.RecordBatch | pa.Table, position: int, text: str) -> list[str]:
        try:
            return self._analyzer(text)
        except Exception as error:
            raise _document_error(batch, position, text, error) from None


def _gathered(values: np.ndarray, widths: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The stretches of ``values`` (``widths[i]`` values for item ``i``, end to end) of the items ``found``, in
    that order."""
    if len(values) == len(widths) and (widths == 1).all():
        return values[found]
    starts = np.cumsum(widths) - widths
    counts = widths[found]
    ends = np.cumsum(counts)
    return values[np.repeat(starts[found] - (ends - counts), counts) + np.arange(int(ends[-1]) if len(ends) else 0)]


def _spliced(ids: np.ndarray, words: np.ndarray, inserted_at: np.ndarray, inserted: np.ndarray) -> np.ndarray:
    """``ids`` (the words of every document but those at ``inserted_at``, end to end) with those documents' words
    ``inserted`` put in place; ``words``: each document's number of words, all documents."""
    is_inserted = np.zeros(len(words), dtype=bool)
    is_inserted[inserted_at] = True
    from_inserted = np.repeat(is_inserted, words)
    spliced = np.empty(len(from_inserted), dtype=np.int64)
    spliced[from_inserted] = inserted
    spliced[~from_inserted] = ids
    return spliced


def _document_error(batch: pa.RecordBatch | pa.Table, position: int, text: str | None, error: Exception) -> DatasetError:
    """Any failure to analyse a document, told as its own, in one line."""
    doc_id = pc.cast(batch.column("id"), pa.string())[position].as_py()
    what = "has no text" if text is None else f"cannot be analysed ({type(error).__name__}: {error})"
    return DatasetError(f"BM25: the document {what}", item_id=doc_id)


def analysed_batches(terms: Terms, batches: Iterable[pa.RecordBatch], workers: int) -> Iterator[AnalysedBatch]:
    """Each batch analysed by a :class:`BatchAnalyser`, in order; on ``workers`` cores (:func:`in_order`)."""
    return in_order(_analyse, BatchAnalyser(terms), batches, workers)


def _analyse(analyser: BatchAnalyser, batch: pa.RecordBatch) -> AnalysedBatch:
    return analyser(batch)


Rows = tuple[int, int]  # a range of a corpus's rows, start and stop


def analysed_rows(terms: Terms, read: Callable[[Rows], pa.Table], ranges: Iterable[Rows],
                  workers: int) -> Iterator[AnalysedBatch]:
    """:func:`analysed_batches` of a corpus's row ranges, each read with ``read`` by the process that analyses it
    (``read`` reaches the workers with the fork: only the range goes through the pipe, not the text)."""
    return in_order(_analyse_rows, (BatchAnalyser(terms), read), ranges, workers)


def _analyse_rows(shared: tuple[BatchAnalyser, Callable[[Rows], pa.Table]], rows: Rows) -> AnalysedBatch:
    analyser, read = shared
    return analyser(read(rows))


def searched(index: BM25Index, queries: Sequence[Sequence[int]], k: int, workers: int,
             tie_order: TieOrder | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:meth:`BM25Index.search`, its query blocks scored on ``workers`` cores where the platform can fork
    (elsewhere in this process: the index would be copied to each worker)."""
    blocks = list(index.query_blocks(queries))
    workers = min(workers, len(blocks)) if can_fork() else 1
    for results in in_order(_search_block, (index, k, tie_order), blocks, workers):
        yield from results


def _search_block(shared: tuple[BM25Index, int, TieOrder | None],
                  block: QueryBlock) -> list[tuple[np.ndarray, np.ndarray]]:
    index, k, tie_order = shared
    return index.search_block(block, k, tie_order)
