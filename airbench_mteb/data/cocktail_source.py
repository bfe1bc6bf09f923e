"""Multi-source BEIR folders (Cocktail's layout), and Cocktail's hub zips and mirror.

A multi-source folder is a BEIR folder whose corpus comes in several versions of the same
documents, one file per source, all with the same ``_id`` set::

    <folder>/corpus/<source>.jsonl     e.g. human.jsonl, llama-2-7b-chat-tmp0.2.jsonl
    <folder>/queries.jsonl
    <folder>/qrels/<split>.tsv         query-id  corpus-id  score (header line optional)

The judgments name the shared ids, so they hold for every source's copy. Cocktail publishes
each dataset as a zip of such a folder (hub dataset ``IR-Cocktail/<name>``, file ``<name>.zip``);
a local mirror holds the unpacked zips as ``<data-dir>/cocktail/<name>/``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.arrow_corpus import corpus_ids
from airbench_mteb.data.beir_folder import QRELS_DIR, QUERIES_FILE, read_beir_corpus, read_beir_split
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_folder
from airbench_mteb.data.fingerprint import file_digest
from airbench_mteb.data.retrieval_data import RetrievalData, read_queries_jsonl
from airbench_mteb.ir_types import Qrels
from airbench_mteb.settings import current_settings

CORPUS_DIR = "corpus"
MIRROR_FAMILY = "cocktail"  # <data-dir>/cocktail/<name>/
# Settings besides one per source: the mixed corpus scored per source, and with every copy relevant.
MIXED = "mixed"
MIXED_ALL_RELEVANT = "mixed-all-relevant"
_SHOWN_IDS = 5


@dataclass
class SourceCorpora:
    """The corpus of every source of a multi-source folder (same ids), read once for all splits."""

    folder: Path
    corpora: dict[str, Any]  # source label -> memory-mapped Arrow corpus (id[, title], text), reference first
    paths: dict[str, Path]  # source label -> corpus file


@dataclass
class MultiSourceData:
    """One split of a multi-source folder: a corpus per source (same ids), queries and qrels."""

    corpora: dict[str, Any]
    queries: dict[str, str]
    qrels: Qrels  # over the shared document ids
    origin: dict[str, str] = field(default_factory=dict)


def merged_doc_id(doc_id: str, stem: str) -> str:
    """A document's id in a corpus mixing sources: ``<id>-<corpus file stem>``.

    This is Cocktail's own scheme (``MED-10-human``, ``MED-10-llama-2-7b-chat-tmp0.2``), kept so
    that exactly tied scores (identical copies, e.g. refused rewrites) are broken the same way as
    in the published numbers: trec_eval orders ties by document id, descending.
    """
    return f"{doc_id}-{stem}"


def multi_source_files(folder: Path, stems: Sequence[str], splits: Sequence[str]) -> list[Path]:
    """Every file that evaluating ``splits`` of a multi-source folder reads: the corpora, queries and qrels."""
    return [*(folder / CORPUS_DIR / f"{stem}.jsonl" for stem in stems), folder / QUERIES_FILE,
            *(folder / QRELS_DIR / f"{split}.tsv" for split in splits)]


def read_source_corpora(folder: str | Path, sources: Mapping[str, str], *, keep_titles: bool = False) -> SourceCorpora:
    """Read ``corpus/<stem>.jsonl`` for every source; ``sources`` maps a label to a file stem.

    Titles are dropped unless ``keep_titles`` (Cocktail evaluates without them).

    Raises:
        DatasetError: a missing folder or corpus file (naming the corpus files present), corpora
            whose id sets differ (naming a few ids and the files), or any error of the corpus
            reader (bad JSON, duplicate ids, empty texts), with file and line.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError("multi-source dataset folder not found", path=folder)
    if not sources:
        raise ValueError("no source given")
    files = {label: f"{CORPUS_DIR}/{stem}.jsonl" for label, stem in sources.items()}
    paths = {label: folder / file for label, file in files.items()}
    for label, path in paths.items():
        if not path.is_file():
            present = sorted(p.stem for p in (folder / CORPUS_DIR).glob("*.jsonl"))
            raise DatasetError(f"corpus file of source {label!r} not found (corpus files present: "
                               f"{', '.join(present) or 'none'})", path=path)
    corpora = {label: read_beir_corpus(folder, files[label], keep_titles=keep_titles, arrow=True) for label in files}
    check_same_ids(corpora, paths)
    return SourceCorpora(folder=folder, corpora=corpora, paths=paths)


