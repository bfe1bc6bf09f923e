"""Spanish, French, German, Russian, Indonesian, Arabic, Persian, Hindi and Bengali analysed as Lucene does.

tests/test_lucene_analysis.py holds these analyzers to Lucene 9.5.0's analysis of 20 sentences per language
(recorded with Pyserini 0.22.1); no exceptions are needed for these languages. Here: single words recorded
the same way, which pin stemmer and normaliser rules the sentences do not reach, the MTEB language codes
that pick these analyzers, and the packaged stopword files.
"""

from __future__ import annotations

import pytest

from airbench_mteb.models.lucene_analysis import ANALYZERS, lucene_terms
from airbench_mteb.models.lucene_analysis.stopwords import load_stopwords


@pytest.mark.parametrize(("mteb_language", "text", "terms"), [
    ("fas-Arab", "کتاب\u200cهای", ["كتاب"]),  # ZWNJ splits, keheh -> kaf, "های" is a stopword
    ("pes-Arab", "کتاب\u200cهای", ["كتاب"]),
    ("arb-Arab", "والكتابات", ["كتاب"]),
    ("spa-Latn", "Las canciones", ["cancion"]),
])
def test_mteb_codes_pick_the_language(mteb_language: str, text: str, terms: list[str]) -> None:
    assert lucene_terms(text, [mteb_language]) == terms


def test_stopword_files_skip_their_header() -> None:
    stopwords = load_stopwords("de")
    assert "und" in stopwords and "für" in stopwords
    assert not any(word.startswith("#") for word in stopwords)


# Single words and what Lucene 9.5.0's analyzer (Pyserini 0.22.1) makes of them: rules the sentences miss.
@pytest.mark.parametrize(("language", "word", "terms"), [
    ("es", "luces", ["luz"]),  # -ces -> -z
    ("es", "meses", ["mes"]),  # -eses -> -es
    ("es", "días", ["días"]),  # under 5 letters: untouched, accent kept
    ("fr", "chevaux", ["cheval"]),  # -aux -> -al
    ("fr", "beaux", ["beau"]),  # but -eaux only loses its x
    ("fr", "vivement", ["vif"]),  # -ivement -> -if
    ("fr", "directrice", ["direct"]),  # -trice -> -teur -> -ter, then final r and e go
    ("fr", "L’homme", ["home"]),  # typographic apostrophe elided; doubled letters merged
    ("fr", "aujourd'hui", ["aujourd'hui"]),  # "aujourd" is no article
    ("de", "Häusern", ["haus"]),
    ("de", "Quelle", ["quell"]),  # ue after q is not an umlaut
    ("de", "Muede", ["mud"]),  # ue is
    ("de", "Straße", ["strass"]),
    ("id", "menyapu", ["sapu"]),  # meny + vowel keeps an s
    ("id", "penulis", ["tulis"]),  # pen + vowel keeps a t
    ("id", "pembangunan", ["bangun"]),
    ("id", "belajar", ["ajar"]),
    ("id", "dibacakan", ["baca"]),
    ("ru", "ёлки", ["елк"]),
    ("ar", "والكتابات", ["كتاب"]),
    ("ar", "ـــَ", []),  # tatweel and a vowel mark normalise to nothing
    ("hi", "हिन्दी", ["हिंद"]),  # dead n -> anusvara, long i -> short, then the vowel sign is stemmed
    ("hi", "ज़मीन", ["जमिन"]),  # nukta dropped
    ("bn", "বিশ্ব", ["বিসস"]),  # ba-phala doubles the consonant before it
    ("bn", "দুঃখ", ["দুখখ"]),  # visarga inside a word doubles the next letter
    ("bn", "দুঃ", ["দুহ"]),  # a final visarga in a short word is ha
    ("bn", "ব্যাংক", ["বেংক"]),  # ya-phala after the first consonant is the vowel e
])
def test_words_as_lucene_analyses_them(language: str, word: str, terms: list[str]) -> None:
    assert ANALYZERS[language](word) == terms
