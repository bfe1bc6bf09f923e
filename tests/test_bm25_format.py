"""The BM25 index as a storage format: its postings codec round-trips, a golden index of format 2 is rebuilt byte for
byte, a byte changed anywhere is found (reported, built again, the same results), an index of another format
version is built again with one line saying why, and ties at the cut-off are kept as Anserini keeps them.

Regenerate the golden index after a deliberate format change (with a new FORMAT_VERSION):
``python -m tests.test_bm25_format``.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from datasets import Dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airbench_mteb import settings as plugin_settings
from airbench_mteb.models.bm25 import BM25Search, build
from airbench_mteb.models.bm25 import index as index_module
from airbench_mteb.models.bm25.build import IndexWriter, StringsWriter
from airbench_mteb.models.bm25.codec import BAD_BLOCK, BLOCK, ForCodec
from airbench_mteb.models.bm25.format import (
    FORMAT_VERSION,
    MANIFEST,
    MANIFEST_CHECK,
    POSTINGS,
    lucene_length,
    norm_bytes,
    write_manifest,
)
from airbench_mteb.models.bm25.store import BM25IndexWarning
from tests.test_bm25 import _metadata

GOLDEN = Path(__file__).parent / "data" / f"bm25_index_v{FORMAT_VERSION}"
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
METADATA = _metadata("BM25FormatTest", ["eng-Latn"], ["test"])
COMMON = {"task_metadata": METADATA, "hf_split": "test", "hf_subset": "default",
          "encode_kwargs": {"show_progress_bar": False}}


def _golden_documents() -> list[list[str]]:
    """20 documents: empty, short, one over 40 terms (a lossy norm byte), repeated terms, a term in every one."""
    rng = np.random.default_rng(48)
    documents = [["alpha", *rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist()] for _ in range(19)]
    return [[], *documents[:9], ["beta"] * 30 + ["theta"] * 17, *documents[9:]][:20]


def write_golden(folder: Path) -> None:
    """The golden index's files: built from :func:`_golden_documents` in batches of 7 and runs of 16 pairs."""
    documents = _golden_documents()
    with StringsWriter(folder, "doc_ids") as doc_ids:
        doc_ids.append(pa.array([f"doc{i:02d}" for i in range(len(documents))]))
    real = build.RUN_PAIRS
    build.RUN_PAIRS = 16  # several runs: the merge's seams
    try:
        writer = IndexWriter(folder, k1=0.9, b=0.4)
        for start in range(0, len(documents), 7):
            writer.add(build.AnalysedBatch.of(documents[start:start + 7]))
        header = writer.finish()
    finally:
        build.RUN_PAIRS = real
    write_manifest(folder, {"content": "golden", "revision": "1", "k1": 0.9, "b": 0.4}, header)


def test_the_golden_index_is_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    write_golden(tmp_path)
    expected = sorted(path.name for path in GOLDEN.iterdir())
    assert sorted(path.name for path in tmp_path.iterdir()) == expected
    for name in expected:
        assert (tmp_path / name).read_bytes() == (GOLDEN / name).read_bytes(), name


_values = st.integers(0, 2**32 - 1) | st.integers(0, 3)  # mostly small, some outliers of any size


@settings(max_examples=60, deadline=None)
@given(gaps=st.lists(st.lists(st.integers(1, 40) | st.integers(1, 2**20), min_size=1, max_size=3 * BLOCK),
                     min_size=1, max_size=4),
       frequencies=st.lists(_values, min_size=1, max_size=300))
def test_the_codec_gives_back_every_posting(gaps: list[list[int]], frequencies: list[int]) -> None:
    documents = np.concatenate([np.cumsum(term) - 1 for term in gaps]).astype(np.int32)
    counts = np.array([len(term) for term in gaps])
    tf = np.resize(np.array(frequencies, dtype=np.int64), len(documents)) % (2**32 - 1) + 1
    data, sizes = ForCodec.encode(documents, tf.astype(np.uint32), counts)
    assert sizes.sum() == len(data)
    at, start = np.concatenate([[0], np.cumsum(sizes)]), 0
    for t, count in enumerate(counts.tolist()):
        got, got_tf, status = ForCodec.decode(data, int(at[t]), int(at[t + 1]), count, int(documents.max()) + 1,
                                              int(tf.max()))
        assert status == 0
        assert got.tolist() == documents[start:start + count].tolist()
        assert got_tf.tolist() == tf[start:start + count].tolist()
        start += count
    truncated = ForCodec.decode(data, 0, int(at[1]) - 1, int(counts[0]), int(documents.max()) + 1, int(tf.max()))
    assert truncated[2] < 0
    together = ForCodec.decode_terms(data, counts, int(documents.max()) + 1, int(tf.max()))
    assert together[2] == 0 and together[0].tolist() == documents.tolist() and together[1].tolist() == tf.tolist()


def test_a_block_of_ones_costs_two_bytes_and_an_outlier_is_patched() -> None:
    documents = np.arange(BLOCK, dtype=np.int32)
    data, _ = ForCodec.encode(documents, np.ones(BLOCK, np.uint32), np.array([BLOCK]))
    assert len(data) == 4  # the gaps and the frequencies: a width of 0 and no exceptions each
    tf = np.ones(BLOCK, np.uint32)
    tf[5] = 70_000
    data, _ = ForCodec.encode(documents, tf, np.array([BLOCK]))
    assert len(data) == 4 + 1 + 3  # one exception: its place and 17 bits as a 3-byte varint
    assert ForCodec.decode(data, 0, len(data), BLOCK, BLOCK, 69_999)[2] < 0  # a frequency above the bound
    assert ForCodec.decode(data, 0, len(data), BLOCK, BLOCK - 1, 70_000)[2] < 0  # a document beyond the corpus
    assert ForCodec.decode(np.full(8, 200, np.uint8), 0, 8, BLOCK, BLOCK, 1)[2] == BAD_BLOCK


