"""AIR-Bench data from the hub (pinned revision, version as config) or from a local mirror.

The mirror holds the hub layout as files: ``<root>/<repo id>/<version>/<split name>.jsonl``,
e.g. ``<root>/AIR-Bench/qa_law_en/AIR-Bench_24.05/corpus_default.jsonl`` and
``<root>/AIR-Bench/qrels-qa_law_en-dev/AIR-Bench_24.05/qrels_default_dev.jsonl``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from tqdm.auto import tqdm

from airbench_mteb.data.arrow_corpus import check_arrow_corpus, corpus_from_jsonl
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import write_jsonl
from airbench_mteb.data.qrels import qrels_from_rows, read_qrels_jsonl
from airbench_mteb.data.retrieval_data import RetrievalData, read_queries_jsonl
from airbench_mteb.ir_types import Qrels
from airbench_mteb.settings import DATA_DIR_ENV

QRELS_KEYS = ("qid", "docid", "relevance")
logger = logging.getLogger(__name__)


class AirBenchDataset(Protocol):
    """Where one AIR-Bench dataset's files are (``catalog.airbench.AirBenchEntry`` is one)."""

    version: str
    revision: str
    splits: tuple[str, ...]

    @property
    def task_name(self) -> str: ...

    def corpus_location(self) -> tuple[str, str]: ...

    def queries_location(self, split: str) -> tuple[str, str]: ...

    def qrels_location(self, split: str) -> tuple[str, str]: ...

    def is_gated(self, split: str) -> bool: ...


def mirror_file(root: Path, entry: AirBenchDataset, location: tuple[str, str]) -> Path:
    repo, split_name = location
    return root / repo / entry.version / f"{split_name}.jsonl"


def _hub_token(entry: AirBenchDataset, split: str | None) -> str | None:
    """The hub token (HF_TOKEN, or the one saved by ``hf auth login``) for gated splits, else None.

    None also when there is no token: see :func:`qrels_available`.
    """
    if split is None or not entry.is_gated(split):
        return None
    from huggingface_hub import get_token

    return get_token()


# What to do where the hub cannot be reached, `download` included (pointing it at its own output would be circular).
OFFLINE_HINT = (f"AIR-Bench's data come from the hub: on a machine that reaches it, `airbench-mteb download --data-dir "
                f"DIR` fills a mirror; copy DIR here and point --data-dir (or ${DATA_DIR_ENV}) at it. Without the hub, "
                f"`airbench-mteb sample-data --out DIR` writes the co*cktail data shipped with the package")


class HubAccessDenied(DatasetError):
    """The hub refused this account a repository: gated without access, or private ("cannot be accessed")."""


def _access_denied(error: Exception) -> bool:
    """Whether ``datasets``/``huggingface_hub`` raised it because the token may not read the repository.

    ``datasets`` turns a gated or private repository (and one that does not exist: the hub answers
    both alike) into ``DatasetNotFoundError``; an unreachable hub is a ``ConnectionError``.
    """
    from datasets.exceptions import DatasetNotFoundError
    from huggingface_hub.errors import RepositoryNotFoundError  # GatedRepoError is one

    return isinstance(error, (DatasetNotFoundError, RepositoryNotFoundError))


def _hub_dataset(entry: AirBenchDataset, location: tuple[str, str], split: str | None = None) -> Any:
    """One hub split as a memory-mapped ``datasets.Dataset`` (downloaded and cached by ``datasets``)."""
    import datasets

    repo, split_name = location
    try:
        return datasets.load_dataset(repo, entry.version, split=split_name, revision=entry.revision,
                                     token=_hub_token(entry, split))
    except Exception as error:
        kind = HubAccessDenied if _access_denied(error) else DatasetError
        raise kind(f"could not load {repo} [{entry.version}] split {split_name} from the hub: {error}. {OFFLINE_HINT}",
                   item_id=entry.task_name) from error


def _readable_hub_qrels(entry: AirBenchDataset, split: str) -> Any | None:
    """The qrels of ``split`` from the hub, or None when they are gated and the token at hand may not read them.

    AIR-Bench's test qrels are private to its maintainers: a user's saved token (``hf auth login``)
    is refused them, and the split is then closed-book, as it is without a token.
    """
    try:
        return _hub_dataset(entry, entry.qrels_location(split), split)
    except HubAccessDenied as error:
        if not entry.is_gated(split):
            raise
        logger.warning("%s %s: the hub token on this machine cannot read %s (%s), so this split is closed-book: "
                       "not scored, searched when --prediction-folder keeps its rankings", entry.task_name, split,
                       entry.qrels_location(split)[0],
                       error.__cause__)
        return None


