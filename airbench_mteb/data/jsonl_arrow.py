"""A JSON-lines corpus parsed by Arrow's multi-threaded reader, where that provably reads what the line reader reads.

The line-by-line reader (:func:`~airbench_mteb.data.files.read_jsonl` and
:func:`~airbench_mteb.data.files.field`) defines what a valid corpus is and names the line at fault.
Arrow's JSON reader parses the same text about ten times faster on every core, but accepts some lines
the line reader refuses (two objects on one line, a ``\\u0000`` escape, bytes that are not UTF-8 in a
field nobody reads) and refuses some it accepts (integer and string ids in one block, a repeated key).
So :func:`arrow_batches` checks each block of the file's bytes for everything Arrow might let through,
and raises :class:`NotProvablySame` at the first doubt: the caller then reads the file line by line,
which either gives the same rows or the error naming the line.
"""

from __future__ import annotations

import codecs
import json
import mmap
import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from airbench_mteb.data.arrow_text import is_blank
from airbench_mteb.data.files import unreadable_text_reason

BLOCK_BYTES = 16 << 20  # bytes of whole lines handed to Arrow at a time (its threads split them further)
_PARSE_BLOCK_BYTES = 1 << 20
# Lines that hold a \u escape which may decode to NUL or to half of a surrogate pair: the line reader checks
# what those decode to, so the line is parsed by Python too.
_RISKY_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
# Arrow takes "Inf" and "-Inf" for numbers; Python's JSON takes only "Infinity" and "-Infinity".
_SHORT_INFINITY = re.compile(rb"Inf(?!inity)")


class NotProvablySame(Exception):
    """The fast reader cannot show that it reads what the line reader reads; read the file line by line."""


def _whole_line_blocks(path: Path) -> Iterator[memoryview]:
    """The file in blocks of about :data:`BLOCK_BYTES`, each ending at a line end (the last one maybe not).

    The blocks are views of the memory-mapped file: nothing is copied on the way to Arrow.
    """
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)  # unmapped when the last view is gone
    view = memoryview(mapped)
    start = 0
    while start < size:
        end = size
        if start + BLOCK_BYTES < size:
            end = mapped.rfind(b"\n", start, start + BLOCK_BYTES) + 1
            if end <= start:  # a line longer than a block: the block is that line
                end = mapped.find(b"\n", start + BLOCK_BYTES) + 1 or size
        yield view[start:end]
        start = end


def _check_bytes(block: memoryview) -> int:
    """The number of objects the line reader finds in ``block`` (see :func:`_object_lines`), if Arrow can read
    them as it does; else NotProvablySame."""
    try:
        codecs.utf_8_decode(block, "strict", True)
    except UnicodeDecodeError:
        raise NotProvablySame("not UTF-8") from None
    data = np.frombuffer(block, dtype=np.uint8)
    if not data.all():
        raise NotProvablySame("NUL byte")
    if _contains(data, b"Inf") and _SHORT_INFINITY.search(block):
        raise NotProvablySame("Inf (not Infinity), which only Arrow reads as a number")
    if _contains(data, b"\\u"):
        _check_escapes(bytes(block))
    return _object_lines(block, data)


def _check_escapes(block: bytes) -> None:
    """Each line with a \\u escape that may decode to NUL or half a surrogate pair, parsed as the line reader does."""
    for match in _RISKY_ESCAPE.finditer(block):
        start = block.rfind(b"\n", 0, match.start()) + 1
        end = block.find(b"\n", match.end())
        try:
            row = json.loads(block[start:end if end >= 0 else len(block)])
        except (ValueError, RecursionError):
            raise NotProvablySame("malformed line") from None
        if unreadable_text_reason(row):
            raise NotProvablySame("escaped NUL or lone surrogate")


def _contains(data: np.ndarray, pattern: bytes) -> bool:
    """Whether ``pattern`` occurs in ``data`` (numpy's passes over the bytes: faster than a substring search)."""
    at = np.flatnonzero(data[: len(data) - len(pattern) + 1] == pattern[0])
    for offset, byte in enumerate(pattern[1:], start=1):
        at = at[data[at + offset] == byte]
    return at.size > 0


def _usual_layout(data: np.ndarray, ends: np.ndarray, complete: bool) -> bool:
    """Every line starts with "{" and ends with "}" or "}\\r", with no blank line (checked in numpy)."""
    if data[0] != ord("{") or not (complete or data[-1] == ord("}")):
        return False
    starts = ends[:-1] + 1 if complete else ends + 1
    if not (data[starts] == ord("{")).all():
        return False
    before = data[ends - 1]  # each line end is after its line's "{": never before the block
    return bool(((before == ord("}")) | ((before == ord("\r")) & (data[ends - 2] == ord("}")))).all())


