"""Relevance judgments (qrels): the one reader every family and generator uses.

Two file layouts, both rows of (query id, document id, relevance):

* JSON lines ``{"qid": ..., "docid": ..., "relevance": ...}`` (AIR-Bench's hub layout; other keys
  can be named);
* TSV ``query-id<TAB>corpus-id<TAB>score`` (BEIR, co*cktail, IRSC). Line 1 is a header only when
  its score column is not a number, so a file written without a header keeps its first judgment.

Accepted relevance: an integer in -2^31..2^31-1 (the C ``int`` pytrec_eval stores it in; a larger
value would wrap round silently), given as an integer, a whole-number float (``1.0``, ``1e2``) or
a string holding either. NaN, infinities, fractions, booleans and values out of range are refused.
A negative grade (TREC's -1 and -2 for junk or spam; co*cktail's qrels hold some -1) is read as 0, a judged
non-relevant document: what trec_eval makes of it (gain 0 in nDCG, not relevant in the binary measures, still
judged; :func:`airbench_mteb.metrics.retrieval.gain`, which every metric of the plugin applies to the grades it
is given), so MTEB's numbers do not change, and safe: trec_eval's C code, which MTEB runs through pytrec_eval,
writes outside its arrays for a query whose highest grade is below -1.

A qrels file with no judgment, or none with a relevance above 0 (no query could score anything),
is refused too, as is the same (query, document) pair judged twice. Every error is a
:class:`DatasetError` naming the file and, where there is one, the line.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import field, read_jsonl, read_tsv
from airbench_mteb.ir_types import Qrels
from airbench_mteb.whole_numbers import whole_number

RELEVANCE_MIN = -(2**31)
RELEVANCE_MAX = 2**31 - 1
JSONL_KEYS = ("qid", "docid", "relevance")
TSV_HEADER = ("query-id", "corpus-id", "score")


def relevance(value: Any, *, path: str | Path, line: int | None = None) -> int:
    """``value`` as a relevance grade, or a DatasetError saying why it is not one (rule: module docstring)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DatasetError(f"relevance score {value!r} is not a number", path=path, line=line)
    number: int | float = value
    if isinstance(value, str):
        number = _parse_number(value, path=path, line=line)
    if isinstance(number, float):
        if not math.isfinite(number):
            raise DatasetError(f"relevance score {value!r} is not a finite number", path=path, line=line)
        whole = whole_number(number)  # 1.0 is 1, as JSON writers may spell it
        if whole is None:
            raise DatasetError(f"relevance score {value!r} is not an integer", path=path, line=line)
        number = whole
    if not RELEVANCE_MIN <= number <= RELEVANCE_MAX:
        raise DatasetError(f"relevance score {value!r} is outside {RELEVANCE_MIN}..{RELEVANCE_MAX}",
                           path=path, line=line)
    return number


def _parse_number(text: str, *, path: str | Path, line: int | None) -> int | float:
    try:
        return int(text)  # exact, however many digits: a big integer must not round into range
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise DatasetError(f"relevance score {text!r} is not a number", path=path, line=line) from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class KnownIds:
    """The query and document ids judgments may name, and the files they come from (for messages)."""

    queries: Container[str]
    corpus: Container[str]
    queries_origin: str = "the queries"
    corpus_origin: str = "the corpus"

    def check(self, qid: str, doc_id: str, *, path: str | Path, line: int | None) -> None:
        if qid not in self.queries:
            raise DatasetError(f"query {qid!r} is not in {self.queries_origin}", path=path, line=line, item_id=qid)
        if doc_id not in self.corpus:
            raise DatasetError(f"document {doc_id!r} is not in {self.corpus_origin}", path=path, line=line,
                               item_id=doc_id)


class _QrelsBuilder:
    """Collects judgments of one file, checking each as it comes (ids known, pair new, grade valid)."""

    def __init__(self, path: str | Path, known: KnownIds | None) -> None:
        self.path = path
        self.known = known
        self.qrels: dict[str, dict[str, int]] = {}

    def add(self, qid: str, doc_id: str, grade: Any, line: int | None) -> None:
        if self.known is not None:
            self.known.check(qid, doc_id, path=self.path, line=line)
        value = relevance(grade, path=self.path, line=line)
        docs = self.qrels.setdefault(qid, {})
        if doc_id in docs:
            raise DatasetError(f"duplicate qrel for query {qid!r} and document {doc_id!r}", path=self.path,
                               line=line, item_id=f"{qid}/{doc_id}")
        docs[doc_id] = max(value, 0)  # a negative grade read as 0 (module docstring)

    def result(self) -> Qrels:
        if not self.qrels:
            raise DatasetError("no judgments: an empty qrels file leaves no query to evaluate", path=self.path)
        if not any(grade > 0 for docs in self.qrels.values() for grade in docs.values()):
            raise DatasetError("no judgment has a relevance above 0, so no query has a relevant document",
                               path=self.path)
        return self.qrels


def qrels_from_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], origin: str | Path,
                    keys: tuple[str, str, str] = JSONL_KEYS, *, known: KnownIds | None = None) -> Qrels:
    """Checked qrels from ``(line or row number, row)`` pairs, e.g. a hub split; ``origin`` names them in errors.

    With ``known``, every judgment's ids are checked as it is read, so an error names the line.
    """
    qid_key, doc_key, rel_key = keys
    builder = _QrelsBuilder(origin, known)
    path = Path(origin)
    for line, row in rows:
        if rel_key not in row:
            raise DatasetError(f"missing field {rel_key!r}", path=origin, line=line)
        builder.add(field(row, qid_key, path=path, line=line), field(row, doc_key, path=path, line=line),
                    row[rel_key], line)
    return builder.result()


def read_qrels_jsonl(path: str | Path, keys: tuple[str, str, str] = JSONL_KEYS, *,
                     known: KnownIds | None = None) -> Qrels:
    """JSON-lines qrels, one ``{qid, docid, relevance}`` object a line (key names in ``keys``)."""
    return qrels_from_rows(read_jsonl(path), Path(path), keys, known=known)


def read_qrels_tsv(path: str | Path, *, known: KnownIds | None = None) -> Qrels:
    """TSV qrels ``query-id corpus-id score``, header line optional (recognised by a non-numeric score)."""
    path = Path(path)
    builder = _QrelsBuilder(path, known)
    first = True
    for line, fields in read_tsv(path):
        if len(fields) != len(TSV_HEADER):
            raise DatasetError(f"expected {len(TSV_HEADER)} tab-separated fields (query-id, corpus-id, score), "
                               f"got {len(fields)}", path=path, line=line)
        qid, doc_id, grade = fields
        is_header = first and not _is_number(grade)
        first = False
        if not is_header:
            builder.add(qid, doc_id, grade, line)
    return builder.result()
