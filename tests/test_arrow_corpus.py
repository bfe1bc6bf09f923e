"""Corpora as memory-mapped Arrow: built once from JSON lines, validated while streaming, hub splits checked in batches."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from datasets import Dataset, load_from_disk

from airbench_mteb.data import DatasetError
from airbench_mteb.data.arrow_corpus import check_arrow_corpus, corpus_from_jsonl, missing_ids


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_built_once_memory_mapped_and_rebuilt_when_the_file_changes(tmp_path: Path) -> None:
    source = _write(tmp_path / "corpus.jsonl", [{"id": f"d{i}", "text": f"text {i} café"} for i in range(20_000)])
    cache = tmp_path / "cache"
    corpus = corpus_from_jsonl(source, cache_dir=cache)
    assert len(corpus) == 20_000 and corpus[12_345] == {"id": "d12345", "text": "text 12345 café"}
    built = [Path(f["filename"]) for f in corpus.cache_files]
    assert len(built) == 1 and built[0].parent == cache  # the rows are read from the Arrow file, not from memory
    stamp = built[0].stat().st_mtime_ns
    assert corpus_from_jsonl(source, cache_dir=cache).cache_files == corpus.cache_files
    assert built[0].stat().st_mtime_ns == stamp  # not written again

    _write(source, [{"id": "d0", "text": "changed"}])
    os.utime(source, ns=(stamp + 10**9, stamp + 10**9))
    assert corpus_from_jsonl(source, cache_dir=cache)["text"] == ["changed"]


def test_titles_kept_on_request_and_integer_ids_become_strings(tmp_path: Path) -> None:
    source = _write(tmp_path / "c.jsonl", [{"_id": 7, "title": "T", "text": ""}, {"_id": "8", "text": "x"}])
    corpus = corpus_from_jsonl(source, id_key="_id", keep_titles=True, cache_dir=tmp_path / "cache")
    assert corpus.column_names == ["id", "title", "text"]
    assert corpus[:] == {"id": ["7", "8"], "title": ["T", ""], "text": ["", "x"]}


@pytest.mark.parametrize(("rows", "message"), [
    ([{"id": "a", "text": "x"}, {"id": "b", "text": "  "}], r"c\.jsonl, line 2: id 'b': empty 'text'"),
    ([{"id": "a", "text": "x"}, {"text": "y"}], r"c\.jsonl, line 2: missing field 'id'"),
    ([{"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}],
     r"c\.jsonl, line 3: id 'a': duplicate document id \(first seen on line 1\)"),
])
def test_bad_lines_are_named_and_nothing_is_left_in_the_cache(tmp_path: Path, rows: list[dict], message: str) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(DatasetError, match=message):
        corpus_from_jsonl(_write(tmp_path / "c.jsonl", rows), cache_dir=cache)
    assert not any(cache.iterdir())  # no half-written Arrow file


def _hub_like(tmp_path: Path, ids: list, texts: list) -> Dataset:
    """A split as ``datasets.load_dataset`` returns it: memory-mapped Arrow on disk."""
    Dataset.from_dict({"id": ids, "text": texts}).save_to_disk(tmp_path / "split")
    return load_from_disk(tmp_path / "split")


def test_hub_split_is_checked_in_batches_and_kept_as_arrow(tmp_path: Path) -> None:
    corpus = check_arrow_corpus(_hub_like(tmp_path, list(range(10_000)), [f"t{i}" for i in range(10_000)]), "hub/corpus")
    assert corpus.features["id"].dtype == "string" and corpus[9_999] == {"id": "9999", "text": "t9999"}
    assert corpus.cache_files
    assert missing_ids(corpus, ["5", "nope", "9999", "nope"]) == ["nope"]
    # a selection hides the other rows: their ids are missing from it
    assert missing_ids(corpus.select([5, 3, 8]), ["5", "9999", "nope", "8"]) == ["9999", "nope"]


@pytest.mark.parametrize(("ids", "texts", "message"), [
    (["a", "b", "c"], ["x", "", "z"], r"hub/corpus, line 2: id 'b': empty document text"),
    (["a", "b", "c"], ["x", None, "z"], r"hub/corpus, line 2: id 'b': empty document text"),
    # blank as a JSON-lines text is blank (Python's str.strip): only white space such as U+001C and U+3000
    (["a", "b", "c"], ["x", "\x1c \u3000", "z"], r"hub/corpus, line 2: id 'b': empty document text"),
    (["a", "b", "a"], ["x", "y", "z"], r"hub/corpus, line 3: id 'a': duplicate document id \(first seen on row 1\)"),
])
def test_bad_hub_rows_are_named(tmp_path: Path, ids: list, texts: list, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        check_arrow_corpus(_hub_like(tmp_path, ids, texts), "hub/corpus")


def test_hub_path_checks_corpus_and_qrels_as_the_mirror_path_does(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub branch of the AIR-Bench loader, fed with splits as ``datasets.load_dataset`` returns them
    (memory-mapped Arrow made by the test; the hub itself is out of reach here)."""
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data import airbench_source

    entry = next(e for e in airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    splits = {entry.corpus_location(): {"id": ["d1", "d2"], "text": ["one", "two"]},
              entry.queries_location("dev"): {"id": ["q1"], "text": ["which one"]},
              entry.qrels_location("dev"): {"qid": ["q1", "q1"], "docid": ["d1", "d2"], "relevance": [1, 0]}}

    def hub_dataset(entry_: object, location: tuple[str, str], split: str | None = None) -> Dataset:
        folder = tmp_path / "_".join(location).replace("/", "_")
        Dataset.from_dict(splits[location]).save_to_disk(folder)
        return load_from_disk(folder)

    monkeypatch.setattr(airbench_source, "_hub_dataset", hub_dataset)
    data = airbench_source.load_split(entry, "dev", None)
    assert data.qrels == {"q1": {"d1": 1, "d2": 0}} and data.corpus.cache_files and len(data.corpus) == 2
    splits[entry.qrels_location("dev")]["relevance"] = [1, 4294967298]
    with pytest.raises(DatasetError, match=r"qrels-qa_news_en-dev/qrels_default_dev, line 2: .*4294967298"):
        airbench_source.load_split(entry, "dev", None)
