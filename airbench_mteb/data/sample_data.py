"""The real benchmark data shipped inside the package, written out as a local mirror.

co*cktail's NFCorpus and NQ-UTD (xz-compressed, 3 MB in the wheel, 16 MB written) let the tests, the README
examples and a first evaluation run without the hub: ``write_sample_data(folder)`` lays them out as
``folder/cocktail/<name>/...``, the layout ``--data-dir folder`` reads. Each file is checked against the
manifest's sha256, so a damaged install is named instead of giving other numbers.
"""

from __future__ import annotations

import json
import lzma
import shutil
from collections.abc import Collection
from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_path, make_folder
from airbench_mteb.data.fingerprint import file_digest

PACKAGED = Path(__file__).resolve().parents[1] / "sample_data"
MANIFEST = PACKAGED / "manifest.json"
COPY_CHUNK = 1 << 20


def sample_files() -> dict[str, dict[str, object]]:
    """Relative path -> {"sha256", "bytes"} of every shipped file, uncompressed."""
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def write_sample_data(out: str | Path, only: Collection[str] | None = None) -> Path:
    """Write the shipped data (the files of ``only``, relative paths of :func:`sample_files`, if given) under
    ``out`` (kept where already complete and intact) and return ``out``."""
    root = make_folder(out)
    for relative, expected in sample_files().items():
        if only is not None and relative not in only:
            continue
        target = root / relative
        if target.is_file() and target.stat().st_size == expected["bytes"] and file_digest(target) == expected["sha256"]:
            continue
        packed = PACKAGED / f"{relative}.xz"
        if not packed.is_file():
            raise DatasetError("shipped sample file missing; reinstall airbench-mteb", path=packed)
        with atomic_path(target) as scratch:
            with lzma.open(packed) as source, scratch.open("wb") as sink:
                shutil.copyfileobj(source, sink, COPY_CHUNK)
            if file_digest(scratch) != expected["sha256"]:
                raise DatasetError(f"content differs from {MANIFEST.name}'s sha256; reinstall airbench-mteb", path=packed)
    return root
