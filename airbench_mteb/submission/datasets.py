"""Which plugin task a leaderboard file belongs to, and what that task reads now: its data fingerprint,
and each split's queries, qrels and corpus."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from airbench_mteb.catalog import AirBenchEntry, airbench_entries
from airbench_mteb.data.errors import DatasetError

LEADERBOARD_VERSIONS = ("AIR-Bench_24.04", "AIR-Bench_24.05")


@dataclass
class SplitData:
    task_name: str
    split: str
    query_ids: list[str]
    qrels: dict[str, dict[str, int]]  # empty when the split is closed-book
    corpus: Any  # the task's Arrow corpus (memory-mapped), scanned for ids rather than held in a set (unknown_ids)

    @property
    def label(self) -> str:
        return f"{self.task_name} {self.split}"


class LeaderboardTask:
    """The MTEB task of one AIR-Bench dataset, read from the hub or the mirror in use, for some splits."""

    def __init__(self, entry: AirBenchEntry, splits: Iterable[str]) -> None:
        import mteb

        splits = sorted(set(splits))
        for split in splits:
            if split not in entry.splits:
                raise DatasetError(f"{entry.task_name} has no {split} split (it has {', '.join(entry.splits)})",
                                   item_id=entry.task_name)
        self.entry = entry
        self.task = mteb.get_task(entry.task_name, eval_splits=splits)
        self.task.pin_data_revision()

    @property
    def revision(self) -> str:
        """The fingerprint of the data the task reads now (what its results and predictions record)."""
        return self.task.metadata.revision

    def split(self, split: str) -> SplitData:
        self.task.load_data()
        data = self.task.dataset["default"][split]
        return SplitData(task_name=self.entry.task_name, split=split, query_ids=[str(q) for q in data["queries"]["id"]],
                         qrels={str(q): dict(docs) for q, docs in data["relevant_docs"].items()},
                         corpus=data["corpus"])


def leaderboard_entry(task_name: str) -> AirBenchEntry | None:
    """The catalog entry of an official AIR-Bench task (not a locally generated one), or None."""
    return next((e for e in airbench_entries() if e.task_name == task_name and e.data_dir is None
                 and e.version in LEADERBOARD_VERSIONS), None)


def entry_of(version: str, task_type: str, domain: str, language: str, dataset: str) -> AirBenchEntry | None:
    return next((e for e in airbench_entries() if e.data_dir is None and
                 (e.version, e.task_type, e.domain, e.language, e.dataset) == (version, task_type, domain, language,
                                                                                 dataset)), None)
