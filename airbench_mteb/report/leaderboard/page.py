"""``leaderboard.html``: one self-contained page (inline CSS and JavaScript, no network) of ``leaderboard.json``.

The template (``page.html`` beside this module) holds the page's code; the leaderboard's JSON goes into
it as a ``<script type="application/json">`` block, which the script reads. Its filters recompute the
Average by the leaderboard's rules (:mod:`.table`), in JavaScript: the same mean, numpy's rounding.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

PLACEHOLDER = "__DATA__"


def render_page(data: dict[str, Any]) -> str:
    """The page with ``data`` (:func:`~airbench_mteb.report.leaderboard.board.to_json`) inlined."""
    template = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
    # "<" escaped: no text of the data can close the script block or open a comment in it
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
    return template.replace(PLACEHOLDER, payload)