def _old_lucene_length(lengths: np.ndarray) -> np.ndarray:
    """Format 1's computation: 24 + the excess over 24 truncated to its 4 most significant bits."""
    excess = np.maximum(lengths - 24, 0)
    bits = np.zeros_like(excess)
    bits[excess > 0] = np.floor(np.log2(excess[excess > 0])).astype(np.int64) + 1
    shift = np.maximum(bits - 4, 0)
    return np.where(lengths < 24, lengths, 24 + ((excess >> shift) << shift))


def test_the_norm_byte_keeps_the_length_lucene_keeps() -> None:
    lengths = np.concatenate([np.arange(300_000), 2 ** np.arange(19, 31) - 1, 2 ** np.arange(19, 31)])
    assert np.array_equal(lucene_length(lengths), _old_lucene_length(lengths))
    assert norm_bytes(np.array([0, 23, 24, 40, 2**31 - 1])).tolist() == [0, 23, 24, 40, 255]


CORPUS = Dataset.from_dict({"id": [f"d{i:02d}" for i in range(20)],
                            "text": [" ".join(document) for document in _golden_documents()]})
QUERIES = Dataset.from_dict({"id": ["q1", "q2", "q3"], "text": ["alpha beta", "theta zeta zeta", "gamma"]})


def _searched(model: BM25Search, top_k: int = 10) -> dict[str, dict[str, float]]:
    model.index(CORPUS, **COMMON)
    return model.search(QUERIES, top_k=top_k, **COMMON)


def _folder() -> Path:
    store = plugin_settings.current_settings().bm25_index
    assert store is not None
    (folder,) = [path for path in store.iterdir() if not path.name.startswith(".")]
    return folder


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_byte_changed_anywhere_in_any_file_is_reported_and_the_index_built_again(data: st.DataObject) -> None:
    expected = _searched(BM25Search(workers=1))  # built by the first example, read sound by the others
    path = data.draw(st.sampled_from(sorted(p for p in _folder().iterdir() if p.stat().st_size)), label="file")
    content = bytearray(path.read_bytes())
    at = data.draw(st.integers(0, len(content) - 1), label="at")
    content[at] ^= data.draw(st.integers(1, 255), label="mask")
    path.write_bytes(bytes(content))
    model = BM25Search(workers=1)
    with pytest.warns(BM25IndexWarning, match="is not used"):
        assert _searched(model) == expected
    assert model.index_builds == 1


def test_damage_a_search_worker_finds_is_reported_and_the_index_built_again(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _searched(BM25Search(workers=1))
    postings = _folder() / POSTINGS
    content = bytearray(postings.read_bytes())
    content[len(content) // 2] ^= 0x10
    postings.write_bytes(bytes(content))
    monkeypatch.setattr(index_module, "_BLOCK_ENTRIES", 1)  # a block per query: the blocks go to two processes
    model = BM25Search(workers=2)
    with pytest.warns(BM25IndexWarning, match="do not match their checksum"):
        assert _searched(model) == expected
    assert model.index_builds == 1


def test_an_index_of_another_format_version_is_built_again_with_one_line(caplog: pytest.LogCaptureFixture) -> None:
    expected = _searched(BM25Search(workers=1))
    folder = _folder()
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["format"] = 1  # format 1's manifest had no checksum beside it
    (folder / MANIFEST).write_text(json.dumps(manifest))
    os.remove(folder / MANIFEST_CHECK)
    model = BM25Search(workers=1)
    with warnings.catch_warnings(), caplog.at_level(logging.INFO, logger="airbench_mteb.models.bm25.store"):
        warnings.simplefilter("error")
        assert _searched(model) == expected
    told = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(told) == 1 and "written in format 1" in told[0] and f"format {FORMAT_VERSION}" in told[0]
    assert model.index_builds == 1


def test_documents_tied_at_the_cut_off_keep_the_smallest_ids_with_pyserini_ties() -> None:
    ids = ["d5", "d3", "d9", "d1", "d7"]  # the same text: one score; corpus order is not id order
    corpus = Dataset.from_dict({"id": ids, "text": ["apple pie"] * 5})
    queries = Dataset.from_dict({"id": ["q"], "text": ["apple"]})
    as_pyserini = BM25Search(workers=1, pyserini_ties=True)
    as_pyserini.index(corpus, **COMMON)
    assert list(as_pyserini.search(queries, top_k=2, **COMMON)["q"]) == ["d1", "d3"]
    reranked = as_pyserini.search(queries, top_k=2, top_ranked={"q": ["d9", "d7", "d5"]}, **COMMON)["q"]
    assert list(reranked) == ["d5", "d7"]
    plain = BM25Search(workers=1)
    plain.index(corpus, **COMMON)
    assert list(plain.search(queries, top_k=2, **COMMON)["q"]) == ["d5", "d3"]  # corpus order, as before


if __name__ == "__main__":
    GOLDEN.mkdir(parents=True, exist_ok=False)
    write_golden(GOLDEN)
    print(f"wrote {GOLDEN}")
