"""Quality control's query filters, each a pure function of texts (no model, no network); :func:`check_query`
applies the two that run before any LLM call.

- **Copied query** (InPars-style): a query that repeats its positive passage tests string matching, not
  retrieval. Measured in the words of :func:`word_forms` (case, width, accents and the language's own spelling
  variants folded on both sides; symbols and emoji are no words): the longest run of consecutive query words
  found verbatim in the passage, and the share of the query's distinct words that occur in the passage.
- **Query not in the dataset's language**: the share of the query's letters written in the language's
  script (MTEB's default script of the language), after Unicode compatibility folding (NFKC), so fullwidth
  Latin counts as Latin and halfwidth katakana as katakana. Latin letters are neutral in a query that also
  has letters of another script (a Japanese or Hindi question naming ``python`` or ``list comprehension``); a
  query in Latin letters only is judged on them. A script check: it catches English answers to a Chinese
  prompt, not French among English queries, nor an English sentence quoting one word of the language. A query
  without any letter (``🤔🤔❓``) is in no language and is dropped by this filter too.
- **Easy query** (NeMo Curator's easiness filter): a query whose similarity to its positive passage is above
  the ``p``-th percentile of the set's similarities (numpy's linear percentile, as NeMo Curator computes it).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Literal

import numpy as np
import regex

from airbench_mteb.data.languages import eval_language
from airbench_mteb.generation import checks
from airbench_mteb.models.lucene_analysis import analysis_name
from airbench_mteb.models.lucene_analysis.arabic import arabic_normalize, persian_normalize
from airbench_mteb.models.lucene_analysis.cjk import cjk_words
from airbench_mteb.models.lucene_analysis.japanese import japanese_words
from airbench_mteb.models.lucene_analysis.tokenizer import EMOJI, SOUTHEAST_ASIAN, standard_tokens

COPIED: Final = "copied"
WRONG_LANGUAGE: Final = "wrong_language"
# The token overlap rule's shortest query: a shorter one (AIR-Bench's shortest length class is "less than 5
# words") is a few keywords, expected to occur in its passage.
OVERLAP_MIN_TOKENS = 5

# ISO 15924 codes of MTEB's languages that name a combination of Unicode scripts; every other code is a Unicode
# script itself. Japanese mixes Han with both kana, Korean writes Hangul (Hanja are rare enough to stay under any
# sensible share).
COMPOSITE_SCRIPTS = {"Hans": ("Hani",), "Hant": ("Hani",), "Jpan": ("Hani", "Hira", "Kana"), "Kore": ("Hang", "Hani")}
_GRAPHEME = regex.compile(r"\X")
_ARABIC_SCRIPT = ("ar", "fa")  # the analyses that fold Arabic script (Lucene's Arabic and Persian analyzers)
_ZWNJ = "\u200c"
_LATIN_MARKS = regex.compile(r"(?<=\p{Latin}\p{Mn}*)\p{Mn}+")  # accents of Latin letters, once decomposed (NFKD)
_GERMAN_UMLAUT = regex.compile(r"([aou])\u0308")  # ä ö ü decomposed: written ae oe ue where they are not typed
_LATIN_LETTERS = regex.compile(r"\p{Latin}")


@dataclass(frozen=True)
class FilterSettings:
    """The query filters' thresholds (0 = off): words copied in a row from the positive passage; share of the
    query's distinct words found in it (queries of at least OVERLAP_MIN_TOKENS words); least share of the
    query's letters in the language's script."""

    copied_run: int = 10
    copied_overlap: float = 0.9
    language_share: float = 0.5

    def __post_init__(self) -> None:
        checks.whole_number("copied_run", self.copied_run, 0)
        checks.number("copied_overlap", self.copied_overlap, 0.0, 1.0)
        checks.number("language_share", self.language_share, 0.0, 1.0)


@dataclass(frozen=True)
class QueryDecision:
    """Why a query is dropped before any LLM call: the ``filter`` that drops it, what it measured, in words."""

    filter: Literal["copied", "wrong_language"]
    reason: str
    common_run: int | None = None  # copied: the longest run of query words found in the passage
    token_overlap: float | None = None  # copied: the share of the query's distinct words found in it
    script_share: float | None = None  # wrong_language: the share of the query's letters in the script

    def record(self) -> dict[str, Any]:
        """The decision's fields in quality control's decision log (``qc_decisions.jsonl``)."""
        measures = {"common_run": self.common_run, "token_overlap": self.token_overlap,
                    "script_share": self.script_share}
        return {"filter": self.filter, **{name: value if isinstance(value, int) else round(value, 4)
                                          for name, value in measures.items() if value is not None},
                "reason": self.reason}


def check_query(query: str, passage: str, language: str, settings: FilterSettings | None = None) -> QueryDecision | None:
    """None when ``query`` passes the copied-query and language filters against its positive ``passage`` in
    ``language`` (ISO 639-1, as AIR-Bench names it), else the decision dropping it (the copy rule first)."""
    s = settings if settings is not None else FilterSettings()
    script = language_script(language)  # an unknown language is refused whatever the query
    if s.copied_run or s.copied_overlap:
        for words, passage_words in zip(word_forms(query, language), word_forms(passage, language), strict=True):
            decision = _copy_decision(words, passage_words, s)
            if decision is not None:
                return decision
    if s.language_share > 0 and not any(map(_is_letter, unicodedata.normalize("NFKC", query))):
        return QueryDecision(WRONG_LANGUAGE, f"not in {language}: no letter at all", script_share=0.0)
    share = script_share(query, script)
    if s.language_share > 0 and share is not None and share < s.language_share:
        return QueryDecision(WRONG_LANGUAGE, f"not in {language}: {share:.2f} of its letters in {script} script "
                                             f"(language_share {s.language_share})", script_share=share)
    return None


def _copy_decision(words: list[str], passage_words: list[str], s: FilterSettings) -> QueryDecision | None:
    run, overlap = longest_common_run(words, passage_words), token_overlap(words, passage_words)
    copied_run = s.copied_run > 0 and run >= s.copied_run
    copied_overlap = s.copied_overlap > 0 and len(set(words)) >= OVERLAP_MIN_TOKENS and overlap >= s.copied_overlap
    if not (copied_run or copied_overlap):
        return None
    because = (f"{run} words in a row copied from its positive (copied_run {s.copied_run})" if copied_run
               else f"{overlap:.2f} of its words in its positive (copied_overlap {s.copied_overlap})")
    return QueryDecision(COPIED, f"copied query: {because}", common_run=run, token_overlap=overlap)


def word_forms(text: str, language: str) -> list[list[str]]:
    """The forms of ``text``'s words the copy measures compare (a query and its passage in the same forms, one
    after the other): :func:`tokens`; for Persian also the words with every zero-width non-joiner removed.
    Persian writes a word's parts joined by a ZWNJ, joined without it or apart (می‌خواهم, میخواهم, می خواهم):
    Lucene's form (ZWNJ as a space) matches the first with the third, this one the first with the second."""
    forms = [tokens(text, language)]
    if analysis_name(language) == "fa":
        forms.append(tokens(text.replace(_ZWNJ, ""), language))
    return forms


