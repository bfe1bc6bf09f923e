"""Local model folders as MTEB models (``mteb.get_model(<folder>)`` treats a path as a hub id).

A folder is named ``local/<folder name>`` and gets a revision from a hash of its files (weights,
config, tokenizer), so two folders called ``model`` are two models in MTEB's results and in the
embedding cache, and a folder retrained in place is a new revision. File hashes are remembered by
(path, size, modification time) in a small JSON file beside the embedding cache, so only new or
changed files are read again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mteb.models import ModelMeta

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.data.fingerprint import file_digest
from airbench_mteb.models.devices import Device, torch_device

HASH_MEMO_NAME = "local_model_file_hashes.json"


def _load_local_sentence_transformer(model_name: str, revision: str | None = None, *, path: str,
                                     device: Device = None, **kwargs: Any) -> Any:
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    # the revision is ours (a content hash), not a hub revision of the folder
    return SentenceTransformerEncoderWrapper(path, device=torch_device(device), **kwargs)


def _model_files(folder: Path) -> list[Path]:
    """Every file of the folder except hidden ones (``.git``, editor and cache files)."""
    return sorted(path for path in folder.rglob("*")
                  if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts))


def _read_memo(memo_path: Path | None) -> dict[str, list[Any]]:
    if memo_path is None:
        return {}
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent or damaged: it is only a memo
        return {}
    return memo if isinstance(memo, dict) else {}


def folder_revision(folder: Path, memo_path: Path | None = None) -> str:
    """A hash of every file's relative path and content; file hashes memoised by (path, size, mtime_ns)."""
    memo = _read_memo(memo_path)
    changed = False
    digest = hashlib.sha256()
    for path in _model_files(folder):
        stat = path.stat()
        identity = [stat.st_size, stat.st_mtime_ns]
        entry = memo.get(str(path))
        if not isinstance(entry, list) or entry[:2] != identity:
            entry = [*identity, file_digest(path)]
            memo[str(path)] = entry
            changed = True
        digest.update(f"{path.relative_to(folder).as_posix()}\x00{entry[2]}\n".encode())
    if changed and memo_path is not None:
        try:
            memo_path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_write(memo_path) as handle:
                json.dump(memo, handle)
        except (OSError, DatasetError):  # a read-only cache costs a re-hash next time, nothing else
            pass
    return digest.hexdigest()[:20]


def _default_memo_path() -> Path | None:
    from airbench_mteb.models.embedding_cache import cache_dir

    root = cache_dir()
    return None if root is None else root / HASH_MEMO_NAME


def local_model_meta(folder: str | Path, memo_path: Path | None = None) -> ModelMeta:
    """Metadata for a SentenceTransformer folder: ``local/<folder name>`` at a revision hashed from its files.

    ``memo_path`` keeps the file hashes (default: beside the embedding cache, none when it is off).
    """
    folder = Path(folder).resolve()
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise ValueError(f"{folder} is not a model folder (no modules.json or config.json)")
    return ModelMeta.create_empty(overwrites={
        "name": f"local/{folder.name}",
        "revision": folder_revision(folder, memo_path if memo_path is not None else _default_memo_path()),
        "loader": _load_local_sentence_transformer,
        "loader_kwargs": {"path": str(folder)},
        "framework": ["Sentence Transformers"],
        "reference": None,
    })
