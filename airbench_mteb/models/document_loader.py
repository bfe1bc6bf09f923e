"""MTEB's batching of corpus documents for ``encode``, with its per-row text preparation done by Arrow kernels.

MTEB's ``create_dataloader`` prepares a corpus with a Python ``datasets.map`` over every row
(its ``_corpus_to_dict``): the model reads ``title + " " + text``
stripped (``text`` stripped where the title is empty) and the raw text stays as ``body``. That map took
4.3 s per 100,000 passages on one core here, time in which an accelerator waits. :func:`document_loader`
computes the same columns from the Arrow table at once and batches them with MTEB's own collate
function; a corpus it cannot prepare column-wise exactly (a missing or non-text column, a null, a task
with other modalities) goes to MTEB's ``create_dataloader`` unchanged.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.arrow_text import python_strip
from airbench_mteb.mteb_compat import collate_batch, create_dataloader

_TEXT_TYPE = pa.string()  # what MTEB's map writes; another type would change under it
_OTHER_MODALITIES = ("image", "audio", "video")  # columns MTEB drops from a text-only task's batches


def document_loader(dataset: Any, *, task_metadata: Any, batch_size: int) -> Any:
    """A DataLoader of ``dataset``'s documents exactly as MTEB's ``create_dataloader`` for the document prompt
    type makes it (same columns, values and batches)."""
    from mteb.types import PromptType

    table = _prepared(dataset, task_metadata)
    if table is None:
        return create_dataloader(dataset, task_metadata=task_metadata, prompt_type=PromptType.document,
                                 batch_size=batch_size)
    from datasets import Dataset
    from torch.utils.data import DataLoader

    # The source's fingerprint (its content, as ``datasets`` tracks it) stands for the prepared rows: without
    # one, ``datasets`` would hash every text again.
    fingerprint = hashlib.sha256(f"airbench_mteb documents {dataset._fingerprint}".encode()).hexdigest()[:16]
    return DataLoader(Dataset(table, fingerprint=fingerprint), batch_size=batch_size, collate_fn=collate_batch(),
                      num_workers=0, shuffle=False)


def _prepared(dataset: Any, task_metadata: Any) -> pa.Table | None:
    """The columns MTEB's row-by-row preparation gives, or None where this cannot show it gives the same."""
    from datasets import Dataset
    from mteb.types import PromptType

    if not isinstance(dataset, Dataset) or task_metadata.get_modalities(PromptType.document) != ["text"]:
        return None
    table = dataset.with_format("arrow")[:]
    names = table.column_names
    if "id" not in names or "text" not in names:
        return None
    text_columns = ["text", "title"] if "title" in names else ["text"]
    if any(table.schema.field(name).type != _TEXT_TYPE or table.column(name).null_count
           for name in text_columns):
        return None
    texts = table.column("text")
    prepared = python_strip(texts)
    if "title" in names:
        titles = table.column("title")
        titled = python_strip(pc.binary_join_element_wise(titles, texts, " "))
        prepared = pc.if_else(pc.greater(pc.utf8_length(titles), 0), titled, prepared)
    # The map's rows are the old row updated with "text" and "body": a new column comes last.
    columns = {name: table.column(name) for name in names}
    columns["text"] = prepared
    columns["body"] = texts
    return pa.table({name: column for name, column in columns.items() if name not in _OTHER_MODALITIES})
