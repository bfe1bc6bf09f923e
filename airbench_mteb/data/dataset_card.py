"""Dataset cards (README.md) with the Hugging Face hub's YAML front matter, for every generated dataset."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from huggingface_hub import DatasetCard, DatasetCardData

from airbench_mteb.data.files import atomic_write

# the hub's size categories, by their exclusive upper bound in rows
_SIZE_CATEGORIES = (
    (10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"), (10**8, "10M<n<100M"), (10**9, "100M<n<1B"), (10**10, "1B<n<10B"),
    (10**11, "10B<n<100B"), (10**12, "100B<n<1T"),
)


def size_category(rows: int) -> str:
    """The hub's ``size_categories`` value for a dataset of ``rows`` rows."""
    for bound, name in _SIZE_CATEGORIES:
        if rows < bound:
            return name
    return "n>1T"


def _plain(value: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-shaped copy: no tuples, and no shared sub-objects (YAML would write those as anchors)."""
    return json.loads(json.dumps(value))


def write_dataset_card(path: str | Path, *, pretty_name: str, license: str, languages: Sequence[str],
                       task_categories: Sequence[str], task_ids: Sequence[str], size: int,
                       source_datasets: Sequence[str], tags: Sequence[str], body: str,
                       provenance: Mapping[str, Any] | None = None) -> None:
    """Write ``path`` (a README.md) atomically: hub YAML front matter, then ``body`` (Markdown).

    ``languages`` are ISO 639-1 codes; ``size`` is the number of rows (it becomes the hub's size
    category); ``provenance`` is a generator's own record of how the data was made, kept under
    its key in the front matter.
    """
    data = DatasetCardData(pretty_name=pretty_name, license=license, language=list(languages),
                           task_categories=list(task_categories), task_ids=list(task_ids),
                           size_categories=[size_category(size)], source_datasets=list(source_datasets),
                           tags=list(tags), **({"provenance": _plain(provenance)} if provenance else {}))
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body}")
    with atomic_write(path) as handle:
        handle.write(str(card))
