"""Persistent response cache: a re-run (or a resumed run) pays nothing for calls it already made.

The key is a hash of (backend kind, model, messages, sampling parameters including the seed);
credentials and endpoints are never part of what is stored.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from airbench_mteb.generation.llm.base import Completion, LLMParams, Messages


def cache_key(kind: str, model: str, messages: Messages, params: LLMParams) -> str:
    payload = json.dumps({"backend": kind, "model": model, "messages": messages, "params": params.key()},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite file, one committed row per response (durable before the call returns)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, backend TEXT, model TEXT, "
                         "response TEXT)")
        self._db.commit()

    def get(self, key: str) -> Completion | None:
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data: dict[str, Any] = json.loads(row[0])
        return Completion(**data)

    def put(self, key: str, kind: str, model: str, completion: Completion) -> None:
        response = json.dumps({"text": completion.text, "tokens_in": completion.tokens_in,
                               "tokens_out": completion.tokens_out, "top_logprobs": completion.top_logprobs},
                              ensure_ascii=False)
        self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", (key, kind, model, response))
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