def tokens(text: str, language: str) -> list[str]:
    """The words the copy measures compare: those the plugin's Lucene analysis of ``language`` finds (the
    analysis BM25 uses), before any stemmer or stopword list, of the folded text (:func:`folded`); emoji are no
    words (a copied clause plus an emoji is still all copied).

    Copying is about the words as written: a stemmer would count a paraphrase ("runs" for "running") as copied,
    and dropping stopwords would let a copied run skip its function words. So most languages take the words of
    Lucene's StandardTokenizer (Unicode word boundaries, UAX #29: combining marks and joiners stay inside their
    word, as in Hindi, Bengali or vowelled Arabic). Korean, written with spaces, too (CJKAnalyzer's Hangul
    bigrams would make a 5-word phrase a 10-bigram run). Arabic and Persian words as Lucene's
    ArabicNormalizationFilter folds them (its first step, before stemming): their vowel marks and tatweel are
    optional in writing, so a vowelled copy of an unvowelled passage is still a copy; Persian words also as
    Lucene's PersianCharFilter and PersianNormalizationFilter make them (a ZWNJ splits words, Arabic yeh and kaf
    are one letter with Persian yeh and keheh, as in Lucene's analysis). Languages written
    without spaces as their Lucene analyzers cut them: Chinese in CJKAnalyzer's bigrams, Japanese in
    JapaneseAnalyzer's morphemes (as written, not base forms); Thai, Lao, Khmer and Myanmar runs, which Lucene
    segments with a dictionary this plugin lacks, in bigrams of characters (grapheme clusters).
    """
    analysis = analysis_name(language)
    text = folded(text, analysis)
    if analysis == "zh":
        return cjk_words(text)
    if analysis == "ja":
        return japanese_words(text)
    if analysis == "fa":
        text = text.replace(_ZWNJ, " ")
    words = [word for token in standard_tokens(text) if token.kind != EMOJI
             for word in (_bigrams(_GRAPHEME.findall(token.text)) if token.kind == SOUTHEAST_ASIAN else (token.text,))]
    if analysis in _ARABIC_SCRIPT:
        normalize = _persian_form if analysis == "fa" else arabic_normalize
        return [normal for normal in map(normalize, words) if normal]  # a lone tatweel is no word
    return words


