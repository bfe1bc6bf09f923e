"""Loaders and validation for benchmark data (hub or local mirror)."""

from __future__ import annotations

from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.settings import DATA_DIR_ENV, current_settings


def data_dir() -> Path | None:
    """The local mirror root (``--data-dir`` of the CLI, or ``$AIRBENCH_MTEB_DATA_DIR``), if any."""
    return current_settings().data_dir


__all__ = ["DATA_DIR_ENV", "DatasetError", "data_dir"]
