"""The content-keyed embedding cache, with the real bundled all-MiniLM-L6-v2 and real news text (gensim's Lee corpus)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

# `import mteb` below creates its cache folder at once: keep it out of the home directory
os.environ.setdefault("MTEB_CACHE", tempfile.mkdtemp(prefix="mteb-cache-"))

import numpy as np
import pytest
from datasets import Dataset
from mteb import TaskMetadata
from mteb._create_dataloaders import create_dataloader
from mteb.types import PromptType

import airbench_mteb  # noqa: F401  (registers the bundled model aliases)
from airbench_mteb.data.retrieval_data import Document, RetrievalData
from airbench_mteb.models.embedding_cache import (
    CachedEncoder,
    EmbeddingCacheWarning,
    forget_loaded_stores,
    namespace_settings,
    with_embedding_cache,
    wrapper,
)
from airbench_mteb.models.embedding_cache.keys import as_keys
from airbench_mteb.models.embedding_cache.store import _KeyIndex
from airbench_mteb.settings import EMBEDDING_CACHE_ENV as CACHE_ENV
from airbench_mteb.tasks.base import PluginRetrievalTask


def _lee_documents() -> list[str]:
    from gensim.test.utils import datapath

    lines = Path(datapath("lee.cor")).read_text(encoding="latin-1").splitlines()
    # 30 first sentences: short inputs keep the encodes fast
    return [line.split(". ")[0].strip() for line in lines if line.strip()][:30]


LEE = _lee_documents()


def _metadata(name: str) -> TaskMetadata:
    return TaskMetadata(
        name=name, description="Lee news sentences, queried by their first words.", reference=None,
        dataset={"path": "local/lee", "revision": "0"}, type="Retrieval", category="t2t", modalities=["text"],
        eval_splits=["dev", "test"], eval_langs=["eng-Latn"], main_score="ndcg_at_10", date=None, domains=None,
        task_subtypes=None, license=None, annotations_creators=None, dialect=None, sample_creation=None,
        bibtex_citation="")


def _lee_split(split: str) -> RetrievalData:
    """One shared corpus (every other document titled); dev and test query different documents."""
    corpus = {f"d{i}": Document(text=text, title=f"Lee news {i}" if i % 2 else "") for i, text in enumerate(LEE)}
    chosen = range(0, 10) if split == "dev" else range(10, 20)
    queries = {f"q{i}": " ".join(LEE[i].split()[:6]) for i in chosen}
    return RetrievalData(corpus, queries, {f"q{i}": {f"d{i}": 1} for i in chosen})


class LeeTaskA(PluginRetrievalTask):
    metadata = _metadata("CacheTestLeeA")

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        return _lee_split(split)


class LeeTaskB(LeeTaskA):
    metadata = _metadata("CacheTestLeeB")


@pytest.fixture(scope="session")
def minilm() -> Any:
    import mteb

    return mteb.get_model("airbench-mteb/all-MiniLM-L6-v2")


@pytest.fixture(autouse=True)
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "embeddings"
    monkeypatch.setenv(CACHE_ENV, str(root))
    forget_loaded_stores()
    yield root
    forget_loaded_stores()


@pytest.fixture
def calls(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, int]]:
    """Every call reaching the real model: (prompt type, number of inputs)."""
    seen: list[tuple[Any, int]] = []
    encode = type(minilm).encode

    def counting(inputs: Any, **kwargs: Any) -> Any:
        seen.append((kwargs.get("prompt_type"), len(inputs.dataset)))
        return encode(minilm, inputs, **kwargs)

    monkeypatch.setattr(minilm, "encode", counting)
    return seen


def _texts_encoded(calls: list[tuple[Any, int]]) -> int:
    """Texts the model has encoded so far (a block may take several calls: one per run of one length)."""
    return sum(n for _, n in calls)


def _documents_loader(texts: list[str], titles: list[str] | None = None) -> Any:
    columns = {"id": [f"d{i}" for i in range(len(texts))], "text": texts}
    if titles is not None:
        columns["title"] = titles
    return create_dataloader(Dataset.from_dict(columns), task_metadata=LeeTaskA.metadata,
                             prompt_type=PromptType.document, batch_size=8)


def _encode(model: Any, loader: Any, prompt_type: PromptType = PromptType.document) -> np.ndarray:
    return np.asarray(model.encode(loader, task_metadata=LeeTaskA.metadata, hf_split="test", hf_subset="default",
                                   prompt_type=prompt_type, batch_size=8, show_progress_bar=False))


def _shards(root: Path) -> list[Path]:
    return sorted(root.rglob("*.npy"))


@pytest.mark.slow
def test_cached_vectors_equal_uncached_ones_in_input_order(minilm: Any, calls: list) -> None:
    titles = [f"Lee news {i}" if i % 3 == 0 else "" for i in range(len(LEE))]
    plain = _encode(minilm, _documents_loader(LEE, titles))
    cached = with_embedding_cache(minilm)
    assert isinstance(cached, CachedEncoder)

    encoded = [_texts_encoded(calls)]
    half = _encode(cached, _documents_loader(LEE[::2], titles[::2]))  # stores every other document
    encoded.append(_texts_encoded(calls))
    mixed = _encode(cached, _documents_loader(LEE, titles))  # half from the store, half encoded now
    encoded.append(_texts_encoded(calls))
    warm = _encode(cached, _documents_loader(LEE, titles))
    encoded.append(_texts_encoded(calls))

    np.testing.assert_allclose(half, plain[::2], atol=1e-6)
    np.testing.assert_allclose(mixed, plain, atol=1e-6)
    np.testing.assert_allclose(warm, plain, atol=1e-6)
    assert np.diff([0, *encoded]).tolist() == [len(LEE), (len(LEE) + 1) // 2, len(LEE) // 2, 0]


@pytest.mark.slow
def test_second_encode_of_a_corpus_does_not_call_the_model(minilm: Any, calls: list) -> None:
    first = _encode(with_embedding_cache(minilm), _documents_loader(LEE))
    assert _texts_encoded(calls) == len(LEE)
    forget_loaded_stores()  # as a new process would: read back from disk
    second = _encode(with_embedding_cache(minilm), _documents_loader(LEE))
    assert _texts_encoded(calls) == len(LEE)
    np.testing.assert_array_equal(first, second)


def test_repeated_texts_in_one_input_are_encoded_once(minilm: Any, calls: list) -> None:
    texts = LEE[:5] * 3
    vectors = _encode(with_embedding_cache(minilm), _documents_loader(texts))
    assert calls == [(PromptType.document, 5)]
    np.testing.assert_array_equal(vectors[:5], vectors[10:])


@pytest.mark.slow
def test_a_corpus_shared_by_splits_and_tasks_is_encoded_once(minilm: Any, calls: list,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import mteb

    def main_scores(task: PluginRetrievalTask) -> dict[str, float]:
        result = mteb.evaluate(minilm, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
        scores = result.task_results[0].scores
        return {split: scores[split][0]["ndcg_at_10"] for split in ("dev", "test")}

    first, second = main_scores(LeeTaskA()), main_scores(LeeTaskB())
    documents = [n for prompt_type, n in calls if prompt_type == PromptType.document]
    assert documents == [len(LEE)]  # two tasks x two splits, one encode of the corpus

    monkeypatch.setenv(CACHE_ENV, "off")
    uncached = main_scores(LeeTaskA())
    assert [n for prompt_type, n in calls if prompt_type == PromptType.document][1:] == [len(LEE)] * 2
    for split in ("dev", "test"):
        assert first[split] == pytest.approx(uncached[split], abs=1e-6)
        assert second[split] == pytest.approx(uncached[split], abs=1e-6)


@pytest.mark.slow
def test_prompt_type_and_applied_prompt_are_part_of_the_key(minilm: Any, calls: list, cache_root: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cached = with_embedding_cache(minilm)
    texts = LEE[:6]
    as_document = _encode(cached, _documents_loader(texts), PromptType.document)
    _encode(cached, _documents_loader(texts), PromptType.query)
    assert [n for _, n in calls] == [6, 6]
    assert len(_shards(cache_root)) == 2

    # a prompt for one task only: that task gets its own vectors, other tasks keep sharing
    monkeypatch.setattr(minilm, "model_prompts", {"query": "", "document": "",
                                                  "CacheTestLeeB-document": "Represent this news: "})
    def encode_for(task: type[PluginRetrievalTask]) -> np.ndarray:
        return np.asarray(cached.encode(_documents_loader(texts), task_metadata=task.metadata, hf_split="test",
                                        hf_subset="default", prompt_type=PromptType.document, batch_size=8,
                                        show_progress_bar=False))

    np.testing.assert_array_equal(encode_for(LeeTaskA), as_document)
    assert len(calls) == 2
    prompted = encode_for(LeeTaskB)
    assert len(calls) == 3
    assert not np.allclose(prompted, as_document, atol=1e-3)


def test_settings_that_change_vectors_change_the_namespace(minilm: Any) -> None:
    meta = LeeTaskA.metadata
    base = namespace_settings(minilm, meta, PromptType.document, {"batch_size": 8})
    assert base == namespace_settings(minilm, meta, PromptType.document, {"batch_size": 64, "show_progress_bar": False})
    assert base == namespace_settings(minilm, LeeTaskB.metadata, PromptType.document, {})  # not the task name
    assert base != namespace_settings(minilm, meta, PromptType.query, {})
    assert base != namespace_settings(minilm, meta, PromptType.document, {"precision": "int8"})


@pytest.mark.parametrize("value", ["0", "off", "OFF"])
def test_cache_switched_off_by_environment(minilm: Any, cache_root: Path, monkeypatch: pytest.MonkeyPatch,
                                           value: str) -> None:
    monkeypatch.setenv(CACHE_ENV, value)
    assert with_embedding_cache(minilm).root is None  # the wrapper without its store
    monkeypatch.setenv(CACHE_ENV, str(cache_root))
    assert with_embedding_cache(minilm).root == cache_root


@pytest.mark.parametrize("store", [True, False])
@pytest.mark.slow
def test_blocks_are_encoded_longest_first_and_returned_in_input_order(minilm: Any, cache_root: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      store: bool) -> None:
    texts = LEE[:12]
    plain = _encode(minilm, _documents_loader(texts))
    seen: list[str] = []
    encode = type(minilm).encode

    def recording(inputs: Any, **kwargs: Any) -> Any:
        seen.extend(text for batch in inputs for text in batch["text"])
        return encode(minilm, inputs, **kwargs)

    monkeypatch.setattr(minilm, "encode", recording)
    if not store:
        monkeypatch.setenv(CACHE_ENV, "off")
    vectors = _encode(with_embedding_cache(minilm), _documents_loader(texts))
    tokens = [len(ids) for ids in minilm.model.tokenizer(texts)["input_ids"]]  # the model's own count
    assert seen == [text for _, text in sorted(zip(tokens, texts, strict=True), key=lambda pair: -pair[0])]
    np.testing.assert_allclose(vectors, plain, atol=1e-6)


@pytest.mark.parametrize("store", [True, False])
@pytest.mark.slow
def test_length_order_pads_less_than_the_model_sorting_by_characters(minilm: Any, monkeypatch: pytest.MonkeyPatch,
                                                                    store: bool) -> None:
    """Padded tokens the model runs over the real ones, the Lee corpus in batches of 8."""
    import torch

    cells = {"padded": 0, "real": 0}

    def count(module: torch.nn.Module, args: tuple) -> None:
        if type(module).__name__ == "Transformer" and args and isinstance(args[0], Mapping) and "attention_mask" in args[0]:
            cells["padded"] += args[0]["attention_mask"].numel()
            cells["real"] += int(args[0]["attention_mask"].sum())

    hook = torch.nn.modules.module.register_module_forward_pre_hook(count)
    try:
        plain = _encode(minilm, _documents_loader(LEE))
        by_characters = cells["padded"] / cells["real"]
        cells.update(padded=0, real=0)
        if not store:
            monkeypatch.setenv(CACHE_ENV, "off")
        ordered = _encode(with_embedding_cache(minilm), _documents_loader(LEE))
    finally:
        hook.remove()
    assert cells["padded"] / cells["real"] < by_characters
    np.testing.assert_allclose(ordered, plain, atol=1e-6)


@pytest.mark.slow
def test_truncated_or_unfinished_shards_are_skipped(minilm: Any, calls: list, cache_root: Path) -> None:
    texts = LEE[:10]
    expected = _encode(with_embedding_cache(minilm), _documents_loader(texts))
    (vectors,) = _shards(cache_root)
    vectors.write_bytes(vectors.read_bytes()[:-100])

    # damaged while this process has it indexed
    with pytest.warns(EmbeddingCacheWarning, match="cannot read"):
        during = _encode(with_embedding_cache(minilm), _documents_loader(texts))
    np.testing.assert_allclose(during, expected, atol=1e-6)
    # damaged before a process reads it
    forget_loaded_stores()
    with pytest.warns(EmbeddingCacheWarning, match=vectors.name):
        again = _encode(with_embedding_cache(minilm), _documents_loader(texts))
    np.testing.assert_allclose(again, expected, atol=1e-6)
    assert _texts_encoded(calls) == 3 * len(texts)  # each damaged read encodes all ten again

    # a shard whose keys never got renamed into place (a crash between the two renames) is not read
    for keys in cache_root.rglob("*.keys"):
        keys.unlink()
    forget_loaded_stores()
    _encode(with_embedding_cache(minilm), _documents_loader(texts))
    assert _texts_encoded(calls) == 4 * len(texts)


def _flip_sign_bits(path: Path) -> None:
    """Flip the sign of every stored value in place: same size, same header, every number changed."""
    with path.open("r+b") as handle:
        np.lib.format.read_magic(handle)
        np.lib.format.read_array_header_1_0(handle)
        start = handle.tell()
        data = bytearray(handle.read())
        data[3::4] = bytes(b ^ 0x80 for b in data[3::4])  # little-endian float32: the sign is the 4th byte's top bit
        handle.seek(start)
        handle.write(data)


@pytest.mark.slow
def test_a_shard_with_flipped_bytes_is_reported_and_recomputed_never_used(minilm: Any, calls: list,
                                                                          cache_root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import mteb

    def scores() -> dict[str, float]:
        result = mteb.evaluate(minilm, LeeTaskA(), cache=None, overwrite_strategy="always", show_progress_bar=False)
        values = result.task_results[0].scores
        return {split: values[split][0]["ndcg_at_10"] for split in ("dev", "test")}

    first = scores()
    (documents,) = [p for p in _shards(cache_root) if p.parent.name.startswith("document")]
    size = documents.stat().st_size
    _flip_sign_bits(documents)
    assert documents.stat().st_size == size
    forget_loaded_stores()  # a later run
    with pytest.warns(EmbeddingCacheWarning, match=f"{documents}.*does not match the checksum"):
        after = scores()
    assert not documents.with_suffix(".keys").exists()
    assert documents.with_suffix(".keys.damaged").exists()
    monkeypatch.setenv(CACHE_ENV, "off")
    cold = scores()
    for split in ("dev", "test"):
        assert after[split] == pytest.approx(cold[split], abs=1e-6)
        assert first[split] == pytest.approx(cold[split], abs=1e-6)
    # the set-aside file really holds other numbers than the shard written in its place
    (recomputed,) = [p for p in _shards(cache_root) if p.parent == documents.parent and p != documents]
    np.testing.assert_allclose(np.load(documents), -np.load(recomputed), atol=1e-6)
    assert cold["test"] > 0


def test_keys_that_do_not_match_their_checksum_are_skipped(minilm: Any, calls: list, cache_root: Path) -> None:
    expected = _encode(with_embedding_cache(minilm), _documents_loader(LEE[:6]))
    (keys,) = cache_root.rglob("*.keys")
    data = bytearray(keys.read_bytes())
    data[5] ^= 0x01  # one bit of the first key: it would now name another text
    keys.write_bytes(bytes(data))
    forget_loaded_stores()
    with pytest.warns(EmbeddingCacheWarning, match=f"{keys.stem}.npy.*do not match the checksum"):
        again = _encode(with_embedding_cache(minilm), _documents_loader(LEE[:6]))
    np.testing.assert_allclose(again, expected, atol=1e-6)
    assert [n for _, n in calls] == [6, 6]


def test_shards_without_a_checksum_are_never_read(minilm: Any, calls: list, cache_root: Path) -> None:
    _encode(with_embedding_cache(minilm), _documents_loader(LEE[:4]))
    (keys,) = cache_root.rglob("*.keys")
    keys.write_bytes(keys.read_bytes()[:4 * 16])  # the keys as format 1 wrote them, no trailer
    forget_loaded_stores()
    with pytest.warns(EmbeddingCacheWarning, match="no checksum trailer"):
        _encode(with_embedding_cache(minilm), _documents_loader(LEE[:4]))
    assert len(calls) == 2


@pytest.mark.slow
def test_interrupted_encoding_resumes_from_the_saved_chunks(minilm: Any, calls: list,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wrapper, "CHUNK_SIZE", 10)
    encode = minilm.encode

    def crash_on_third_chunk(inputs: Any, **kwargs: Any) -> Any:
        if _texts_encoded(calls) >= 20:
            raise KeyboardInterrupt
        return encode(inputs, **kwargs)

    monkeypatch.setattr(minilm, "encode", crash_on_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        _encode(with_embedding_cache(minilm), _documents_loader(LEE[:25]))
    monkeypatch.setattr(minilm, "encode", encode)
    forget_loaded_stores()
    before = _texts_encoded(calls)
    _encode(with_embedding_cache(minilm), _documents_loader(LEE[:25]))
    assert (before, _texts_encoded(calls) - before) == (20, 5)  # the two chunks saved before the crash are not redone


def test_key_index_finds_every_key_across_merged_runs() -> None:
    rng = np.random.default_rng(0)
    keys = as_keys(rng.bytes(16 * 5000)).copy()
    keys[100:110, 0] = keys[99, 0]  # same first 64 bits: only the last 64 tell these apart
    index = _KeyIndex()
    start = 0
    for size in (1, 7, 1000, 3, 2000, 1989):  # runs of very different sizes, merged as they come
        index.add(keys[start:start + size], start)
        start += size
    np.testing.assert_array_equal(index.locate(keys), np.arange(5000))
    unknown = as_keys(rng.bytes(16 * 50)).copy()
    unknown[0, 0] = keys[99, 0]
    assert (index.locate(unknown) == -1).all()


def test_an_unwritable_cache_warns_and_keeps_vectors_in_memory(minilm: Any, calls: list, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "embeddings"))
    with pytest.warns(EmbeddingCacheWarning, match="cannot write"):
        first = _encode(with_embedding_cache(minilm), _documents_loader(LEE[:4]))
    second = _encode(with_embedding_cache(minilm), _documents_loader(LEE[:4]))
    assert len(calls) == 1
    np.testing.assert_array_equal(first, second)


class TinySearchModel:
    """Indexes and searches by itself: the cache has nothing to add."""

    mteb_model_meta = None

    def index(self, corpus: Any, **kwargs: Any) -> None:
        self.corpus = corpus

    def search(self, queries: Any, **kwargs: Any) -> dict[str, dict[str, float]]:
        return {}

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        return np.zeros((len(inputs.dataset), 2))

    def similarity(self, a: Any, b: Any) -> Any:
        return a @ b.T

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        return (a * b).sum(-1)


def test_models_the_cache_cannot_serve_are_returned_unchanged_or_without_store(minilm: Any,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    search_model = TinySearchModel()
    assert with_embedding_cache(search_model) is search_model
    assert with_embedding_cache("not a model") == "not a model"
    cached = with_embedding_cache(minilm)
    assert with_embedding_cache(cached) is cached  # never wrapped twice
    unnamed = minilm.mteb_model_meta.model_copy(update={"revision": "no_revision_available"})
    monkeypatch.setattr(minilm, "mteb_model_meta", unnamed)
    without_store = with_embedding_cache(minilm)  # nothing to key vectors on: length order only
    assert without_store.wrapped is minilm and without_store.root is None


def test_wrapper_delegates_what_it_does_not_override(minilm: Any) -> None:
    from mteb.models import CrossEncoderProtocol, EncoderProtocol, SearchProtocol

    cached = with_embedding_cache(minilm)
    assert isinstance(cached, EncoderProtocol)
    assert not isinstance(cached, SearchProtocol | CrossEncoderProtocol)
    assert cached.mteb_model_meta is minilm.mteb_model_meta
    assert cached.model is minilm.model
    a = np.eye(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(cached.similarity(a, a)), np.asarray(minilm.similarity(a, a)))


@pytest.mark.parametrize(("user_setting", "inside"), [(None, "true"), ("false", "false")])
def test_the_tokenizer_has_its_threads_while_encoding_unless_the_user_said_otherwise(
        minilm: Any, monkeypatch: pytest.MonkeyPatch, user_setting: str | None, inside: str) -> None:
    from airbench_mteb.models import tokenizer_threads

    monkeypatch.setattr(tokenizer_threads, "USER_SETTING", user_setting)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # as mteb's command line sets it for the whole run
    during: list[str | None] = []
    encode = type(minilm).encode

    def recording(inputs: Any, **kwargs: Any) -> Any:
        during.append(os.environ.get("TOKENIZERS_PARALLELISM"))
        return encode(minilm, inputs, **kwargs)

    monkeypatch.setattr(minilm, "encode", recording)
    _encode(with_embedding_cache(minilm), _documents_loader(LEE[:4]))
    assert set(during) == {inside}
    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"  # put back before anything can fork


def test_sentence_transformers_vectors_stay_on_the_device_and_come_back_as_numpy(minilm: Any,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from airbench_mteb.mteb_compat import vectors_on_device_kwargs

    assert vectors_on_device_kwargs(minilm) == {"convert_to_tensor": True}
    assert vectors_on_device_kwargs(TinySearchModel()) == {}
    arguments: list[dict[str, Any]] = []
    encode = type(minilm).encode

    def recording(inputs: Any, **kwargs: Any) -> Any:
        arguments.append(kwargs)
        return encode(minilm, inputs, **kwargs)

    monkeypatch.setattr(minilm, "encode", recording)
    monkeypatch.setenv(CACHE_ENV, "off")
    vectors = with_embedding_cache(minilm).encode(_documents_loader(LEE[:4]), task_metadata=LeeTaskA.metadata,
                                                  hf_split="test", hf_subset="default",
                                                  prompt_type=PromptType.document, batch_size=8)
    assert all(call["convert_to_tensor"] is True for call in arguments)
    assert isinstance(vectors, np.ndarray) and vectors.dtype == np.float32


@pytest.mark.parametrize("seed", range(5))
def test_encode_calls_are_whole_batches_each_of_one_length_or_one_batch(seed: int) -> None:
    """So the model's own sort within a call cannot put texts of other lengths in one batch."""
    from airbench_mteb.models.embedding_cache.ordering import encode_calls

    rng = np.random.default_rng(seed)
    lengths = np.sort(rng.geometric(0.05 if seed % 2 else 0.5, size=int(rng.integers(1, 400))))[::-1]
    calls = encode_calls(lengths, batch_size=8)
    assert [c.start for c in calls] == [0, *[c.stop for c in calls[:-1]]] and calls[-1].stop == len(lengths)
    for call in calls:
        assert call.start % 8 == 0
        assert len(set(lengths[call].tolist())) == 1 or call.stop - call.start <= 8
    batches = -(-len(lengths) // 8)
    mixed_batches = sum(1 for start in range(0, len(lengths), 8) if lengths[start] != lengths[min(start + 8, len(lengths)) - 1])
    assert len(calls) <= mixed_batches + len(set(lengths.tolist())) and len(calls) <= batches


@pytest.mark.parametrize("limit", [256, 16])
def test_token_counts_are_the_models_own(minilm: Any, monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    from airbench_mteb.models.embedding_cache.ordering import token_counter

    monkeypatch.setattr(minilm.model, "max_seq_length", limit)
    texts = [*LEE[:20], "", " ", "word " * 600, "北京 \u3000 x", "emoji \U0001f600 ok"]
    tokenizer = minilm.model.tokenizer
    expected = tokenizer(texts, return_length=True, truncation=True, max_length=limit)["length"]
    assert token_counter(minilm)(texts).tolist() == list(expected)
    assert max(expected) == limit  # the long text was cut where the model cuts it


def test_a_process_forked_after_the_tokenizer_threads_ran_still_tokenizes(minilm: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork deadlock the variable guards against: the parent runs the tokenizer's thread pool, then forks;
    the child must not turn the threads on again (it inherits the pool without its threads and would hang)."""
    import multiprocessing

    from airbench_mteb.models import tokenizer_threads
    from airbench_mteb.models.embedding_cache.ordering import token_counter

    monkeypatch.setattr(tokenizer_threads, "USER_SETTING", None)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    count = token_counter(minilm)
    texts = LEE * 40  # enough for the tokenizer to split the batch over its threads
    expected = count(texts)  # the pool runs in this process
    child = multiprocessing.get_context("fork").Process(target=count, args=(texts,))
    child.start()
    child.join(timeout=60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung and child.exitcode == 0
    assert len(expected) == len(texts)


def test_encoding_into_the_cache_shows_progress_in_texts(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: the bundled multilingual-e5-small printed nothing for minutes into a pipe; the cache encoded a
    corpus under one chunk (4,096 texts) without any bar, and a larger one with a bar of chunks."""
    import mteb

    e5 = with_embedding_cache(mteb.get_model("airbench-mteb/multilingual-e5-small"))
    assert isinstance(e5, CachedEncoder)
    texts = list(dict.fromkeys(LEE))[:12]
    e5.encode(_documents_loader(texts), task_metadata=LeeTaskA.metadata, hf_split="test", hf_subset="default",
              prompt_type=PromptType.document, batch_size=4)
    bar = [line for line in capsys.readouterr().err.split("\r") if line.startswith("Encoding missing items")]
    assert bar and "12/12" in bar[-1] and "text" in bar[-1]
    assert len(bar) > 2  # advanced call by call, not only opened and closed
