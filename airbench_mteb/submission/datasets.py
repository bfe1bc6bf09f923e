"""Which plugin task a leaderboard file belongs to, and that task's queries and qrels of one split."""

from __future__ import annotations

from dataclasses import dataclass

from airbench_mteb.catalog import AirBenchEntry, airbench_entries
from airbench_mteb.data.errors import DatasetError

LEADERBOARD_VERSIONS = ("AIR-Bench_24.04", "AIR-Bench_24.05")


@dataclass
class SplitData:
    query_ids: list[str]
    qrels: dict[str, dict[str, int]]  # empty when the split is closed-book


def leaderboard_entry(task_name: str) -> AirBenchEntry | None:
    """The catalog entry of an official AIR-Bench task (not a locally generated one), or None."""
    return next((e for e in airbench_entries() if e.task_name == task_name and e.data_dir is None
                 and e.version in LEADERBOARD_VERSIONS), None)


def entry_of(version: str, task_type: str, domain: str, language: str, dataset: str) -> AirBenchEntry | None:
    return next((e for e in airbench_entries() if e.data_dir is None and
                 (e.version, e.task_type, e.domain, e.language, e.dataset) == (version, task_type, domain, language,
                                                                                 dataset)), None)


def load_split(entry: AirBenchEntry, split: str) -> SplitData:
    """Query ids and qrels of ``split``, read through the MTEB task (so from the hub or the mirror in use)."""
    import mteb

    if split not in entry.splits:
        raise DatasetError(f"{entry.task_name} has no {split} split (it has {', '.join(entry.splits)})",
                           item_id=entry.task_name)
    task = mteb.get_task(entry.task_name, eval_splits=[split])
    task.load_data()
    data = task.dataset["default"][split]
    return SplitData(query_ids=[str(q) for q in data["queries"]["id"]],
                     qrels={str(q): dict(docs) for q, docs in data["relevant_docs"].items()})
