"""The measures behind quality control's query filters, each a pure function of texts (no model, no network).

- **Copied query** (InPars-style): a query that repeats its positive passage tests string matching, not
  retrieval. Measured in tokens (casefolded words; character bigrams for languages written without spaces,
  ``zh``, ``ja``, ``ko``, ``th``): the longest run of consecutive query tokens found verbatim in the passage,
  and the share of the query's distinct tokens that occur in the passage.
- **Query not in the dataset's language**: the share of the query's letters written in the language's
  script (MTEB's default script of the language). A script check: it catches English answers to a Chinese
  prompt, not French among English queries.
- **Easy query** (NeMo Curator's easiness filter): a query whose similarity to its positive passage is above
  the ``p``-th percentile of the set's similarities (numpy's linear percentile, as NeMo Curator computes it).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from airbench_mteb.data.languages import eval_language
from airbench_mteb.generation.airbench.corpus import CHARACTER_LANGUAGES

_WORD = re.compile(r"\w+")
# The token overlap rule's shortest query: a shorter one (AIR-Bench's shortest length class is "less than 5
# words") is a few keywords, expected to occur in its passage.
OVERLAP_MIN_TOKENS = 5

# ISO 15924 script (MTEB's language codes) -> the first word of the Unicode names of its letters; Japanese
# mixes Han with both kana, Korean writes Hangul (Hanja are rare enough to stay under any sensible share).
SCRIPT_LETTERS = {
    "Latn": ("LATIN",), "Cyrl": ("CYRILLIC",), "Grek": ("GREEK",), "Armn": ("ARMENIAN",), "Geor": ("GEORGIAN",),
    "Arab": ("ARABIC",), "Hebr": ("HEBREW",), "Thaa": ("THAANA",), "Ethi": ("ETHIOPIC",),
    "Deva": ("DEVANAGARI",), "Beng": ("BENGALI",), "Guru": ("GURMUKHI",), "Gujr": ("GUJARATI",),
    "Orya": ("ORIYA",), "Taml": ("TAMIL",), "Telu": ("TELUGU",), "Knda": ("KANNADA",), "Mlym": ("MALAYALAM",),
    "Sinh": ("SINHALA",), "Thai": ("THAI",), "Laoo": ("LAO",), "Khmr": ("KHMER",), "Mymr": ("MYANMAR",),
    "Tibt": ("TIBETAN",), "Hans": ("CJK",), "Hant": ("CJK",), "Hani": ("CJK",),
    "Jpan": ("CJK", "HIRAGANA", "KATAKANA"), "Hang": ("HANGUL",), "Kore": ("HANGUL", "CJK"),
}


def tokens(text: str, language: str) -> list[str]:
    """Casefolded word tokens; character bigrams of the words for a language written without spaces."""
    words = _WORD.findall(text.casefold())
    if language.split("-")[0] not in CHARACTER_LANGUAGES:
        return words
    return [word[i:i + 2] for word in words for i in range(max(1, len(word) - 1))]


def longest_common_run(query: Sequence[str], passage: Sequence[str]) -> int:
    """The length of the longest run of consecutive ``query`` tokens that occurs as a run in ``passage``."""
    best, previous = 0, [0] * (len(passage) + 1)
    for token in query:
        current = [0] * (len(passage) + 1)
        for j, other in enumerate(passage, start=1):
            if token == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def token_overlap(query: Sequence[str], passage: Sequence[str]) -> float:
    """The share of the query's distinct tokens that occur in the passage (0 for a query without tokens)."""
    distinct = set(query)
    return len(distinct & set(passage)) / len(distinct) if distinct else 0.0


def language_script(language: str) -> str:
    """The ISO 15924 script of an ISO 639-1 language, as MTEB writes its language (``zh`` -> ``Hans``)."""
    return eval_language(language).split("-")[1]


def script_share(text: str, script: str) -> float | None:
    """The share of ``text``'s letters that belong to ``script``; None when it has no letter (or the script
    has no entry in :data:`SCRIPT_LETTERS`: nothing to check it by)."""
    prefixes = SCRIPT_LETTERS.get(script)
    letters = [c for c in text if unicodedata.category(c).startswith("L")]
    if prefixes is None or not letters:
        return None
    return sum(unicodedata.name(c, "").startswith(prefixes) for c in letters) / len(letters)


def easiness_threshold(similarities: Sequence[float], percentile: float) -> float:
    """The ``percentile``-th percentile of the set's query-positive similarities; a query above it is easy."""
    return float(np.percentile(np.asarray(similarities, dtype=float), percentile))
