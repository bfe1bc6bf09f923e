"""The on-disk format of a BM25 index, owned here alone: its files, their dtypes and sizes, the manifest, the format
version, the postings codec's name and the checksums that guard every byte.

An index folder holds (all little-endian):

* ``postings``: each term's (document, term frequency) pairs, documents ascending, encoded by the codec the manifest
  names (:data:`CODECS`); a term of more than one block of 128 postings starts with its skip data (format 4): the
  last document of each block but the last, and a byte per block bounding its weights
  (:data:`~airbench_mteb.models.bm25.codec.BOUNDS`), so a top-k search passes over blocks that cannot change its
  result (:mod:`~airbench_mteb.models.bm25.prune`); ``postings.crc32``: the CRC-32 (uint32) of each
  :data:`STRETCH` bytes of it, checked the first time a search reads that stretch;
* ``terms`` and ``terms.blocks`` (int64, 3 per block of 128 term ids, plus 3): each term's postings count and
  its bytes in ``postings``, packed a block of terms at a time by the codec's patched frame of reference, and where
  each block starts with the postings and ``postings`` bytes before it (:mod:`~airbench_mteb.models.bm25.terms`);
  a term's IDF is Lucene's ``log(1 + (N - df + 0.5) / (df + 0.5))`` of its count, rounded to float32 as Lucene
  does (:func:`idf_of`);
* ``norms`` (uint8, documents): each document's length as Lucene's norm byte (``SmallFloat.intToByte4``);
* ``vocabulary`` and ``vocabulary.frames`` (int64, 4 per frame, plus 4): the terms in id order (first occurrence
  in the corpus), zstd frames of their varint lengths and UTF-8 bytes, and where each frame starts with the terms,
  string bytes and uncompressed bytes before it;
* ``doc_ids``: Arrow large-string buffers, ``doc_ids.offsets`` (int64, documents + 1) and ``doc_ids.bytes``;
* ``manifest.json``: the version, the key, the :class:`IndexHeader`, the sizes of the files of variable size
  (``terms``, ``vocabulary``, ``vocabulary.frames``, ``doc_ids.bytes``) and each file's CRC-32 but ``postings``'s
  (checked on opening); ``manifest.crc32``: the CRC-32 of the manifest's bytes, so no edit of it goes unseen.

Scores are recomputed at search from (idf, tf, norm) in float32 step by step as Lucene's ``BM25Similarity`` does
(:func:`inverse_norm_table`, :func:`weights`), so they are the float32 numbers the format-1 index stored.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numba import vectorize

from airbench_mteb.models.bm25.codec import BLOCK, ForCodec, PostingsCodec

FORMAT_VERSION = 4  # bump when any file's layout changes: an index of another version is rebuilt
MANIFEST = "manifest.json"
MANIFEST_CHECK = "manifest.crc32"
POSTINGS = "postings"
POSTINGS_CHECKS = "postings.crc32"
STRETCH = 1 << 16  # bytes of ``postings`` per checksum
TERMS = "terms"
TERM_BLOCKS = "terms.blocks"
VOCABULARY = "vocabulary"
VOCABULARY_FRAMES = "vocabulary.frames"
VARIABLE = (TERMS, VOCABULARY, VOCABULARY_FRAMES, "doc_ids.bytes")  # files whose size the manifest records
CODECS: dict[str, type[PostingsCodec]] = {ForCodec.name: ForCodec}
CODEC = ForCodec.name  # the codec new indexes are written with


class IndexDamage(ValueError):
    """A file of an index fails its checksum or holds values out of bounds (the message names the file)."""


@dataclass(frozen=True)
class IndexHeader:
    """What a finished build wrote, and what scoring needs besides the files: the manifest's figures."""

    documents: int
    terms: int
    postings: int
    postings_bytes: int
    scored_documents: int  # documents with at least one term: Lucene's N
    total_length: int  # terms in all documents: avgdl = total_length / scored_documents
    max_tf: int  # the largest term frequency, the bound a decoded one is checked against
    k1: float
    b: float
    codec: str = CODEC

    @property
    def avgdl(self) -> float:
        return max(self.total_length / max(self.scored_documents, 1), 1.0)


