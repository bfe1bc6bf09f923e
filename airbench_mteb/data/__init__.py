"""Loaders and validation for benchmark data (hub or local mirror)."""

from __future__ import annotations

import os
from pathlib import Path

from airbench_mteb.data.errors import DatasetError

DATA_DIR_ENV = "AIRBENCH_MTEB_DATA_DIR"


def data_dir() -> Path | None:
    """The local mirror root (``AIRBENCH_MTEB_DATA_DIR``, or ``--data-dir`` of the CLI), if any."""
    value = os.environ.get(DATA_DIR_ENV)
    if not value:
        return None
    root = Path(value).expanduser()
    if not root.is_dir():
        raise DatasetError(f"{DATA_DIR_ENV} points at {root}, which is not a folder")
    return root


__all__ = ["DATA_DIR_ENV", "DatasetError", "data_dir"]
