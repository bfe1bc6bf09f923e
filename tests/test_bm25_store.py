"""BM25 indexes built on disk in bounded memory (runs spilled and merged), stored by content key and reused by
later processes; damaged or half-written ones are never used."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from itertools import pairwise
from pathlib import Path
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from airbench_mteb import settings as plugin_settings
from airbench_mteb.models import bm25
from airbench_mteb.models.bm25 import BM25Search
from airbench_mteb.models.bm25 import build as bm25_build
from airbench_mteb.models.bm25.file_holes import punch_hole
from airbench_mteb.models.bm25.format import MANIFEST, POSTINGS, lucene_length
from airbench_mteb.models.bm25.index import BM25Index
from airbench_mteb.models.bm25.store import BM25IndexWarning
from airbench_mteb.settings import SettingsError
from tests.test_bm25 import _metadata

METADATA = _metadata("BM25StoreTest", ["eng-Latn"], ["test"])
COMMON = {"task_metadata": METADATA, "hf_split": "test", "hf_subset": "default",
          "encode_kwargs": {"show_progress_bar": False}}


def _lucene_postings(documents: list[list[str]], k1: float, b: float) -> dict[str, list[tuple[int, float]]]:
    """The oracle: each term's (document, weight) postings, one term and document at a time in float32 as Lucene's
    BM25Similarity computes them, terms in order of first occurrence."""
    f32 = np.float32
    scored = [d for d in documents if d]
    n, avgdl = len(scored), sum(map(len, scored)) / max(1, len(scored))
    postings: dict[str, list[tuple[int, float]]] = {}
    for position, doc in enumerate(documents):
        for term in dict.fromkeys(doc):
            postings.setdefault(term, []).append((position, doc.count(term)))
    out = {}
    for term, entries in postings.items():
        idf = f32(np.log1p((n - len(entries) + 0.5) / (len(entries) + 0.5)))
        weights = []
        for position, tf in entries:
            length = f32(lucene_length(np.array([len(documents[position])]))[0])
            inverse_norm = f32(1) / (f32(k1) * ((f32(1) - f32(b)) + f32(b) * length / f32(avgdl)))
            weights.append((position, float(idf - idf / (f32(1) + f32(tf) * inverse_norm))))
        out[term] = weights
    return out


def _postings(index: BM25Index) -> dict[str, list[tuple[int, float]]]:
    return {term: list(zip(*(part.tolist() for part in index.postings_of(t)), strict=True))
            for term, t in index.vocabulary.items()}


corpora = st.lists(st.lists(st.sampled_from([f"t{i}" for i in range(12)]), max_size=12), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(documents=corpora, batch=st.integers(1, 9), run_pairs=st.integers(1, 40), merge_entries=st.integers(1, 30),
       k1=st.sampled_from([0.9, 1.2]), b=st.sampled_from([0.4, 0.75, 1.0]))
def test_the_index_built_in_runs_and_merged_in_ranges_equals_lucene_term_by_term(
        documents: list[list[str]], batch: int, run_pairs: int, merge_entries: int, k1: float, b: float) -> None:
    patch = pytest.MonkeyPatch()
    patch.setattr(bm25_build, "RUN_PAIRS", run_pairs)  # many runs, many merge ranges: the external merge's seams
    patch.setattr(bm25_build, "MERGE_ENTRIES", merge_entries)
    try:
        index = BM25Index.build([documents[i:i + batch] for i in range(0, len(documents), batch)], k1=k1, b=b)
    finally:
        patch.undo()
    expected = _lucene_postings(documents, k1, b)
    assert list(index.vocabulary) == list(expected)  # ids in order of first occurrence
    assert _postings(index) == expected
    assert index.num_documents == len(documents)


@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 40_000), data=st.data())
def test_a_punched_hole_reads_as_zeros_and_leaves_the_rest_of_the_file(size: int, data: st.DataObject) -> None:
    offset = data.draw(st.integers(0, size - 1))
    length = data.draw(st.integers(0, size - offset))
    content = np.random.default_rng(size).integers(1, 256, size, dtype=np.uint8).tobytes()  # no zero byte
    with tempfile.TemporaryFile() as file:
        file.write(content)
        file.flush()
        punched = punch_hole(file.fileno(), offset, length)
        file.seek(0)
        after = file.read()
    expected = content[:offset] + bytes(length) + content[offset + length:] if punched else content
    assert after == expected
    if sys.platform == "linux" and length:  # ext4, xfs, btrfs and tmpfs all punch holes
        assert punched


def _corpus(n: int = 300) -> Dataset:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(n)]
    return Dataset.from_dict({"id": [f"d{i}" for i in range(n)], "text": texts})


QUERIES = Dataset.from_dict({"id": ["q1", "q2"], "text": ["w1 w2 w3", "w7 w40"]})


def _searched(model: BM25Search, corpus: Dataset) -> dict[str, dict[str, float]]:
    model.index(corpus, **COMMON)
    return model.search(QUERIES, top_k=20, **COMMON)


def _store() -> Path:
    store = plugin_settings.current_settings().bm25_index
    assert store is not None
    return store


def test_a_second_model_on_the_same_corpus_reads_the_stored_index_and_ranks_the_same() -> None:
    corpus = _corpus()
    first = BM25Search(workers=1)
    expected = _searched(first, corpus)
    assert first.index_builds == 1
    folders = [p for p in _store().iterdir() if not p.name.startswith(".")]
    assert len(folders) == 1 and (folders[0] / MANIFEST).is_file()
    again = BM25Search(workers=1, k1=0.9, pyserini_ties=True)  # the same weights, another presentation
    again.index(corpus, **COMMON)
    assert again.index_builds == 0
    second = BM25Search(workers=1)
    assert _searched(second, corpus) == expected and second.index_builds == 0
    other = BM25Search(workers=1, k1=1.2, b=0.75)  # other weights: another index beside the first
    assert _searched(other, corpus) != expected and other.index_builds == 1
    assert len([p for p in _store().iterdir() if not p.name.startswith(".")]) == 2


@pytest.mark.parametrize("damage", ["truncated", "edited", "no manifest", "other key"])
def test_a_damaged_or_foreign_index_is_reported_and_built_again(damage: str) -> None:
    corpus = _corpus()
    expected = _searched(BM25Search(workers=1), corpus)
    folder = next(p for p in _store().iterdir() if not p.name.startswith("."))
    postings = folder / POSTINGS
    if damage == "truncated":
        os.truncate(postings, postings.stat().st_size - 4)
    elif damage == "edited":  # found when a search first reads it
        data = bytearray(postings.read_bytes())
        data[:4] = np.float32(99.0).tobytes()
        postings.write_bytes(bytes(data))
    elif damage == "no manifest":  # a build killed before its manifest, renamed into place by hand
        (folder / MANIFEST).unlink()
    else:
        manifest = json.loads((folder / MANIFEST).read_text())
        manifest["key"]["k1"] = 1.5
        (folder / MANIFEST).write_text(json.dumps(manifest))
    model = BM25Search(workers=1)
    with pytest.warns(BM25IndexWarning, match="is not used"):
        assert _searched(model, corpus) == expected
    assert model.index_builds == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt one is sound: read without a warning
        reread = BM25Search(workers=1)
        reread.index(corpus, **COMMON)
    assert reread.index_builds == 0


def test_a_failed_build_leaves_nothing_that_a_later_run_takes_for_an_index() -> None:
    corpus = Dataset.from_dict({"id": ["d1", "d1"], "text": ["a b", "c d"]})
    with pytest.raises(ValueError, match="duplicate document ids"):
        BM25Search(workers=1).index(corpus, **COMMON)
    assert not _store().exists() or list(_store().iterdir()) == []


def test_with_the_store_off_nothing_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(plugin_settings.BM25_INDEX_ENV, "off")
    model = BM25Search(workers=1)
    _searched(model, _corpus())
    folder = model._current.index._scratch.name
    assert Path(folder).is_dir()
    del model
    gc.collect()
    assert not Path(folder).exists()


def test_a_store_that_is_a_file_is_refused_naming_the_variable(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(plugin_settings.BM25_INDEX_ENV, str(tmp_path / "file"))
    with pytest.raises(SettingsError, match="AIRBENCH_MTEB_BM25_INDEX"):
        plugin_settings.current_settings()


# Run as a script: importing the tests' modules would reset the environment (conftest), the store's variable included.
_KILLED_BUILD = """
import sys
import tempfile
from datasets import Dataset
from mteb import TaskMetadata
from airbench_mteb.models import bm25
from airbench_mteb.models.bm25 import build as bm25_build
from airbench_mteb.models.bm25.file_holes import punch_hole
from airbench_mteb.models.bm25 import BM25Search
metadata = TaskMetadata(
    name="Killed", description="d", reference=None, dataset={"path": "NA", "revision": "NA"}, type="Retrieval",
    category="t2t", modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"], main_score="ndcg_at_10",
    date=None, domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None,
    sample_creation=None, bibtex_citation="")
