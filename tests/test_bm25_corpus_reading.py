"""How BM25 reads a corpus: in batches of whole rows, whatever selection of a table the corpus is."""

from __future__ import annotations

import random

import pyarrow as pa
from datasets import Dataset

from airbench_mteb.models.bm25 import _corpus_batches


def test_a_shuffled_selection_is_read_in_whole_batches_not_one_row_at_a_time() -> None:
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(3000)], "text": ["plain words"] * 3000})
    order = list(range(3000))
    random.Random(0).shuffle(order)
    batches = list(_corpus_batches(corpus.select(order)))
    assert len(batches) == 1
    assert pa.Table.from_batches(batches).column("id").to_pylist() == [f"d{i}" for i in order]


def test_a_table_of_few_large_chunks_is_read_chunk_by_chunk_without_a_copy() -> None:
    chunks = [pa.table({"id": [f"d{c}-{i}" for i in range(100)], "text": ["words"] * 100}) for c in range(3)]
    corpus = Dataset(pa.concat_tables(chunks))
    batches = list(_corpus_batches(corpus))
    assert [b.num_rows for b in batches] == [100, 100, 100]
    assert batches[0].column(1).buffers()[2].address == corpus.data.table.column("text").chunk(0).buffers()[2].address
