"""Options several commands share: ``--data-dir`` and the check of a count option."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.data.errors import OptionError
from airbench_mteb.settings import DATA_DIR_ENV, configure, current_settings


def add_data_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=None,
                        help=f"local mirror root holding the datasets as files (default: ${DATA_DIR_ENV}, else the hub)")


def apply_data_dir(args: argparse.Namespace) -> None:
    """``--data-dir`` for the process, and every setting checked before any work: a folder that is not there or a
    bad variable is a SettingsError, which cli.main prints in one line (exit 2)."""
    if getattr(args, "data_dir", None) is not None:
        configure(data_dir=args.data_dir.resolve())
    current_settings()


def check_positive_option(option: str, value: int | None) -> None:
    """A count option (``--batch-size``, ``--rerank-top-k``) is unset or at least 1, checked before any model loads."""
    if value is not None and value < 1:
        raise OptionError(f"{option} must be at least 1, got {value}")
