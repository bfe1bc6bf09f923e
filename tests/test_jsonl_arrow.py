"""Arrow's JSON reader is used only where it reads what the line reader reads: same rows, or a fall back."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from airbench_mteb.data import DatasetError, jsonl_arrow
from airbench_mteb.data.arrow_corpus import BATCH_ROWS, JsonlCorpusBuilder, _schema, corpus_from_jsonl
from airbench_mteb.data.jsonl_arrow import NotProvablySame, arrow_batches


def _line_reader(path: Path, keep_titles: bool) -> list[tuple[str, str, str]] | str:
    """The reference: the rows the line-by-line reader gives, or its error."""
    try:
        return [row[1:] for row in JsonlCorpusBuilder(path, id_key="id", keep_titles=keep_titles).rows()]
    except DatasetError as error:
        return f"error: {error}"


def _fast_reader(path: Path, keep_titles: bool, batch_rows: int = BATCH_ROWS) -> list[tuple[str, str, str]] | None:
    """The rows Arrow's path gives, or None where it falls back."""
    try:
        batches = list(arrow_batches(path, id_key="id", keep_titles=keep_titles, schema=_schema(keep_titles),
                                     batch_rows=batch_rows))
    except NotProvablySame:
        return None
    table = pa.Table.from_batches(batches, schema=_schema(keep_titles))
    titles = table.column("title").to_pylist() if keep_titles else [""] * table.num_rows
    return list(zip(table.column("id").to_pylist(), titles, table.column("text").to_pylist(), strict=True))


# Lines the line reader takes, which Arrow's path must read (no fall back) to the same rows.
READ_BY_ARROW = {
    "string ids": b'{"id": "a", "text": "x"}\n{"id": "b", "text": "y z"}\n',
    "integer ids": b'{"id": 7, "text": "x"}\n{"id": -0, "text": "y"}\n{"id": 9007199254740993, "text": "z"}\n',
    "no final line end": b'{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}',
    "CRLF": b'{"id": "a", "text": "x"}\r\n{"id": "b", "text": "y"}\r\n',
    "escapes": b'{"id": "a\\/b", "text": "caf\\u00E9 \\ud83d\\ude00 \\"q\\" \\n"}\n',
    "non-ASCII": '{"id": "é", "text": "北京 \u3000 x"}\n'.encode(),
    "other fields of changing types": b'{"id": "a", "text": "x", "m": 1, "n": NaN}\n'
                                      b'{"id": "b", "text": "y", "m": "s", "n": -Infinity, "o": [1, {"p": null}]}\n',
    "escaped key": b'{"\\u0069d": "a", "text": "x"}\n',
    "blank lines and white space": b'\n  {"id": "a", "text": "x"} \r\n\n \t\r\n{"id": "b", "text": "y"}\n\n',
    "title absent, null or empty": b'{"id": "a", "title": "T", "text": ""}\n{"id": "b", "text": "y"}\n'
                                   b'{"id": "c", "title": null, "text": "z"}\n{"id": "d", "title": " ", "text": ""}\n',
}

# Lines Arrow parses but the line reader does not take as they stand: the path must fall back.
FALLS_BACK = {
    "two objects on a line": b'{"id": "a", "text": "x"} {"id": "b", "text": "y"}\n',
    "two objects and a blank line": b'{"id": "a", "text": "x"} {"id": "b", "text": "y"}\n\n',
    "objects split by CR": b'{"id": "a", "text": "x"}\r{"id": "b", "text": "y"}\n',
    "escaped NUL in text": b'{"id": "a", "text": "x\\u0000y"}\n',
    "escaped NUL elsewhere": b'{"id": "a", "text": "x", "m": "\\u0000"}\n',
    "lone surrogate elsewhere": b'{"id": "a", "text": "x", "m": "\\uDC00"}\n',
    "not UTF-8 elsewhere": b'{"id": "a", "text": "x", "m": "\xff"}\n',
    "byte-order mark": b'\xef\xbb\xbf{"id": "a", "text": "x"}\n',
    "Inf": b'{"id": "a", "text": "x", "m": -Inf}\n',
    "an object across lines": b'{"id": "a",\n"text": "x"} {"id": "b", "text": "y"}\n',
    "an object across lines after a value": b'{"id": "a", "m":\n{"n": 1}, "text": "x"} {"id": "b", "text": "y"}\n',
    "ideographic space line": '{"id": "a", "text": "x"}\n\u3000\n'.encode(),
    "repeated key": b'{"id": "a", "text": "x", "text": "y"}\n',
    "mixed id types in a block": b'{"id": "a", "text": "x"}\n{"id": 2, "text": "y"}\n',
    "float id": b'{"id": 1.0, "text": "x"}\n',
    "boolean id": b'{"id": true, "text": "x"}\n',
    "null id": b'{"id": null, "text": "x"}\n',
    "missing id": b'{"text": "x"}\n',
    "missing text": b'{"id": "a"}\n',
    "null text": b'{"id": "a", "text": null}\n',
    "empty text": b'{"id": "a", "text": ""}\n',
    "white space text": '{"id": "a", "text": " \\t\u2003\x1c"}\n'.encode(),
    "white space id": b'{"id": " ", "text": "x"}\n',
    "number text": b'{"id": "a", "text": 5}\n',
    "not an object": b'["a", "x"]\n',
    "trailing garbage": b'{"id": "a", "text": "x"} x\n',
    "big number elsewhere": b'{"id": "a", "text": "x", "m": 1e999}\n',
}

