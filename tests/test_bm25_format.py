"""The BM25 index as a storage format: its postings codec and term table round-trip, a golden index of format 4 is
rebuilt byte for byte, a byte changed anywhere is found (reported, built again, the same results), an index of
another format version is built again with one line saying why, and ties at the cut-off are kept as Anserini keeps
them.

Regenerate the golden index after a deliberate format change (with a new FORMAT_VERSION):
``python -m tests.test_bm25_format``.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
import zlib
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
from airbench_mteb.models.bm25 import terms as terms_module
from airbench_mteb.models.bm25.build import IndexWriter, StringsWriter
from airbench_mteb.models.bm25.codec import BAD_BLOCK, BLOCK, ForCodec
from airbench_mteb.models.bm25.format import (
    FORMAT_VERSION,
    MANIFEST,
    MANIFEST_CHECK,
    POSTINGS,
    TERMS,
    VOCABULARY,
    VOCABULARY_FRAMES,
    IndexDamage,
    idf_of,
    lucene_length,
    lucene_weight,
    norm_bytes,
    weights,
    write_manifest,
)
from airbench_mteb.models.bm25.index import Vocabulary
from airbench_mteb.models.bm25.store import BM25IndexWarning
from airbench_mteb.models.bm25.terms import check_table, locate, pack_terms, read_vocabulary, write_vocabulary
from tests.test_bm25 import _metadata

GOLDEN = Path(__file__).parent / "data" / f"bm25_index_v{FORMAT_VERSION}"
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
METADATA = _metadata("BM25FormatTest", ["eng-Latn"], ["test"])
COMMON = {"task_metadata": METADATA, "hf_split": "test", "hf_subset": "default",
          "encode_kwargs": {"show_progress_bar": False}}


def _golden_documents() -> list[list[str]]:
    """300 documents: empty, short, one over 40 terms (a lossy norm byte), repeated terms, a term in every one but
    the first (three blocks of postings, so skip data), then 280 of one to four terms."""
    rng = np.random.default_rng(48)
    documents = [["alpha", *rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist()] for _ in range(19)]
    tail = [["alpha", *rng.choice(WORDS, size=int(rng.integers(0, 4))).tolist()] for _ in range(280)]
    return [[], *documents[:9], ["beta"] * 30 + ["theta"] * 17, *documents[9:]][:20] + tail


def write_golden(folder: Path) -> None:
    """The golden index's files: built from :func:`_golden_documents` in batches of 7, runs of 16 pairs and
    vocabulary frames of about 16 bytes."""
    documents = _golden_documents()
    with StringsWriter(folder, "doc_ids") as doc_ids:
        doc_ids.append(pa.array([f"doc{i:02d}" for i in range(len(documents))]))
    real = build.RUN_PAIRS, terms_module.FRAME_BYTES
    build.RUN_PAIRS, terms_module.FRAME_BYTES = 16, 16  # several runs and frames: the seams
    try:
        writer = IndexWriter(folder, k1=0.9, b=0.4)
        for start in range(0, len(documents), 7):
            writer.add(build.AnalysedBatch.of(documents[start:start + 7]))
        header = writer.finish()
    finally:
        build.RUN_PAIRS, terms_module.FRAME_BYTES = real
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


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(1, 3) | st.integers(1, 2**32 - 1), min_size=1, max_size=3 * BLOCK + 5),
       data=st.data())
def test_the_term_table_gives_back_each_term_from_its_block_alone(counts: list[int], data: st.DataObject) -> None:
    df = np.array(counts, dtype=np.int64)
    sizes = np.resize(np.array(data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=1)), np.int64), len(df))
    terms, table = pack_terms(df, sizes)
    check_table(table, terms, int(df.sum()), int(sizes.sum()), Path("index"))
    ids = np.array(data.draw(st.lists(st.integers(0, len(df) - 1), max_size=20)), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    assert locate(terms, table, len(df), ids, Path("index")).tolist() == [
        [df[t], starts[t], starts[t + 1]] for t in ids.tolist()]
    with pytest.raises(IndexDamage, match=TERMS):  # the last block cut short
        locate(terms[:-1], table, len(df), np.array([len(df) - 1]), Path("index"))
    with pytest.raises(IndexDamage, match=r"terms\.blocks"):
        check_table(table, terms, int(df.sum()) + 1, int(sizes.sum()), Path("index"))


def test_a_term_table_block_that_does_not_add_up_is_damage() -> None:
    terms, table = pack_terms(np.arange(1, 300), np.arange(299))
    table = table.copy()
    table[1, 1] += 1  # the postings before the second block: one more than the first block's counts
    with pytest.raises(IndexDamage, match=TERMS):
        locate(terms, table, 299, np.array([5]), Path("index"))
    with pytest.raises(IndexError):
        locate(terms, table, 299, np.array([299]), Path("index"))


@settings(max_examples=60, deadline=None)
@given(df=st.lists(st.integers(1, 10**6), min_size=1, max_size=500), more=st.integers(0, 10**6), data=st.data())
def test_the_idf_of_some_terms_is_the_float32_of_all_terms(df: list[int], more: int, data: st.DataObject) -> None:
    """Format 2 stored ``idf_of`` over every term's count; format 3 computes it for a search's terms alone."""
    counts = np.array(df, dtype=np.int64)
    documents = int(counts.max()) + more
    stored = np.log1p((documents - counts + 0.5) / (counts + 0.5)).astype(np.float32)  # format 2's build
    some = np.array(data.draw(st.lists(st.integers(0, len(df) - 1), max_size=10)), dtype=np.int64)
    assert idf_of(counts[some], documents).tobytes() == stored[some].tobytes()
    assert all(idf_of(counts[[t]], documents).tobytes() == stored[[t]].tobytes() for t in some.tolist())


@pytest.mark.parametrize("frame_bytes", [1, 40, 1 << 22])
def test_the_vocabulary_is_given_back_from_its_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      frame_bytes: int) -> None:
    words = ["", "a", "é" * 200, "x" * 70_000, "zeta", *(f"w{i}" for i in range(100))]  # lengths over 2 varint bytes
    monkeypatch.setattr(terms_module, "FRAME_BYTES", frame_bytes)
    write_vocabulary(tmp_path, pa.array(words))
    assert read_vocabulary(tmp_path, len(words)).to_pylist() == words
    with pytest.raises(IndexDamage, match=r"vocabulary\.frames"):
        read_vocabulary(tmp_path, len(words) + 1)
    frames = np.fromfile(tmp_path / VOCABULARY_FRAMES, dtype=np.int64).reshape(-1, 4)
    for column, name in ((3, VOCABULARY), (2, VOCABULARY)):  # a frame's uncompressed size, its strings' size
        wrong = frames.copy()
        wrong[1:, column] += 1
        wrong.tofile(tmp_path / VOCABULARY_FRAMES)
        with pytest.raises(IndexDamage, match=name):  # (changed bytes within a frame: its CRC-32 in the manifest)
            read_vocabulary(tmp_path, len(words))


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


@settings(max_examples=60, deadline=None)
@given(idf=st.floats(0, 30, width=32), tf=st.lists(st.integers(1, 2**32 - 1), max_size=50),
       inverse_norm=st.lists(st.floats(0, 100, width=32), min_size=50, max_size=50))
def test_the_weight_is_lucenes_float32_formula_whole_or_one_by_one(idf: float, tf: list[int],
                                                                   inverse_norm: list[float]) -> None:
    idf32, x = np.float32(idf), np.array(tf, np.float32) * np.array(inverse_norm[:len(tf)], np.float32)
    expected = idf32 - idf32 / (np.float32(1) + x)  # Lucene's BM25Similarity, operation by operation
    whole = weights(idf32, np.array(tf, np.uint32), np.array(inverse_norm[:len(tf)], np.float32))
    assert whole.dtype == np.float32 and whole.tobytes() == expected.tobytes()
    assert [lucene_weight(idf32, value) for value in x] == expected.tolist()


@settings(max_examples=60, deadline=None)
@given(terms=st.lists(st.text(max_size=4), unique=True, max_size=30), asked=st.lists(st.text(max_size=4), max_size=30))
def test_the_vocabulary_looks_terms_up_as_a_dict_of_them_would(terms: list[str], asked: list[str]) -> None:
    oracle = {term: i for i, term in enumerate(terms)}
    vocabulary = Vocabulary(pa.array(terms, pa.large_string()))
    assert vocabulary.ids(asked).tolist() == [oracle.get(term, -1) for term in asked]
    assert [term in vocabulary for term in asked] == [term in oracle for term in asked]
    assert [vocabulary.get(term) for term in asked] == [oracle.get(term) for term in asked]
    assert dict(vocabulary.items()) == oracle and len(vocabulary) == len(oracle)


CORPUS = Dataset.from_dict({"id": [f"d{i:03d}" for i in range(len(_golden_documents()))],
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


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_index_of_another_format_version_is_built_again_with_one_line(caplog: pytest.LogCaptureFixture,
                                                                         version: int) -> None:
    expected = _searched(BM25Search(workers=1))
    folder = _folder()
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["format"] = version
    text = json.dumps(manifest).encode()
    (folder / MANIFEST).write_bytes(text)
    if version == 1:  # format 1's manifest had no checksum beside it
        os.remove(folder / MANIFEST_CHECK)
    else:
        (folder / MANIFEST_CHECK).write_text(f"{zlib.crc32(text):08x}\n", encoding="ascii")
    model = BM25Search(workers=1)
    with warnings.catch_warnings(), caplog.at_level(logging.INFO, logger="airbench_mteb.models.bm25.store"):
        warnings.simplefilter("error")
        assert _searched(model) == expected
    told = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(told) == 1 and f"written in format {version}" in told[0] and f"format {FORMAT_VERSION}" in told[0]
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
