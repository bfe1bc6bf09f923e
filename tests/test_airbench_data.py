"""Data layer: every kind of bad input names the file and the line or id; nothing half written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from airbench_mteb.catalog import airbench_entries
from airbench_mteb.data import DatasetError
from airbench_mteb.data.airbench_source import load_split, mirror_file, qrels_available
from airbench_mteb.data.files import write_jsonl

NAME = "AIR-Bench_24.05_qa_news_en"


@pytest.fixture()
def mirror(airbench_mirror: Path, tmp_path: Path) -> Path:
    """A private copy of the session mirror that a test may break."""
    copy = tmp_path / "mirror"
    shutil.copytree(airbench_mirror, copy)
    return copy


@pytest.fixture()
def entry():
    return next(e for e in airbench_entries() if e.task_name == NAME)


def _corpus(mirror: Path, entry) -> Path:
    return mirror_file(mirror, entry, entry.corpus_location())


def _rewrite_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_loads_dev_and_test_with_hard_negatives(mirror: Path, entry) -> None:
    dev = load_split(entry, "dev", mirror)
    assert len(dev.queries) == 12 and len(dev.corpus) == 120
    assert all(sorted(docs.values()) == [0, 0, 1] for docs in dev.qrels.values())
    test = load_split(entry, "test", mirror, corpus=dev.corpus)
    assert not set(test.queries) & set(dev.queries)


def test_missing_file(mirror: Path, entry) -> None:
    _corpus(mirror, entry).unlink()
    with pytest.raises(DatasetError, match=r"corpus_default\.jsonl: file not found"):
        load_split(entry, "dev", mirror)


def test_malformed_json_line(mirror: Path, entry) -> None:
    _rewrite_line(_corpus(mirror, entry), 7, '{"id": "doc-6", "text": ')
    with pytest.raises(DatasetError, match=r"corpus_default\.jsonl, line 7: malformed JSON"):
        load_split(entry, "dev", mirror)


def test_duplicate_document_id(mirror: Path, entry) -> None:
    _rewrite_line(_corpus(mirror, entry), 5, json.dumps({"id": "doc-0", "text": "again"}))
    with pytest.raises(DatasetError, match=r"line 5: id 'doc-0': duplicate document id \(first seen on line 1\)"):
        load_split(entry, "dev", mirror)


def test_duplicate_query_id(mirror: Path, entry) -> None:
    path = mirror_file(mirror, entry, entry.queries_location("dev"))
    _rewrite_line(path, 2, json.dumps({"id": "q-dev-0", "text": "twice"}))
    with pytest.raises(DatasetError, match=r"queries_default_dev\.jsonl, line 2: id 'q-dev-0': duplicate query id"):
        load_split(entry, "dev", mirror)


def test_qrels_naming_unknown_query_or_document(mirror: Path, entry) -> None:
    path = mirror_file(mirror, entry, entry.qrels_location("dev"))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    write_jsonl(path, [*rows, {"qid": "q-nobody", "docid": "doc-1", "relevance": 1}])
    with pytest.raises(DatasetError, match=r"qrels_default_dev\.jsonl: id 'q-nobody': qrels name query 'q-nobody'"):
        load_split(entry, "dev", mirror)
    write_jsonl(path, [*rows, {"qid": "q-dev-0", "docid": "doc-ghost", "relevance": 1}])
    with pytest.raises(DatasetError, match=r"id 'doc-ghost': .*not in the corpus .*corpus_default\.jsonl"):
        load_split(entry, "dev", mirror)


def test_empty_text(mirror: Path, entry) -> None:
    _rewrite_line(_corpus(mirror, entry), 3, json.dumps({"id": "doc-2", "text": "  "}))
    with pytest.raises(DatasetError, match=r"line 3: id 'doc-2': empty 'text'"):
        load_split(entry, "dev", mirror)


def test_non_numeric_score(mirror: Path, entry) -> None:
    path = mirror_file(mirror, entry, entry.qrels_location("dev"))
    _rewrite_line(path, 4, json.dumps({"qid": "q-dev-1", "docid": "doc-1", "relevance": "high"}))
    with pytest.raises(DatasetError, match=r"qrels_default_dev\.jsonl, line 4: relevance score 'high' is not a number"):
        load_split(entry, "dev", mirror)


def test_undecodable_bytes(mirror: Path, entry) -> None:
    path = mirror_file(mirror, entry, entry.queries_location("dev"))
    data = path.read_bytes().splitlines(keepends=True)
    data[2] = b'{"id": "q-bad", "text": "caf\xe9"}\n'
    path.write_bytes(b"".join(data))
    with pytest.raises(DatasetError, match=r"queries_default_dev\.jsonl, line 3: not valid UTF-8"):
        load_split(entry, "dev", mirror)


def test_test_qrels_missing_from_mirror_make_a_closed_book_split(mirror: Path, entry) -> None:
    mirror_file(mirror, entry, entry.qrels_location("test")).unlink()
    test = load_split(entry, "test", mirror)
    assert test.qrels == {} and len(test.queries) == 12 and len(test.corpus) == 120


def test_gated_hub_qrels_without_token_are_closed_book(entry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert not qrels_available(entry, "test", None) and qrels_available(entry, "dev", None)
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    assert qrels_available(entry, "test", None)


def test_failed_write_leaves_previous_file_intact(tmp_path: Path) -> None:
    target = tmp_path / "corpus.jsonl"
    write_jsonl(target, [{"id": "a", "text": "kept"}])

    def rows():
        yield {"id": "b", "text": "half"}
        raise RuntimeError("crash while writing")

    with pytest.raises(RuntimeError):
        write_jsonl(target, rows())
    assert target.read_text() == '{"id": "a", "text": "kept"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.jsonl"]