def _object_lines(block: memoryview, data: np.ndarray) -> int:
    """The lines that are not blank, if each starts with "{" and ends with "}" (JSON's white space aside).

    Then no object can run on from one line into the next (after a "}" a "{" cannot continue it), so each
    such line starts at least one object, and a parse with as many rows as lines has one object per line.
    """
    ends = np.flatnonzero(data == ord("\n"))
    complete = bool(data[-1] == ord("\n"))
    if _usual_layout(data, ends, complete):
        return len(ends) + (not complete)
    parts = bytes(block).split(b"\n")
    if complete:
        parts.pop()
    count = 0
    for part in parts:
        part = part.strip(b" \t\r")
        if part:  # a blank line: both readers skip it
            if part[:1] != b"{" or part[-1:] != b"}":
                raise NotProvablySame("a line that is not one object in braces")
            count += 1
    return count


def _parse(block: memoryview, id_key: str, id_type: pa.DataType, text_fields: tuple[str, ...]) -> pa.Table:
    schema = pa.schema([(id_key, id_type), *((name, pa.string()) for name in text_fields)])
    return pa_json.read_json(pa.BufferReader(block), read_options=pa_json.ReadOptions(block_size=_PARSE_BLOCK_BYTES),
                             parse_options=pa_json.ParseOptions(explicit_schema=schema,
                                                                unexpected_field_behavior="ignore"))


def _parse_ids_as_strings_or_integers(block: memoryview, id_key: str, text_fields: tuple[str, ...],
                                      id_types: list[pa.DataType]) -> pa.Table:
    """The block parsed with string ids, else integer ids (the line reader takes both; Arrow one per parse).

    ``id_types`` is tried in order and reordered so that the type that worked is tried first next time.
    """
    for id_type in list(id_types):
        try:
            table = _parse(block, id_key, id_type, text_fields)
        except pa.ArrowInvalid:
            continue
        id_types.remove(id_type)
        id_types.insert(0, id_type)
        return table
    raise NotProvablySame("a line Arrow cannot read as it stands")


def _checked_columns(table: pa.Table, id_key: str, keep_titles: bool) -> list[pa.ChunkedArray]:
    """``[id, title, text]`` (``[id, text]`` without titles) as strings, exactly as the line reader builds them."""
    ids, texts = table.column(id_key), table.column("text")
    if ids.null_count or texts.null_count:  # missing or null: the line reader tells which, and where
        raise NotProvablySame("missing or null id or text")
    if ids.type != pa.string():
        ids = pc.cast(ids, pa.string())  # an integer id is read as its digits, as str(int) writes them
    elif pc.any(is_blank(ids)).as_py():
        raise NotProvablySame("empty id")
    blank_text = is_blank(texts)
    if not keep_titles:
        if pc.any(blank_text).as_py():
            raise NotProvablySame("empty text")
        return [ids, texts]
    titles = table.column("title").fill_null("")  # a missing or null title is an empty one
    if pc.any(pc.and_(blank_text, pc.equal(titles, ""))).as_py():  # a title stands in for an empty text
        raise NotProvablySame("empty text without a title")
    return [ids, titles, texts]


def arrow_batches(path: Path, *, id_key: str, keep_titles: bool, schema: pa.Schema,
                  batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The corpus as record batches of ``batch_rows`` rows (the last one shorter), the line reader's rows exactly.

    Raises :class:`NotProvablySame` where that cannot be shown, possibly after some batches were yielded.
    """
    text_fields = ("title", "text") if keep_titles else ("text",)
    id_types = [pa.string(), pa.int64()]
    pending: list[pa.Table] = []
    pending_rows = 0
    for block in _whole_line_blocks(path):
        lines = _check_bytes(block)
        table = _parse_ids_as_strings_or_integers(block, id_key, text_fields, id_types)
        if table.num_rows != lines:  # a line held more than one object
            raise NotProvablySame("a line with more than one object")
        pending.append(pa.table(_checked_columns(table, id_key, keep_titles), schema=schema))
        pending_rows += table.num_rows
        if pending_rows >= batch_rows:
            whole = pa.concat_tables(pending).combine_chunks()
            cut = pending_rows - pending_rows % batch_rows
            yield from whole.slice(0, cut).to_batches(max_chunksize=batch_rows)
            pending, pending_rows = [whole.slice(cut)], pending_rows - cut
    if pending_rows:
        yield from pa.concat_tables(pending).combine_chunks().to_batches(max_chunksize=batch_rows)
