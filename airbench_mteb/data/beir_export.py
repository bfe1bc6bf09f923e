"""An MTEB retrieval task's data as BEIR folders, the corpus streamed from its Arrow table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.data.beir_folder import write_beir_folder
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.retrieval_data import RetrievalData

if TYPE_CHECKING:
    from mteb import AbsTask


def export_task(task: AbsTask, out: Path) -> list[Path]:
    """Load an MTEB retrieval task and write one BEIR folder per subset (``out`` itself if it has one subset).

    The corpus goes from the task's Arrow table to ``corpus.jsonl`` batch by batch: it is never held
    as Python objects.
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
        if not data:
            raise DatasetError(f"task {name!r} has none of its eval splits {task.eval_splits} in subset {subset!r}")
        written.append(write_beir_folder(data, out if len(task.dataset) == 1 else out / subset))
    return written
