"""How BM25 analyses a batch of documents: piece by piece where Arrow can cut the texts at whitespace, word by word
elsewhere, always the analyzer's terms of each document (``title text``) as the oracle gives them."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25 import workers
from airbench_mteb.models.bm25.build import AnalysedBatch
from airbench_mteb.models.bm25.workers import BatchAnalyser
from airbench_mteb.models.lucene_analysis.english import english_terms

# Pieces a text holds between whitespace: cases, possessives, stopwords, joiners, Porter's departures, non-ASCII
# letters, a mark that attaches (the text then goes word by word), CJK, and no-break spaces inside a piece.
_PIECES = st.sampled_from(["The", "cat's", "CATS'S", "running,", "U.S.A.", "e.g.", "3.14", "x_y", "__", "(a)", "won't",
                           "a-b", "and", "possibly", "technology", "über", "e\u0301", "\u00ad", "中国", "x\u00a0y", ""])
_GAPS = st.sampled_from([" ", "  ", "\t", "\n ", " \u200d"])
_TEXTS = st.lists(st.tuples(_PIECES, _GAPS), max_size=8).map(lambda parts: "".join(p + g for p, g in parts))
_DOCUMENTS = st.lists(st.tuples(st.one_of(st.none(), st.just(""), _TEXTS), _TEXTS), min_size=1, max_size=6)


def _batch(documents: list[tuple[str | None, str]], titled: bool = True) -> pa.Table:
    columns = {"id": [f"d{i}" for i in range(len(documents))], "text": [text for _, text in documents]}
    return pa.table({**columns, "title": [title for title, _ in documents]} if titled else columns)


def _oracle(documents: list[tuple[str | None, str]], titled: bool = True) -> AnalysedBatch:
    return AnalysedBatch.of([english_terms(f"{title} {text}" if titled and title else text)
                             for title, text in documents])


def _assert_same(batch: AnalysedBatch, expected: AnalysedBatch) -> None:
    assert batch.vocabulary.to_pylist() == expected.vocabulary.to_pylist()
    for field in ("terms", "documents", "counts", "lengths"):
        np.testing.assert_array_equal(getattr(batch.pairs, field), getattr(expected.pairs, field), err_msg=field)


@settings(max_examples=400, deadline=None)  # a few Arrow calls each
@given(_DOCUMENTS, st.booleans())
def test_a_batch_has_each_documents_terms_as_the_analyzer_gives_them(documents: list[tuple[str | None, str]],
                                                                      titled: bool) -> None:
    analyser = BatchAnalyser(english_terms)
    _assert_same(analyser(_batch(documents, titled)), _oracle(documents, titled))
    # again with the caches warm, then emptied before each batch: the same
    _assert_same(analyser(_batch(documents, titled)), _oracle(documents, titled))
    with mock.patch.object(workers, "_CACHED_PIECES", 1):
        _assert_same(analyser(_batch(documents, titled)), _oracle(documents, titled))


@pytest.mark.parametrize(("texts", "named"), [(["plain words", None], "d1"), ([None, None], "d0")])
def test_a_document_without_text_is_named_whichever_way_its_batch_is_analysed(texts: list[str | None],
                                                                              named: str) -> None:
    # beside another text, or in a column of no value at all (Arrow's null type)
    with pytest.raises(DatasetError, match=rf"^id '{named}': BM25: the document has no text$"):
        BatchAnalyser(english_terms)(pa.table({"id": ["d0", "d1"], "text": texts}))


def test_a_word_the_filters_cannot_take_names_its_document() -> None:
    def failing(word: str) -> str | None:
        if word == "bad":
            raise ValueError("no term for 'bad'")
        return word

    analyser = BatchAnalyser(english_terms.__class__(english_terms.words, failing))
    with pytest.raises(DatasetError, match=r"^id 'd1': BM25: the document cannot be analysed \(ValueError: no term"):
        analyser(pa.table({"id": ["d0", "d1"], "text": ["good words", "a bad word"]}))