def load_corpus(entry: AirBenchDataset, data_dir: Path | None) -> Any:
    """The corpus as a validated, memory-mapped Arrow ``datasets.Dataset`` (columns id, text)."""
    location = entry.corpus_location()
    if data_dir is not None:
        return corpus_from_jsonl(mirror_file(data_dir, entry, location), keep_titles=False)
    return check_arrow_corpus(_hub_dataset(entry, location), "/".join(location))


def qrels_available(entry: AirBenchDataset, split: str, data_dir: Path | None) -> bool:
    """False for a closed-book split: its qrels are not in the mirror, or gated on the hub without HF_TOKEN."""
    if data_dir is not None:
        return mirror_file(data_dir, entry, entry.qrels_location(split)).is_file()
    return not entry.is_gated(split) or _hub_token(entry, split) is not None


def load_queries_and_qrels(entry: AirBenchDataset, split: str, data_dir: Path | None) -> tuple[dict[str, str], Qrels, dict[str, str]]:
    """Queries and qrels of one split; the qrels are empty for a closed-book split (see :func:`qrels_available`)."""
    queries_at, qrels_at = entry.queries_location(split), entry.qrels_location(split)
    closed_book = not qrels_available(entry, split, data_dir)
    if closed_book:
        logger.info("%s %s: no qrels at hand (%s), so this split is closed-book: not scored, searched "
                    "when --prediction-folder keeps its rankings",
                    entry.task_name, split,
                    f"gated on the hub: set HF_TOKEN with access to {qrels_at[0]} to score it" if data_dir is None
                    else f"{mirror_file(data_dir, entry, qrels_at)} absent")
    if data_dir is not None:
        queries_file = mirror_file(data_dir, entry, queries_at)
        qrels_file = mirror_file(data_dir, entry, qrels_at)
        origin = {"queries": str(queries_file), "qrels": str(qrels_file)}
        qrels = {} if closed_book else read_qrels_jsonl(qrels_file, QRELS_KEYS)
        return read_queries_jsonl(queries_file), qrels, origin
    queries = {}
    for number, row in enumerate(_hub_dataset(entry, queries_at), start=1):
        qid = str(row["id"])
        if qid in queries:
            raise DatasetError("duplicate query id", path="/".join(queries_at), line=number, item_id=qid)
        queries[qid] = row["text"]
    rows = None if closed_book else _readable_hub_qrels(entry, split)
    qrels = {} if rows is None else qrels_from_rows(enumerate(rows, start=1), "/".join(qrels_at), QRELS_KEYS)
    return queries, qrels, {"queries": "/".join(queries_at), "qrels": "/".join(qrels_at)}


def split_files(entry: AirBenchDataset, splits: Iterable[str], data_dir: Path) -> list[Path]:
    """The mirror files that loading these splits reads (qrels only where they exist: closed-book otherwise)."""
    locations = [entry.corpus_location(), *(entry.queries_location(s) for s in splits)]
    qrels = [mirror_file(data_dir, entry, entry.qrels_location(s)) for s in splits]
    return [*(mirror_file(data_dir, entry, at) for at in locations), *(q for q in qrels if q.is_file())]


def load_split(entry: AirBenchDataset, split: str, data_dir: Path | None, corpus: Any = None) -> RetrievalData:
    """One validated split; pass ``corpus`` to reuse a corpus already loaded for another split."""
    if corpus is None:
        corpus = load_corpus(entry, data_dir)
    queries, qrels, origin = load_queries_and_qrels(entry, split, data_dir)
    corpus_at = mirror_file(data_dir, entry, entry.corpus_location()) if data_dir else "/".join(entry.corpus_location())
    return RetrievalData(corpus=corpus, queries=queries, qrels=qrels, origin={**origin, "corpus": str(corpus_at)}).validate()


def fill_mirror(entries: list[AirBenchDataset], root: Path, splits: tuple[str, ...] | None = None) -> list[Path]:
    """Download entries from the hub into the mirror layout; files already there are kept (resumable)."""
    written = []
    for entry in tqdm(entries, desc="AIR-Bench datasets", unit="dataset"):
        wanted = [s for s in entry.splits if splits is None or s in splits]
        parts = [(entry.corpus_location(), None)]
        parts += [(entry.queries_location(s), None) for s in wanted]
        readable = [s for s in wanted if not entry.is_gated(s) or _hub_token(entry, s)]
        if len(readable) < len(wanted):
            logger.warning("%s: %s qrels skipped, they are gated on the hub (set HF_TOKEN)", entry.task_name,
                           "/".join(s for s in wanted if s not in readable))
        parts += [(entry.qrels_location(s), s) for s in readable]
        for location, split in parts:
            target = mirror_file(root, entry, location)
            if target.is_file():
                continue
            rows = _hub_dataset(entry, location) if split is None else _readable_hub_qrels(entry, split)
            if rows is not None:  # None: qrels the token may not read, left out as closed-book
                write_jsonl(target, rows)
                written.append(target)
    return written