def folded(text: str, analysis: str) -> str:
    """``text`` case-folded, width-folded (NFKC) and with the accents of Latin letters removed (``basílica`` is
    ``basilica``), German umlauts written out first (``kölner`` is ``koelner``, as German writes it without them),
    for the analysis ``analysis`` (:func:`~airbench_mteb.models.lucene_analysis.analysis_name`)."""
    text = unicodedata.normalize("NFKD", text.casefold())
    if analysis == "de":
        text = _GERMAN_UMLAUT.sub(r"\1e", text)
    return unicodedata.normalize("NFKC", _LATIN_MARKS.sub("", text))


def _persian_form(word: str) -> str:
    return persian_normalize(arabic_normalize(word))


def _bigrams(units: list[str]) -> list[str]:
    return [units[i] + units[i + 1] for i in range(len(units) - 1)] or units


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


@cache
def script_letters(script: str) -> regex.Pattern[str] | None:
    """A pattern matching the characters of an ISO 15924 ``script`` (by their Unicode Script_Extensions, so a
    mark shared by several scripts, such as the kana prolonged sound mark, counts for each); None for a code
    that names no Unicode script."""
    try:
        return regex.compile("[" + "".join(rf"\p{{scx={code}}}" for code in COMPOSITE_SCRIPTS.get(script, (script,)))
                             + "]")
    except regex.error:
        return None


def script_share(text: str, script: str) -> float | None:
    """The share of ``text``'s letters (after NFKC) that belong to ``script``; None when it has no letter (or the
    code names no script: nothing to check it by). For a script other than Latin, Latin letters are left out
    when the text has letters of another script (technical terms: ``python``, ``list comprehension``)."""
    pattern = script_letters(script)
    letters = [c for c in unicodedata.normalize("NFKC", text) if _is_letter(c)]
    if pattern is None or not letters:
        return None
    if script != "Latn":
        letters = [c for c in letters if not _LATIN_LETTERS.match(c)] or letters
    return sum(1 for c in letters if pattern.match(c)) / len(letters)


def _is_letter(char: str) -> bool:
    return unicodedata.category(char).startswith("L")


def easiness_threshold(similarities: Sequence[float], percentile: float) -> float:
    """The ``percentile``-th percentile of the set's query-positive similarities; a query above it is easy."""
    return float(np.percentile(np.asarray(similarities, dtype=float), percentile))
