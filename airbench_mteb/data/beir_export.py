"""An MTEB retrieval task's data as BEIR folders, the corpus streamed from its Arrow table."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.data.beir_folder import write_beir_folder
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.retrieval_data import RetrievalData

if TYPE_CHECKING:
    from mteb import AbsTask

logger = logging.getLogger(__name__)


def export_task(task: AbsTask, out: Path) -> list[Path]:
    """Load an MTEB retrieval task and write one BEIR folder per subset (``out`` itself if it has one subset).

    The corpus goes from the task's Arrow table to ``corpus.jsonl`` batch by batch: it is never held
    as Python objects. A split without qrels here (closed-book, e.g. AIR-Bench test without access) is
    left out with a warning: its qrels file would hold nothing to evaluate.

    Raises:
        DatasetError: a subset none of whose splits has qrels here.
    """
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    name = task.metadata.name
    if not isinstance(task, AbsTaskRetrieval):
        raise TypeError(f"task {name!r} is a {task.metadata.type} task; only retrieval tasks have a BEIR form")
    task.load_data()
    task.convert_v1_dataset_format_to_v2(num_proc=None)  # as MTEB's evaluate does, for tasks still in v1 form
    written = []
    for subset, splits in task.dataset.items():
        data = {split: RetrievalData.from_mteb(splits[split], f"{name} {subset}/{split}")
                for split in task.eval_splits if split in splits}
        closed = [split for split, split_data in data.items() if not split_data.qrels]
        if closed:
            logger.warning("%s %s: left out split %s, which has no qrels here (closed-book)", name, subset,
                           ", ".join(closed))
        data = {split: split_data for split, split_data in data.items() if split not in closed}
        if not data:
            raise DatasetError(f"task {name!r} subset {subset!r} has none of the splits {list(task.eval_splits)} with "
                               "qrels here (closed-book splits have none): nothing to export")
        written.append(write_beir_folder(data, out if len(task.dataset) == 1 else out / subset))
    return written
