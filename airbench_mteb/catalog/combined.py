"""The AIR-Bench entries tasks are made of: the packaged catalog, then the user's registered AIR-Bench datasets."""

from __future__ import annotations

from airbench_mteb.catalog.airbench import AirBenchEntry, packaged_airbench_entries
from airbench_mteb.catalog.user import user_catalog


def airbench_entries() -> tuple[AirBenchEntry, ...]:
    """The packaged AIR-Bench catalog, then those of the user's registered AIR-Bench datasets that can be tasks."""
    return (*packaged_airbench_entries(), *user_catalog().airbench)
