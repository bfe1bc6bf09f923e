"""Corpus preparation (AIR-Bench Appendix A.1).

QA: a real corpus, with texts that are too short or too long removed, exact duplicates (after
normalising case and white space) removed, and e-mail addresses, phone numbers and URLs masked
(the "straightforward attempt" at removing what identifies individuals). An optional block list
drops documents containing offensive terms.

Long-Doc: one long document cut into chunks with llama-index-core's ``SentenceSplitter`` at
chunk_size=200, chunk_overlap=50 tokens (the setting of the seed's ``SimpleNodeParser``).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import field as text_field
from airbench_mteb.data.files import read_jsonl

_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
_PHONE = re.compile(r"(?<!\w)\+?\d[\d\s().-]{7,}\d(?!\w)")
# languages written without spaces: lengths are counted in characters, not words
CHARACTER_LANGUAGES = {"zh", "ja", "ko", "th"}


@dataclass
class PreparedCorpus:
    documents: dict[str, str]
    removed: Counter[str] = field(default_factory=Counter)
    source: str = ""

    def stats(self) -> dict[str, int]:
        return {"kept": len(self.documents), **{f"removed_{k}": v for k, v in sorted(self.removed.items())}}


def text_length(text: str, language: str) -> int:
    if language.split("-")[0] in CHARACTER_LANGUAGES:
        return sum(1 for c in text if not c.isspace())
    return len(text.split())


def mask_personal_data(text: str) -> str:
    text = _EMAIL.sub("[email]", text)
    text = _URL.sub("[url]", text)
    return _PHONE.sub("[phone]", text)


def _fingerprint(text: str) -> str:
    normal = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha1(normal.encode("utf-8")).hexdigest()


def prepare_qa_corpus(documents: Iterable[tuple[str, str]], *, language: str, min_length: int = 30,
                      max_length: int = 2000, blocklist: Iterable[str] = (), source: str = "") -> PreparedCorpus:
    """Filter ``(id, text)`` pairs by length (words, or characters for zh/ja/ko/th) and remove duplicates."""
    blocked = [term.casefold() for term in blocklist if term.strip()]
    prepared = PreparedCorpus(documents={}, source=source)
    seen: set[str] = set()
    for doc_id, raw in documents:
        text = " ".join(raw.split())
        length = text_length(text, language)
        if length < min_length:
            prepared.removed["too_short"] += 1
            continue
        if length > max_length:
            prepared.removed["too_long"] += 1
            continue
        if blocked and any(term in text.casefold() for term in blocked):
            prepared.removed["blocklist"] += 1
            continue
        fingerprint = _fingerprint(text)
        if fingerprint in seen:
            prepared.removed["duplicate"] += 1
            continue
        seen.add(fingerprint)
        prepared.documents[doc_id] = mask_personal_data(text)
    return prepared


def split_long_document(text: str, *, chunk_size: int = 200, chunk_overlap: int = 50,
                        id_prefix: str = "chunk") -> dict[str, str]:
    """Chunks of one long document, ids ``<prefix>-<n>``. Works offline: the llama-index-core wheel
    bundles the tokenizer and sentence data it uses."""
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    chunks = [c.strip() for c in splitter.split_text(text) if c.strip()]
    return {f"{id_prefix}-{number}": chunk for number, chunk in enumerate(chunks)}


def read_corpus_file(path: str | Path) -> list[tuple[str, str]]:
    """``.jsonl`` rows with ``id``/``_id`` and ``text`` (and optional ``title``), or plain text with one
    document per non-blank line (ids ``line-<n>``)."""
    path = _corpus_path(path)
    if path.suffix == ".jsonl":
        return _read_corpus_jsonl(path)
    return [(f"line-{n}", line.strip()) for n, line in enumerate(_read_text(path).splitlines(), start=1)
            if line.strip()]


def read_long_document(path: str | Path) -> str:
    """The text of a Long-Doc corpus file."""
    return _read_text(_corpus_path(path))


def _corpus_path(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise DatasetError("corpus file not found" if not path.exists() else "corpus is not a file", path=path)
    return path


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise DatasetError(f"not valid UTF-8 ({error.reason})", path=path) from None


def _read_corpus_jsonl(path: Path) -> list[tuple[str, str]]:
    rows = []
    seen: dict[str, int] = {}
    for line, row in read_jsonl(path):
        id_key = "_id" if "_id" in row else "id"
        doc_id = text_field(row, id_key, path=path, line=line)
        if doc_id in seen:  # a second text under one id would silently replace the first
            raise DatasetError(f"duplicate document id (first seen on line {seen[doc_id]})", path=path, line=line,
                               item_id=doc_id)
        seen[doc_id] = line
        text = text_field(row, "text", path=path, line=line)
        title = text_field(row, "title", path=path, line=line, allow_empty=True).strip() if "title" in row else ""
        rows.append((doc_id, f"{title}\n{text}" if title else text))
    return rows
