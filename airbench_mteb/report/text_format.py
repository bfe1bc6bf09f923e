"""How the report tables write a p-value and escape text for LaTeX and Markdown (one place, so every table writes
them alike)."""

from __future__ import annotations

import unicodedata

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


# Markdown's inline syntax, table cells and (GFM) autolinks: escaped with a backslash; HTML's: as entities
_MARKDOWN_SPECIAL = frozenset("\\`*_[]|~:")
_HTML_SPECIAL = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def p_text(value: float) -> str:
    """Four decimals, or scientific notation below 1e-4 (a permutation p is never 0: at least 1 / (n + 1))."""
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def tex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def markdown_text(text: str) -> str:
    """``text`` as text in Markdown, inside a table cell too: inline syntax (emphasis, code, links, ``|``) escaped,
    ``<``, ``>``, ``&`` and control characters (a newline) as HTML entities, so no name becomes markup or breaks
    a row."""
    return "".join(_markdown_char(char) for char in text)


def _markdown_char(char: str) -> str:
    if char in _MARKDOWN_SPECIAL:
        return "\\" + char
    if char in _HTML_SPECIAL:
        return _HTML_SPECIAL[char]
    if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
        return f"&#x{ord(char):X};"
    return char