LINE_READER_TAKES = {"repeated key", "mixed id types in a block", "big number elsewhere", "ideographic space line"}


@pytest.mark.parametrize("name", sorted(READ_BY_ARROW))
@pytest.mark.parametrize("keep_titles", [False, True])
def test_arrow_reads_ordinary_corpora_exactly_as_the_line_reader(tmp_path: Path, name: str, keep_titles: bool) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(READ_BY_ARROW[name])
    reference = _line_reader(path, keep_titles)
    if isinstance(reference, str):  # an empty text is valid only beside a title
        assert not keep_titles and name == "title absent, null or empty"
        assert _fast_reader(path, keep_titles) is None
        return
    assert _fast_reader(path, keep_titles) == reference


@pytest.mark.parametrize("name", sorted(FALLS_BACK))
def test_arrow_falls_back_wherever_the_line_reader_might_differ(tmp_path: Path, name: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(FALLS_BACK[name])
    assert _fast_reader(path, keep_titles=False) is None
    reference = _line_reader(path, keep_titles=False)  # which names the line at fault, or reads it
    assert isinstance(reference, list) == (name in LINE_READER_TAKES), reference
    if isinstance(reference, list):
        assert corpus_from_jsonl(path, cache_dir=tmp_path / "cache")["id"] == [row[0] for row in reference]


def test_blocks_and_batches_cut_anywhere_give_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"id": i if i < 40 else f"s{i}", "text": f"text {i} " + "w" * (i % 7)} for i in range(100)]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    monkeypatch.setattr(jsonl_arrow, "BLOCK_BYTES", 97)  # blocks cut mid-line; integer and string ids per block
    expected = [(str(row["id"]), "", row["text"]) for row in rows]
    assert _line_reader(path, keep_titles=False) == expected
    for batch_rows in (1, 3, 8, 100, 1000):
        batches = list(arrow_batches(path, id_key="id", keep_titles=False, schema=_schema(False), batch_rows=batch_rows))
        assert [b.num_rows for b in batches[:-1]] == [batch_rows] * (len(batches) - 1)
        assert _fast_reader(path, keep_titles=False, batch_rows=batch_rows) == expected


def test_the_built_corpus_file_is_the_same_whichever_reader_built_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"text {i} café"}) + "\n" for i in range(20_000)),
                    encoding="utf-8")
    fast = corpus_from_jsonl(path, cache_dir=tmp_path / "fast")

    def refuse(*args: object, **kwargs: object) -> None:
        raise NotProvablySame("forced")

    monkeypatch.setattr("airbench_mteb.data.arrow_corpus.arrow_batches", refuse)
    by_line = corpus_from_jsonl(path, cache_dir=tmp_path / "line")
    assert fast.data.table.equals(by_line.data.table)
    assert [len(b) for b in fast.data.table.to_batches()] == [len(b) for b in by_line.data.table.to_batches()]


def test_a_line_nested_too_deeply_for_python_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
                    encoding="utf-8")
    with pytest.raises(DatasetError, match=r"c\.jsonl, line 2: JSON nested too deeply"):
        corpus_from_jsonl(path, cache_dir=tmp_path / "cache")