def array_sizes(header: IndexHeader) -> dict[str, tuple[type, int]]:
    """Each fixed-type file's dtype and number of values."""
    return {TERM_BLOCKS: (np.int64, 3 * (-(-header.terms // BLOCK) + 1)),
            "norms": (np.uint8, header.documents), "doc_ids.offsets": (np.int64, header.documents + 1),
            POSTINGS_CHECKS: (np.uint32, -(-header.postings_bytes // STRETCH))}


def file_sizes(header: IndexHeader, variable_bytes: dict[str, int]) -> dict[str, int]:
    """The size in bytes each file of an index with this header has (those of variable size as the manifest
    says)."""
    sizes = {name: np.dtype(dtype).itemsize * count for name, (dtype, count) in array_sizes(header).items()}
    sizes[POSTINGS] = header.postings_bytes
    sizes.update({name: variable_bytes[name] for name in VARIABLE})
    return sizes


def crc32_of(path: Path) -> int:
    crc = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


# Lucene's SmallFloat.intToByte4: byte values below 24 hold the length itself, the rest a 4-bit float (3 bits of
# mantissa after an implicit leading one, and an exponent) of the length above 24.
_FREE_VALUES = 24


def _norm_lengths() -> np.ndarray:
    """The document length each norm byte stands for (``SmallFloat.byte4ToInt``), ascending."""
    lengths = np.arange(256, dtype=np.int64)
    encoded = lengths[_FREE_VALUES:] - _FREE_VALUES
    shift = (encoded >> 3) - 1
    mantissa = encoded & 0x07
    decoded = np.where(shift < 0, mantissa, (mantissa | 0x08) << np.maximum(shift, 0))
    lengths[_FREE_VALUES:] = _FREE_VALUES + decoded
    return lengths


NORM_LENGTHS = _norm_lengths()


def norm_bytes(lengths: np.ndarray) -> np.ndarray:
    """Each document length as Lucene's norm byte: the largest byte whose length does not exceed it."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return (np.searchsorted(NORM_LENGTHS, lengths, side="right") - 1).astype(np.uint8)


def lucene_length(lengths: np.ndarray) -> np.ndarray:
    """Document lengths as Lucene's norm byte keeps them (exact below 40, then 4 significant bits above 24)."""
    return NORM_LENGTHS[norm_bytes(lengths)]


def inverse_norm_table(header: IndexHeader) -> np.ndarray:
    """``1 / (k1 * (1 - b + b * dl / avgdl))`` per norm byte, step by step in float32 as Lucene's BM25 computes it."""
    one, k1, b = np.float32(1), np.float32(header.k1), np.float32(header.b)
    # a document without terms gets inf where b = 1; it has no postings, so that value is never read
    with np.errstate(divide="ignore"):
        return one / (k1 * ((one - b) + b * NORM_LENGTHS.astype(np.float32) / np.float32(header.avgdl)))


def idf_of(df: np.ndarray, scored_documents: int) -> np.ndarray:
    """Lucene's float32 IDF of each document frequency."""
    n = max(scored_documents, 1)  # 0 only without postings, where nothing is weighted
    return np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)


@vectorize(["float32(float32, float32)"], cache=True)
def lucene_weight(idf: np.float32, x: np.float32) -> np.float32:
    """Lucene's float32 weight ``idf - idf / (1 + x)`` of ``x = tf / norm``, step by step in float32 (so scores tie
    where Lucene's do); non-decreasing in ``x``. A ufunc, so every score comes from this one formula: the search's
    kernels call it element by element, :func:`weights` on whole arrays."""
    return idf - idf / (np.float32(1) + x)


def weights(idf: np.float32, tf: np.ndarray, inverse_norm: np.ndarray) -> np.ndarray:
    """Lucene's float32 weight of each posting (:func:`lucene_weight`; ``inverse_norm`` per posting)."""
    return lucene_weight(np.float32(idf), tf.astype(np.float32) * inverse_norm.astype(np.float32, copy=False))


def write_manifest(folder: Path, key: dict[str, object], header: IndexHeader) -> None:
    """The manifest (written last: its presence says the files are complete) and its own checksum."""
    variable_bytes = {name: (folder / name).stat().st_size for name in VARIABLE}
    checks = {name: crc32_of(folder / name) for name in file_sizes(header, variable_bytes) if name != POSTINGS}
    manifest = {"format": FORMAT_VERSION, "key": key, "header": asdict(header), "variable_bytes": variable_bytes,
                "crc32": checks}
    text = json.dumps(manifest, indent=1).encode()
    (folder / MANIFEST_CHECK).write_text(f"{zlib.crc32(text):08x}\n", encoding="ascii")
    (folder / MANIFEST).write_bytes(text)


def read_manifest(folder: Path) -> dict[str, object]:
    """The manifest, its checksum verified (:class:`IndexDamage` naming it when it fails); one of another format
    version as it reads (format 1 had no checksum), for its version to be told."""
    text = (folder / MANIFEST).read_bytes()
    check = folder / MANIFEST_CHECK
    if check.exists() and check.read_text(encoding="ascii") != f"{zlib.crc32(text):08x}\n":
        raise IndexDamage(f"{folder / MANIFEST} does not match its checksum in {MANIFEST_CHECK}")
    manifest = json.loads(text)
    if not isinstance(manifest, dict):
        raise IndexDamage(f"{folder / MANIFEST} is not a JSON object")
    if manifest.get("format") == FORMAT_VERSION and not check.exists():
        raise IndexDamage(f"{folder / MANIFEST} has no checksum ({MANIFEST_CHECK})")
    return manifest


def header_of(manifest: dict[str, object]) -> IndexHeader:
    return IndexHeader(**manifest["header"])  # type: ignore[arg-type]


def problem(folder: Path, manifest: dict[str, object], key: dict[str, object]) -> str | None:
    """Why the index in ``folder`` with this (verified) manifest cannot be used for ``key``; None when it can.
    Every file but ``postings`` is checked whole here (they are small); ``postings`` stretch by stretch as read."""
    if manifest.get("key") != key:
        return "it was written for another corpus or setting"
    header = header_of(manifest)
    if header.codec not in CODECS:
        return f"its postings codec {header.codec!r} is unknown"
    for name, size in file_sizes(header, manifest["variable_bytes"]).items():  # type: ignore[arg-type]
        actual = (folder / name).stat().st_size
        if actual != size:
            return f"{name} has {actual:,} bytes where {size:,} are due"
        if name != POSTINGS and crc32_of(folder / name) != manifest["crc32"][name]:  # type: ignore[index]
            return f"{name} does not match the checksum written with it"
    return None
