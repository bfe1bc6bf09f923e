"""MkDocs hook: names that hold Markdown's syntax render as written, on every page and in every docstring.

"co*cktail" holds an asterisk: two of them in one paragraph would turn the text between them into italics.
The hook adds a Markdown extension (to the site's pages and to mkdocstrings' docstrings alike) whose inline
pattern takes each such name as plain text before emphasis is looked for; code spans and blocks are left
as they are.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown
from markdown.inlinepatterns import InlineProcessor

NAMES = ("co*cktail",)
PRIORITY = 175  # after code spans (190) and backslash escapes (180), before emphasis (60)


class _AsWritten(InlineProcessor):
    def handleMatch(self, match: re.Match[str], data: str) -> tuple[str, int, int]:
        return match.group(0), match.start(0), match.end(0)


class LiteralNames(Extension):
    """Each of :data:`NAMES` as text, never as Markdown syntax."""

    def extendMarkdown(self, md: Markdown) -> None:
        pattern = "|".join(re.escape(name) for name in NAMES)
        md.inlinePatterns.register(_AsWritten(pattern, md), "literal_names", PRIORITY)


def on_config(config: Any) -> Any:
    config.markdown_extensions.append(LiteralNames())
    return config
