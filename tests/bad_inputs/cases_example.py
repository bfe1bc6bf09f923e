"""Cases of the framework itself (kept small); the real tables are the other ``cases_*.py`` modules."""

from __future__ import annotations

from tests.bad_inputs.framework import Case

CASES = [
    Case("cli-unknown-task", argv=lambda ws: ["run", "-m", "airbench-mteb/bm25", "-t", "NoSuchTask"],
         error="NoSuchTask"),
]
