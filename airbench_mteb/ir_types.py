"""The two shapes every layer passes around: relevance judgments and a ranking's scores, declared once.

Read-only mappings, so a function taking them accepts any mapping (a plain ``dict`` included) and promises not to
change it; code that builds one fills a ``dict`` of the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping

Qrels = Mapping[str, Mapping[str, int]]  # query id -> document id -> relevance grade
Run = Mapping[str, Mapping[str, float]]  # query id -> document id -> score
