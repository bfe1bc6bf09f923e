"""Persistent response cache: a re-run (or a resumed run) pays nothing for calls whose answer arrived.

An answer is keyed by everything that decides it: the LLM's identity (backend kind, endpoint
without credentials, served model name, model file hash for local files), the messages and the
sampling parameters including the seed. Two LLMs that share a model name are never confused.

A call is also marked as sent before it goes out, so a resumed run knows which of its calls repeat
requests whose answers never arrived (killed in flight) and can account for them.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import Completion, LLMParams, Messages


def cache_key(identity: Mapping[str, str], messages: Messages, params: LLMParams) -> str:
    payload = json.dumps({"llm": dict(identity), "messages": messages, "params": params.key()},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite file, one committed row per answer (durable before the call returns)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise GenerationError(f"the LLM response cache {self.path} is not a file (--cache)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            # ``llm`` is the identity as JSON, for people reading the file; the key already covers it
            self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, llm TEXT, response TEXT)")
            self._db.execute("CREATE TABLE IF NOT EXISTS sent (key TEXT PRIMARY KEY, llm TEXT)")
            self._db.commit()
        except (OSError, sqlite3.Error) as error:  # a text file, a read-only folder, a file where a folder goes
            raise GenerationError(f"the LLM response cache {self.path} cannot be used (--cache): {error}") from None

    def get(self, key: str) -> Completion | None:
        row = self._db.execute("SELECT response FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data: dict[str, Any] = json.loads(row[0])
        return Completion(**data)

    def mark_sent(self, key: str, identity: Mapping[str, str]) -> bool:
        """Record that a call is about to go out; True if it went out before and its answer never arrived."""
        with self._db:
            before = self._db.execute("SELECT 1 FROM sent WHERE key = ?", (key,)).fetchone() is not None
            if not before:
                self._db.execute("INSERT INTO sent VALUES (?, ?)", (key, json.dumps(dict(identity), sort_keys=True)))
        return before

    def put(self, key: str, identity: Mapping[str, str], completion: Completion) -> None:
        response = json.dumps({"text": completion.text, "tokens_in": completion.tokens_in,
                               "tokens_out": completion.tokens_out, "top_logprobs": completion.top_logprobs},
                              ensure_ascii=False)
        with self._db:  # one transaction: the answer is stored and the call stops being pending together
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                             (key, json.dumps(dict(identity), sort_keys=True), response))
            self._db.execute("DELETE FROM sent WHERE key = ?", (key,))

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def unanswered(self) -> int:
        """Calls that went out and whose answers never arrived (a killed run's calls in flight)."""
        return self._db.execute("SELECT COUNT(*) FROM sent").fetchone()[0]

    def close(self) -> None:
        self._db.close()
