"""Corpora as memory-mapped Arrow files, so no corpus text lives on the Python heap.

A JSON-lines corpus is validated line by line and written once, in record batches, to an Arrow
file under the ``datasets`` cache (``<HF_DATASETS_CACHE>/airbench_mteb_corpora``), keyed by what
determines its content: the file's resolved path, size and modification time, and the reading
options. Later loads memory-map that file. A hub corpus is already a memory-mapped ``datasets``
Arrow table; it is validated batch by batch without converting rows to Python objects.

Memory while building: one batch of rows (``BATCH_ROWS``) plus 8 bytes per document (a 64-bit hash of
its id, to find duplicate ids; a second pass over the file names the lines only when hashes repeat).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.arrow_text import is_blank
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, field, read_jsonl
from airbench_mteb.data.fingerprint import files_fingerprint
from airbench_mteb.data.jsonl_arrow import NotProvablySame, arrow_batches

BATCH_ROWS = 8192
_ID_BATCH = 1_000_000  # corpus ids scanned per Arrow batch by unknown_ids: memory bounded whatever the corpus size
# Bump when the layout of the cached Arrow files changes.
_FORMAT = 1


def corpus_cache_dir() -> Path:
    """Where built corpus files are kept: beside the ``datasets`` library's own cache."""
    import datasets

    return Path(datasets.config.HF_DATASETS_CACHE) / "airbench_mteb_corpora"


def _schema(with_titles: bool) -> pa.Schema:
    names = ("id", "title", "text") if with_titles else ("id", "text")
    return pa.schema([(name, pa.string()) for name in names])


def _id_hashes(ids: Iterable[str]) -> np.ndarray:
    # Python's own string hash: fast, and only compared within this process
    return np.fromiter(map(hash, ids), dtype=np.int64)


def _repeated(hashes: list[np.ndarray]) -> set[int]:
    """Hashes that occur more than once (8 bytes per document: the ids themselves are not kept)."""
    ordered = np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, dtype=np.int64)
    return set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())


def _first_repeat(numbered_ids: Iterable[tuple[int, str]], repeated: set[int]) -> tuple[str, int, int] | None:
    """Second pass, only when hashes repeat: ``(id, first line, repeated line)`` of a truly repeated id."""
    seen: dict[str, int] = {}  # only ids whose hash repeats: a handful
    for line, item_id in numbered_ids:
        if hash(item_id) in repeated:
            if item_id in seen:
                return item_id, seen[item_id], line
            seen[item_id] = line
    return None  # distinct ids sharing a hash


