"""The corpora of a set of MTEB tasks, described so that Ray workers can open them themselves.

A corpus that is a memory-mapped Arrow file (the plugin's loaders and the hub both produce those)
travels as its file names: each worker memory-maps the files, and the driver never sends corpus
text. Any other corpus (built in memory) is put once into Ray's object store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mteb import AbsTask


@dataclass(frozen=True)
class CorpusSource:
    """One corpus as one task evaluates it: the task's metadata decides the prompt, hence the cache namespace."""

    task_metadata: Any  # mteb TaskMetadata
    hf_subset: str
    hf_split: str
    num_rows: int
    arrow_files: tuple[str, ...] = ()  # memory-mapped files every worker can reach
    table: Any = None  # else: a Ray ObjectRef of the corpus as a pyarrow Table
    features: Any = None  # datasets.Features of ``table``

    def open(self) -> Any:
        """The corpus as the ``datasets.Dataset`` the task evaluates (called on a worker)."""
        from datasets import Dataset, DatasetInfo, concatenate_datasets

        if self.arrow_files:
            parts = [Dataset.from_file(name) for name in self.arrow_files]
            return parts[0] if len(parts) == 1 else concatenate_datasets(parts)
        import ray
        from datasets.table import InMemoryTable

        return Dataset(InMemoryTable(ray.get(self.table)), info=DatasetInfo(features=self.features))


def _reopens_as_itself(corpus: Any) -> tuple[str, ...]:
    """The corpus's Arrow files if reading them back gives exactly this corpus, else ``()``.

    Not so when rows were selected or reordered (an indices mapping) or columns dropped, renamed
    or cast in memory after the file was read.
    """
    from datasets import Dataset, concatenate_datasets

    files = tuple(entry["filename"] for entry in corpus.cache_files)
    if not files or getattr(corpus, "_indices", None) is not None:
        return ()
    parts = [Dataset.from_file(name) for name in files]
    reopened = parts[0] if len(parts) == 1 else concatenate_datasets(parts)
    same = reopened.num_rows == corpus.num_rows and reopened.features == corpus.features
    return files if same else ()


def _split_corpora(task: AbsTask) -> Iterator[tuple[str, str, Any]]:
    for hf_subset, splits in task.dataset.items():
        for hf_split in task.metadata.eval_splits:
            if hf_split in splits:
                yield hf_subset, hf_split, splits[hf_split]["corpus"]


def corpus_sources(tasks: Sequence[AbsTask]) -> list[CorpusSource]:
    """Every distinct corpus of every task (splits sharing one corpus give one source), data loaded as needed."""
    import ray

    sources: list[CorpusSource] = []
    for task in tasks:
        task.load_data()
        seen: set[Any] = set()
        for hf_subset, hf_split, corpus in _split_corpora(task):
            files = _reopens_as_itself(corpus)
            identity = files or id(corpus)
            if identity in seen or corpus.num_rows == 0:
                continue
            seen.add(identity)
            if files:
                sources.append(CorpusSource(task.metadata, hf_subset, hf_split, corpus.num_rows, arrow_files=files))
            else:
                sources.append(CorpusSource(task.metadata, hf_subset, hf_split, corpus.num_rows,
                                            table=ray.put(corpus.with_format("arrow")[:]), features=corpus.features))
    return sources


def row_ranges(sources: Sequence[CorpusSource], rows_per_block: int) -> list[dict[str, int]]:
    """The work items: ``{corpus, start, stop}`` row ranges of at most ``rows_per_block`` documents."""
    return [{"corpus": number, "start": start, "stop": min(start + rows_per_block, source.num_rows)}
            for number, source in enumerate(sources) for start in range(0, source.num_rows, rows_per_block)]