def read_multi_source_split(corpora: SourceCorpora, split: str, *, labelled: bool = True) -> MultiSourceData:
    """One split of the folder of ``corpora``: the queries its qrels name, and the qrels; for a folder
    without qrels (not ``labelled``: a user's own mixed corpus, measured by source exposure only) every
    query of ``queries.jsonl`` and no qrels.

    Raises:
        DatasetError: a missing qrels file (naming the splits present), a malformed qrels line,
            or a judgment naming a query or document that does not exist.
    """
    if not labelled:
        path = corpora.folder / QUERIES_FILE
        return MultiSourceData(corpora=corpora.corpora, queries=read_queries_jsonl(path, id_key="_id"), qrels={},
                               origin={"queries": str(path)})
    reference, reference_docs = next(iter(corpora.corpora.items()))
    data = read_beir_split(corpora.folder, split, reference_docs,
                           corpus_file=str(corpora.paths[reference].relative_to(corpora.folder)))
    return MultiSourceData(corpora=corpora.corpora, queries=data.queries, qrels=data.qrels, origin=data.origin)


def check_same_ids(corpora: Mapping[str, Any], paths: Mapping[str, Path]) -> None:
    """Every source must hold the same document ids; the error names a few ids and both files."""
    (first, first_docs), *others = corpora.items()
    first_ids = corpus_ids(first_docs)
    for label, docs in others:
        ids = corpus_ids(docs)
        missing = first_ids.filter(pc.invert(pc.is_in(first_ids, value_set=ids)))
        extra = ids.filter(pc.invert(pc.is_in(ids, value_set=first_ids)))
        if len(missing) or len(extra):
            parts = []
            if len(missing):
                parts.append(f"{len(missing)} ids of {paths[first]} are missing from it, e.g. "
                             f"{', '.join(map(repr, missing[:_SHOWN_IDS].to_pylist()))}")
            if len(extra):
                parts.append(f"{len(extra)} ids are not in {paths[first]}, e.g. "
                             f"{', '.join(map(repr, extra[:_SHOWN_IDS].to_pylist()))}")
            raise DatasetError(f"sources {first!r} and {label!r} must hold the same document ids: "
                               + "; ".join(parts), path=paths[label])


def _with_merged_ids(corpus: Any, stem: str) -> Any:
    """The corpus with ids ``<id>-<stem>``; the text columns stay memory-mapped (only the ids are new)."""
    from datasets import Dataset

    merged = pc.binary_join_element_wise(corpus.data.column("id"), pa.scalar(stem), "-")
    return Dataset(corpus.data.set_column(corpus.column_names.index("id"), "id", merged))


def setting_data(data: MultiSourceData, stems: Mapping[str, str], setting: str) -> RetrievalData:
    """The corpus and qrels of one evaluation setting, with ids made unique by :func:`merged_doc_id`.

    ``setting`` is a source label (that source's corpus alone), :data:`MIXED` or
    :data:`MIXED_ALL_RELEVANT` (every source's corpus; every copy of a relevant document is
    relevant). The two mixed settings hold the same corpus and qrels: they differ in how a task
    scores them. A document has the same id and text in every setting, so embeddings computed
    for one setting serve the others.
    """
    if setting in (MIXED, MIXED_ALL_RELEVANT):
        labels: Sequence[str] = list(data.corpora)
    elif setting in data.corpora:
        labels = [setting]
    else:
        raise ValueError(f"unknown setting {setting!r}; settings: {', '.join(settings_of(list(data.corpora)))}")
    from datasets import concatenate_datasets

    corpus = concatenate_datasets([_with_merged_ids(data.corpora[label], stems[label]) for label in labels])
    qrels = {qid: {merged_doc_id(doc_id, stems[label]): grade for label in labels for doc_id, grade in docs.items()}
             for qid, docs in data.qrels.items()}
    return RetrievalData(corpus=corpus, queries=data.queries, qrels=qrels, origin=data.origin)


