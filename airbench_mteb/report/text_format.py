"""How the report tables write a p-value and escape text for LaTeX (one place, so every table writes them alike)."""

from __future__ import annotations

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def p_text(value: float) -> str:
    """Four decimals, or scientific notation below 1e-4 (a permutation p is never 0: at least 1 / (n + 1))."""
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def tex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)