COMMON = {"task_metadata": metadata, "hf_split": "test", "hf_subset": "default", "encode_kwargs": {}}
bm25_build.RUN_PAIRS = 1000
real = bm25_build.IndexWriter._spill
def slow_spill(self):
    real(self)
    print("spilled", flush=True)
    import time; time.sleep(0.5)
bm25_build.IndexWriter._spill = slow_spill
texts = [" ".join(f"w{(i * 7 + j) % 997}" for j in range(40)) for i in range(20000)]
BM25Search(workers=1).index(Dataset.from_dict({"id": [f"d{i}" for i in range(20000)], "text": texts}), **COMMON)
"""


@pytest.mark.slow
def test_a_build_killed_midway_is_never_taken_for_an_index() -> None:
    process = subprocess.Popen([sys.executable, "-c", _KILLED_BUILD], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "spilled"  # a run is on disk: the build is under way
    process.send_signal(signal.SIGKILL)
    process.wait()
    leftovers = list(_store().iterdir())
    assert leftovers and all(p.name.startswith(".") and ".tmp-" in p.name for p in leftovers)
    model = BM25Search(workers=1)
    started = time.perf_counter()
    _searched(model, _corpus())
    assert model.index_builds == 1 and time.perf_counter() - started < 60


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 50), min_size=1, max_size=60), cap=st.integers(1, 120))
def test_batches_are_cut_by_text_bytes_in_order_and_whole(sizes: list[int], cap: int) -> None:
    texts = ["x" * size for size in sizes]
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(len(texts))], "text": texts})
    patch = pytest.MonkeyPatch()
    patch.setattr(bm25, "_BATCH_TEXT_BYTES", cap)
    try:
        batches = list(bm25._arrow_batches(corpus))
    finally:
        patch.undo()
    assert [text for batch in batches for text in batch.column("text").to_pylist()] == texts
    for batch in batches:  # within the cap, or one document alone
        assert batch.num_rows == 1 or sum(map(len, batch.column("text").to_pylist())) <= cap
    for first, second in pairwise(batches):  # each batch as full as the cap allows
        assert sum(map(len, first.column("text").to_pylist())) + len(second.column("text")[0].as_py()) > cap


def _index_folders() -> dict[str, float]:
    """The stored indexes: folder name to the modification time of its manifest."""
    return {p.name: (p / MANIFEST).stat().st_mtime_ns for p in _store().iterdir() if not p.name.startswith(".")}


@pytest.mark.slow
def test_a_second_run_command_reads_the_stored_index_and_arguments_get_their_own(tmp_path: Path) -> None:
    """``airbench-mteb run`` as a user types it, three times on one corpus: the second indexes nothing and gives the
    same results; k1/b given with --model-kwargs build an index of their own beside the first."""
    from tests.conftest import SAMPLE_DATA

    script = str(Path(sys.executable).with_name("airbench-mteb"))

    said: dict[str, str] = {}

    def run(out: str, *extra: str) -> dict:
        command = [script, "run", "-m", "airbench-mteb/bm25", "-t", "CocktailNQUTD", "--eval-splits", "test",
                   "--data-dir", str(SAMPLE_DATA), "--output-folder", str(tmp_path / out), "--no-ci", *extra]
        said[out] = subprocess.run(command, check=True, capture_output=True, text=True).stderr
        return json.loads(next((tmp_path / out).rglob("CocktailNQUTD.json")).read_text())["scores"]

    first = run("first")
    stored = _index_folders()
    assert stored  # one index per corpus the task's subsets use
    assert "reusing the stored index" not in said["first"]
    assert run("second") == first
    # one line per stored index read, at mteb's default verbosity (issue 49)
    assert said["second"].count("reusing the stored index") == len(stored), said["second"]
    assert _index_folders() == stored  # nothing indexed, nothing rewritten
    run("other", "--model-kwargs", "k1=1.2", "b=0.75")
    after = _index_folders()
    assert {name: after[name] for name in stored} == stored and len(after) == 2 * len(stored)


def _fnv1a(text: str) -> int:
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = (value ^ byte) * 0x100000001B3 % 2**64
    return value


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab\u00e9\U0001F600", max_size=4)), st.integers(0, 3))
def test_terms_are_hashed_as_fnv1a_of_their_utf8_bytes_in_any_slice(texts: list[str], start: int) -> None:
    strings = pa.array(texts, pa.string()).slice(min(start, len(texts)))
    assert bm25_build.string_hashes(strings).tolist() == [_fnv1a(text) for text in texts[start:]]


def _weak_hashes(strings: pa.Array) -> np.ndarray:
    return np.array([len(text) % 3 for text in strings.to_pylist()], dtype=np.uint64)  # collisions everywhere


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="ab\u00e9", max_size=3), unique=True), max_size=6), st.booleans())
def test_the_corpus_vocabulary_numbers_terms_by_first_occurrence_even_where_hashes_collide(
        runs: list[list[str]], weak: bool) -> None:
    vocabulary, expected = bm25_build._Vocabulary(), {}
    with mock.patch.object(bm25_build, "string_hashes", _weak_hashes) if weak else contextlib.nullcontext():
        for run in runs:
            ids = vocabulary.global_ids(pa.array(run, pa.string()))
            assert ids.dtype == np.int32
            assert ids.tolist() == [expected.setdefault(term, len(expected)) for term in run]
    assert vocabulary.terms.to_pylist() == list(expected)