class JsonlCorpusBuilder:
    """Streams a JSON-lines corpus into an Arrow file, checking every line as it goes."""

    def __init__(self, path: Path, *, id_key: str, keep_titles: bool) -> None:
        self.path = path
        self.id_key = id_key
        self.keep_titles = keep_titles

    def rows(self) -> Iterator[tuple[int, str, str, str]]:
        """``(line, id, title, text)`` of every document; a title may stand in for an empty text."""
        for line, row in read_jsonl(self.path):
            doc_id = field(row, self.id_key, path=self.path, line=line)
            title = (field(row, "title", path=self.path, line=line, allow_empty=True)
                     if self.keep_titles and "title" in row else "")
            text = field(row, "text", path=self.path, line=line, allow_empty=bool(title))
            yield line, doc_id, title, text

    def write(self, target: Path) -> int:
        """Write the Arrow file (atomically); return the number of documents.

        Arrow's reader parses the file where it provably reads the same rows (:mod:`jsonl_arrow`); at
        the first doubt the file is read again line by line, which also names a bad line.
        """
        schema = _schema(self.keep_titles)
        try:
            fast = arrow_batches(self.path, id_key=self.id_key, keep_titles=self.keep_titles, schema=schema,
                                 batch_rows=BATCH_ROWS)
            return self._write(target, schema, fast)
        except NotProvablySame:
            return self._write(target, schema, self._line_batches(schema))

    def _line_batches(self, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        """The rows of :meth:`rows` in record batches of :data:`BATCH_ROWS`."""
        batch: list[tuple[int, str, str, str]] = []
        for item in self.rows():
            batch.append(item)
            if len(batch) == BATCH_ROWS:
                yield self._record_batch(schema, batch)
                batch = []
        if batch:
            yield self._record_batch(schema, batch)

    @staticmethod
    def _record_batch(schema: pa.Schema, batch: list[tuple[int, str, str, str]]) -> pa.RecordBatch:
        _, ids, titles, texts = zip(*batch, strict=True)
        columns = {"id": ids, "title": titles, "text": texts}
        return pa.record_batch([pa.array(columns[name], pa.string()) for name in schema.names], schema=schema)

    def _write(self, target: Path, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> int:
        hashes: list[np.ndarray] = []
        count = 0
        with atomic_write(target, "wb") as handle, pa.ipc.new_stream(handle, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
                hashes.append(_id_hashes(batch.column(0).to_pylist()))
                count += batch.num_rows
            self._check_unique(hashes)
        return count

    def _check_unique(self, hashes: list[np.ndarray]) -> None:
        repeated = _repeated(hashes)
        found = _first_repeat(((line, doc_id) for line, doc_id, _, _ in self.rows()), repeated) if repeated else None
        if found is not None:
            doc_id, first, line = found
            raise DatasetError(f"duplicate document id (first seen on line {first})", path=self.path, line=line,
                               item_id=doc_id)


def corpus_from_jsonl(path: str | Path, *, id_key: str = "id", keep_titles: bool = False,
                      cache_dir: Path | None = None) -> Any:
    """A validated JSON-lines corpus as a memory-mapped ``datasets.Dataset`` (columns id[, title], text).

    Built on first use (see the module docstring), memory-mapped afterwards; a file changed since
    (size, modification time or inode) is read again.
    """
    from datasets import Dataset

    path = Path(path).resolve()
    if not path.is_file():
        raise DatasetError("file not found", path=path)
    folder = cache_dir or corpus_cache_dir()
    key = files_fingerprint([path], format=_FORMAT, id_key=id_key, keep_titles=keep_titles)
    target = folder / f"{path.stem}-{key}.arrow"
    if not target.is_file():
        JsonlCorpusBuilder(path, id_key=id_key, keep_titles=keep_titles).write(target)
    return Dataset.from_file(str(target))


def check_arrow_corpus(corpus: Any, origin: str) -> Any:
    """Validate a corpus that is already Arrow (a hub split) batch by batch; return it as (id, text) strings.

    Ids must be unique and present, texts non-empty; ``origin`` names the hub split in errors, and
    ``line`` there is the row number (1-based).
    """
    table = corpus.data.table if hasattr(corpus.data, "table") else corpus.data
    for name in ("id", "text"):
        if name not in table.column_names:
            raise DatasetError(f"missing column {name!r} (columns: {table.column_names})", path=origin)
    hashes = []
    start = 0
    for batch in table.select(["id", "text"]).to_batches(max_chunksize=BATCH_ROWS):
        ids = pc.cast(batch.column(0), pa.string())
        texts = pc.cast(batch.column(1), pa.string())
        # empty as a JSON-lines corpus's text is empty: nothing left after Python's str.strip()
        empty = pc.or_kleene(pc.is_null(texts), is_blank(texts))
        for name, bad in (("document id", pc.is_null(ids)), ("document text", empty)):
            where = np.flatnonzero(bad.to_numpy(zero_copy_only=False))
            if where.size:
                row = int(where[0])
                raise DatasetError(f"empty {name}", path=origin, line=start + row + 1,
                                   item_id=ids[row].as_py())
        hashes.append(_id_hashes(ids.to_pylist()))
        start += len(batch)
    repeated = _repeated(hashes)
    if repeated:
        ids = pc.cast(table.column("id"), pa.string()).to_pylist()  # only when a hash repeats
        found = _first_repeat(enumerate(ids, start=1), repeated)
        if found is not None:
            doc_id, first, row = found
            raise DatasetError(f"duplicate document id (first seen on row {first})", path=origin, line=row,
                               item_id=doc_id)
    if corpus.features["id"].dtype != "string":
        corpus = corpus.cast_column("id", _string_value())
    return corpus.select_columns(["id", "text"])


def _string_value() -> Any:
    from datasets import Value

    return Value("string")


def corpus_ids(corpus: Any) -> pa.Array:
    """The ``id`` column of a ``datasets`` corpus as one Arrow array, row for row as the dataset shows it (a
    ``select`` or ``filter`` followed: the rows of the underlying table it hides are not there)."""
    return corpus.select_columns(["id"]).with_format("arrow")[:].column("id").combine_chunks()


def id_positions(ids: pa.Array, wanted: Iterable[str]) -> np.ndarray:
    """The position in ``ids`` of each ``wanted`` id, -1 where it is absent: one hash lookup for them all
    (building the set of ``ids`` is the cost, so callers ask once for everything they need)."""
    found = pc.index_in(pa.array(list(wanted), ids.type), value_set=ids)
    return pc.fill_null(found, -1).to_numpy(zero_copy_only=False).astype(np.int64)


def missing_ids(corpus: Any, wanted: Iterable[str]) -> list[str]:
    """The ``wanted`` ids that are not in the corpus, in their given order (Arrow set lookup, no Python copy)."""
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        return []
    return absent_ids(wanted, id_positions(corpus_ids(corpus), wanted))


def unknown_ids(corpus: Mapping[str, Any] | Any, wanted: Iterable[str]) -> set[str]:
    """Those of ``wanted`` that are not ids of ``corpus`` (a dict by id, or a ``datasets`` corpus scanned batch by
    batch for them: memory is bounded by a batch and ``wanted``, not by the corpus)."""
    wanted = set(wanted)
    if isinstance(corpus, Mapping):
        return {doc_id for doc_id in wanted if doc_id not in corpus}
    if not wanted:
        return wanted
    value_set = pa.array(sorted(wanted), pa.string())
    found: set[str] = set()
    for batch in corpus.select_columns(["id"]).with_format("arrow").iter(batch_size=_ID_BATCH):
        ids = batch["id"]
        found.update(ids.filter(pc.is_in(ids, value_set=value_set)).to_pylist())
    return wanted - found


def absent_ids(wanted: list[str], positions: np.ndarray) -> list[str]:
    """The ``wanted`` ids that :func:`id_positions` found nowhere (-1), each once, in their given order."""
    return list(dict.fromkeys(wanted[i] for i in np.flatnonzero(positions < 0)))
