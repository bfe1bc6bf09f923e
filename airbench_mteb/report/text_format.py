"""How the report tables write a p-value and escape text for LaTeX and Markdown (one place, so every table writes
them alike)."""

from __future__ import annotations

import unicodedata

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


# Markdown's inline syntax, table cells and (GFM) autolinks: escaped with a backslash; HTML's: as entities
_MARKDOWN_SPECIAL = frozenset("\\`*_[]|~:")
_HTML_SPECIAL = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}

# The p-value corrections by name (metrics.significance.CORRECTIONS; ``none`` adjusts nothing)
_CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}


def p_text(value: float) -> str:
    """Four decimals, or scientific notation below 1e-4 (a permutation p is never 0: at least 1 / (n + 1))."""
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def correction_text(correction: str) -> str:
    """How a text names a correction: ``Holm correction``, ``no correction``."""
    return f"{_CORRECTION_NAMES[correction]} correction" if correction in _CORRECTION_NAMES else "no correction"


def adjusted_text(correction: str) -> str:
    """How a text says p-values were corrected: ``Holm-adjusted``, ``not adjusted``."""
    return f"{_CORRECTION_NAMES[correction]}-adjusted" if correction in _CORRECTION_NAMES else "not adjusted"


def percent_text(level: float) -> str:
    """A confidence level as the legends write it: ``95 %``."""
    return f"{level * 100:g} %"


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