def doc_sources(stems: Mapping[str, str], ids: Iterable[str]) -> dict[str, str]:
    """``{merged document id: source label}`` for a corpus with the shared ids ``ids``.

    Raises:
        DatasetError: two sources' ids merge into the same id (an id ending in another source's stem).
    """
    sources: dict[str, str] = {}
    for label, stem in stems.items():
        for doc_id in ids:
            merged = merged_doc_id(doc_id, stem)
            if merged in sources:
                raise DatasetError(f"document ids of sources {sources[merged]!r} and {label!r} collide in the "
                                   "mixed corpus; rename the corpus files", item_id=merged)
            sources[merged] = label
    return sources


def settings_of(labels: Sequence[str]) -> list[str]:
    """Every evaluation setting of a dataset with these source labels, in order."""
    return [*labels, MIXED, MIXED_ALL_RELEVANT]


# --- where a Cocktail dataset's data come from ---------------------------------------------------

class HubZip(Protocol):
    """What locating a published Cocktail dataset needs (a ``catalog.cocktail.CocktailEntry`` is one)."""

    name: str  # hub repo, zip and folder name, e.g. "nfcorpus"
    task_name: str
    md5: str
    revision: str

    @property
    def hub_repo(self) -> str: ...

    @property
    def zip_name(self) -> str: ...


def mirror_folder(entry: HubZip, data_dir: Path) -> Path:
    """``<data-dir>/cocktail/<name>``: exactly the unpacked zip."""
    folder = data_dir / MIRROR_FAMILY / entry.name
    if not folder.is_dir():
        raise DatasetError(f"Cocktail dataset {entry.name!r} is not in the local mirror (expected the unpacked "
                           f"{entry.zip_name} there)", path=folder)
    return folder


def cache_root() -> Path:
    """Where hub zips are unpacked: ``$AIRBENCH_MTEB_CACHE`` or ``~/.cache/airbench_mteb``."""
    return current_settings().cache_dir


def hub_folder(entry: HubZip) -> Path:
    """The dataset folder from the hub zip: downloaded (pinned revision), md5-checked, unpacked once."""
    target = cache_root() / MIRROR_FAMILY / f"{entry.name}-{entry.md5}"
    if (target / entry.name).is_dir():
        return target / entry.name
    return unpack_verified(download_zip(entry), entry.md5, target, entry.name)


def download_zip(entry: HubZip) -> Path:
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id=entry.hub_repo, filename=entry.zip_name, repo_type="dataset",
                                    revision=entry.revision))
    except Exception as error:
        raise DatasetError(f"could not download {entry.zip_name} from the hub dataset {entry.hub_repo} "
                           f"(revision {entry.revision}): {error}. Offline, point --data-dir (or "
                           f"AIRBENCH_MTEB_DATA_DIR) at a mirror holding {MIRROR_FAMILY}/{entry.name}/",
                           item_id=entry.task_name) from error


def unpack_verified(zip_path: Path, expected_md5: str, target: Path, name: str) -> Path:
    """Check the zip's md5, unpack it into ``target`` atomically and return ``target/name``.

    The zip is unpacked into a temporary folder beside ``target`` that is renamed into place
    only when complete, so an interrupted unpack leaves nothing behind and a finished one is
    never redone.

    Raises:
        DatasetError: the md5 differs (naming the file, the expected and the actual md5), the
            file is not a zip, or it does not hold the folder ``name/``.
    """
    actual = file_digest(zip_path, "md5")
    if actual != expected_md5:
        raise DatasetError(f"corrupted download: md5 is {actual}, expected {expected_md5}; delete the file and "
                           "download it again", path=zip_path)
    with atomic_folder(target, replace=False) as staging:
        try:
            with zipfile.ZipFile(zip_path) as archive:
                archive.extractall(staging)
        except zipfile.BadZipFile as error:
            raise DatasetError(f"not a valid zip file: {error}", path=zip_path) from None
        if not (staging / name).is_dir():
            raise DatasetError(f"the zip does not hold the folder {name}/", path=zip_path)
    if not (target / name).is_dir():
        raise DatasetError(f"unpacking did not leave the folder {name}/ in place", path=target)
    return target / name
