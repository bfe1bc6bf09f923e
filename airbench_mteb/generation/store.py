"""Append-only JSON-lines journal: every finished unit of work is one fsync'd line.

A run that is killed at any point leaves at most one torn last line; reopening the journal
drops that line (truncating the file back to the last complete record) so the next append
starts on a clean line. A malformed line anywhere else is corruption and an error.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airbench_mteb.data.files import check_writable_target, make_folder
from airbench_mteb.generation.errors import GenerationError

WORK_DIR = ".work"  # a run's private folder inside its output: journal and response cache


def work_folder(out: str | Path) -> Path:
    return Path(out) / WORK_DIR


def llm_cache_path(out: str | Path) -> Path:
    """The default response cache of the run writing into ``out``: a resumed or repeated run reuses its answers."""
    return work_folder(out) / "llm_cache.sqlite"


def open_journal(out: str | Path) -> Journal:
    """The journal of the run writing into ``out``: every generator resumes from the same place."""
    return Journal(work_folder(out) / "journal.jsonl")


class Journal:
    """Records ``{"kind": ..., "key": ..., ...}``; the latest record per (kind, key) wins on reload."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_writable_target(self.path)  # appending to a FIFO would block, to a device lose every record
        make_folder(self.path.parent)
        self._records: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._load()
        self._handle = self.path.open("ab")

    def _load(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        good_end = 0
        lines = data.split(b"\n")
        # the last element is b"" when the file ends with a newline, else a torn line
        for number, raw in enumerate(lines[:-1], start=1):
            try:
                record = json.loads(raw)
                kind, key = record["kind"], record["key"]
            except (ValueError, KeyError, TypeError) as error:
                if number == len(lines) - 1 and not lines[-1]:
                    # the last complete-looking line is unreadable: a torn write, drop it
                    break
                raise GenerationError(f"{self.path}, line {number}: corrupt journal record ({error})") from None
            self._records[(kind, str(key))] = record
            good_end += len(raw) + 1
        if good_end < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
                handle.flush()
                os.fsync(handle.fileno())

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return self._records.get((kind, key))

    def records(self, kind: str) -> Iterator[dict[str, Any]]:
        return (r for (k, _), r in self._records.items() if k == kind)

    def put(self, kind: str, key: str, **fields: Any) -> dict[str, Any]:
        """Append one record and fsync it before returning: once ``put`` returns, it survives SIGKILL."""
        record = {"kind": kind, "key": key, **fields}
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._records[(kind, key)] = record
        return record

    def pin(self, kind: str, key: str, value: Any, refusal: str) -> None:
        """Record ``value`` the first time; later, a different value raises GenerationError(``refusal``).

        For what a resumed run must not change, such as the identity of the LLM that made its records."""
        known = self.get(kind, key)
        if known is None:
            self.put(kind, key, value=value)
        elif known["value"] != value:
            raise GenerationError(f"{self.path}: {refusal} (recorded: {known['value']}; now: {value})")

    def close(self) -> None:
        self._handle.close()
