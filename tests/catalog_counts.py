"""What the packaged catalogs declare, counted from their JSON files.

Tests compare the registered tasks and benchmarks with these numbers rather than with literals, so a
new catalog entry moves the expected counts with it, and a task that fails to appear still fails them.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any


def packaged_items(file_name: str, key: str = "datasets") -> list[dict[str, Any]]:
    """The raw entries under ``key`` of ``airbench_mteb/catalog/<file_name>``, as written."""
    text = resources.files("airbench_mteb.catalog").joinpath(file_name).read_text(encoding="utf-8")
    return json.loads(text)[key]


AIRBENCH_DATASETS = len(packaged_items("airbench.json"))
COCKTAIL_DATASETS = len(packaged_items("cocktail.json"))
IRSC_TASKS = len(packaged_items("irsc.json", key="tasks"))
PACKAGED_TASKS = AIRBENCH_DATASETS + COCKTAIL_DATASETS + IRSC_TASKS


def airbench_benchmark_sizes() -> Counter[str]:
    """Tasks of each official AIR-Bench benchmark: one per version, one per version and task type."""
    sizes: Counter[str] = Counter()
    for item in packaged_items("airbench.json"):
        sizes.update([item["version"], f"{item['version']}_{item['task_type']}"])
    return sizes
