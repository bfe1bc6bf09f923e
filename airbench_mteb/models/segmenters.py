"""Language-aware index terms for lexical retrieval, with real word segmenters for Chinese, Japanese and Korean.

The analysis of ``airbench-mteb/bm25-words`` (``airbench-mteb/bm25`` mirrors Pyserini's Lucene analyzers instead).

Text is split into CJK runs (CJK characters with the ASCII words glued to them) and the rest. A CJK
run goes to a word segmenter (jieba for Chinese, janome for Japanese, kiwipiepy morphemes for
Korean) chosen by its script (Hangul means Korean, kana means Japanese) or, for Han characters
alone, by the languages given. Everything else, and any Latin word a segmenter splits off, is
lowercased, split on Unicode word characters, stripped of stopwords and stemmed (Snowball) for the
first non-CJK language given. So a mixed English/Chinese text gets English analysis for its Latin
words and Chinese words for its Han runs, and Latin words are analysed the same way whatever the
CJK language is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from airbench_mteb.models.lucene_analysis.filters import snowball_stemmer

CHINESE, JAPANESE, KOREAN = "zh", "ja", "ko"
# ISO 639-3 codes whose text is segmented by a CJK word segmenter.
CJK_LANGUAGES = {"cmn": CHINESE, "zho": CHINESE, "yue": CHINESE, "jpn": JAPANESE, "kor": KOREAN}

# ISO 639-3 -> (bm25s stopword list name, Snowball algorithm). English follows Anserini's default
# analyzer (Lucene's English stopwords, Porter stemmer), which is what Pyserini's BM25 runs use.
LATIN_ANALYSIS: dict[str, tuple[str | None, str]] = {
    "eng": ("STOPWORDS_EN", "porter"),
    "deu": ("STOPWORDS_GERMAN", "german"),
    "nld": ("STOPWORDS_DUTCH", "dutch"),
    "fra": ("STOPWORDS_FRENCH", "french"),
    "spa": ("STOPWORDS_SPANISH", "spanish"),
    "por": ("STOPWORDS_PORTUGUESE", "portuguese"),
    "ita": ("STOPWORDS_ITALIAN", "italian"),
    "rus": ("STOPWORDS_RUSSIAN", "russian"),
    "swe": ("STOPWORDS_SWEDISH", "swedish"),
    "nor": ("STOPWORDS_NORWEGIAN", "norwegian"),
    "nob": ("STOPWORDS_NORWEGIAN", "norwegian"),
    "nno": ("STOPWORDS_NORWEGIAN", "norwegian"),
    "dan": ("STOPWORDS_DANISH", "danish"),
    "tur": ("STOPWORDS_TURKISH", "turkish"),
    "ara": (None, "arabic"),
    "arb": (None, "arabic"),
    "hye": (None, "armenian"),
    "eus": (None, "basque"),
    "cat": (None, "catalan"),
    "ces": (None, "czech"),
    "epo": (None, "esperanto"),
    "est": (None, "estonian"),
    "fin": (None, "finnish"),
    "ell": (None, "greek"),
    "hin": (None, "hindi"),
    "hun": (None, "hungarian"),
    "ind": (None, "indonesian"),
    "gle": (None, "irish"),
    "lit": (None, "lithuanian"),
    "nep": (None, "nepali"),
    "fas": (None, "persian"),
    "pes": (None, "persian"),
    "pol": (None, "polish"),
    "ron": (None, "romanian"),
    "srp": (None, "serbian"),
    "tam": (None, "tamil"),
    "yid": (None, "yiddish"),
}

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f\u3005-\u3007"
_KANA = "\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff"  # without the middle dot U+30FB
_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
_CJK = _HAN + _KANA + _HANGUL
# A CJK word: CJK characters with the ASCII letters and digits glued to them ("我用iPhone拍照",
# "iPhone을"), so the segmenter sees them in context. Whitespace between CJK words stays inside the
# run, so a Korean sentence reaches the analyser whole.
_CJK_WORD = f"[A-Za-z0-9]*[{_CJK}][{_CJK}A-Za-z0-9]*"
_CJK_RUN = re.compile(f"{_CJK_WORD}(?:\\s+{_CJK_WORD})*")
_HAS_CJK = re.compile(f"[{_CJK}]")
_HAS_KANA = re.compile(f"[{_KANA}]")
_HAS_HANGUL = re.compile(f"[{_HANGUL}]")
_WORD = re.compile(r"\w+")

# Symbols and function morphemes (particles, auxiliaries, endings, affixes, copula) carry no topic;
# Lucene's Kuromoji and Nori analysers drop similar classes. Korean Hanja (SH) is kept.
_JANOME_DROPPED = ("記号", "助詞", "助動詞")
_KIWI_DROPPED = ("J", "E", "XS", "XP", "VCP", "SF", "SP", "SS", "SE", "SO", "SW", "SB")


@dataclass(frozen=True)
class Analyzer:
    """How one set of languages is analysed: stopwords and a Snowball stemmer for Latin text, and the
    segmenter for runs of Han characters alone (kana and Hangul pick their own)."""

    stopwords: frozenset[str]
    stemmer: str | None
    han_segmenter: str

    def terms(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text)
        if not _HAS_CJK.search(text):  # the common case; the run pattern backtracks over every Latin word
            return self._latin_terms(text)
        terms: list[str] = []
        start = 0
        for run in _CJK_RUN.finditer(text):
            terms += self._latin_terms(text[start:run.start()])
            for word in _SEGMENTERS[self._cjk_segmenter(run.group())](run.group()):
                # Latin words the segmenter split off get the same analysis as any other Latin word.
                terms += [word.lower()] if _HAS_CJK.search(word) else self._latin_terms(word)
            start = run.end()
        terms += self._latin_terms(text[start:])
        return terms

    def _cjk_segmenter(self, run: str) -> str:
        if _HAS_HANGUL.search(run):
            return KOREAN
        if _HAS_KANA.search(run):
            return JAPANESE
        return self.han_segmenter

    def _latin_terms(self, text: str) -> list[str]:
        words = [w for w in _WORD.findall(text.lower()) if w not in self.stopwords]
        if self.stemmer is None or not words:
            return words
        return snowball_stemmer(self.stemmer).stemWords(words)


def tokenize(text: str, language: str | Sequence[str]) -> list[str]:
    """Index terms of ``text`` for the ISO 639-3 language(s) ``language`` (script suffixes like ``-Latn`` allowed)."""
    return analyzer(language).terms(text)


def analyzer(language: str | Sequence[str]) -> Analyzer:
    """The (cached) analyser of a language or of a subset's languages, in order of preference."""
    codes = (language,) if isinstance(language, str) else tuple(language)
    return _analyzer(tuple(dict.fromkeys(code.split("-")[0].lower() for code in codes)))


@cache
def _analyzer(languages: tuple[str, ...]) -> Analyzer:
    cjk = [CJK_LANGUAGES[code] for code in languages if code in CJK_LANGUAGES]
    latin = next((code for code in languages if code not in CJK_LANGUAGES), None)
    stopword_list, stemmer = LATIN_ANALYSIS.get(latin or "", (None, None))
    return Analyzer(stopwords=_stopwords(stopword_list), stemmer=stemmer, han_segmenter=cjk[0] if cjk else CHINESE)


def _stopwords(name: str | None) -> frozenset[str]:
    if name is None:
        return frozenset()
    import bm25s.stopwords

    return frozenset(getattr(bm25s.stopwords, name))


def _chinese_words(run: str) -> list[str]:
    return [w for w in _jieba().lcut(run) if not w.isspace()]


def _japanese_words(run: str) -> list[str]:
    words = []
    for token in _janome().tokenize(run):
        if not token.part_of_speech.startswith(_JANOME_DROPPED) and not token.surface.isspace():
            # Base forms let an inflected verb in a query match another inflection in a document.
            words.append(token.base_form if token.base_form != "*" else token.surface)
    return words


def _korean_morphemes(run: str) -> list[str]:
    return [t.form for t in _kiwi().tokenize(run) if not t.tag.startswith(_KIWI_DROPPED)]


_SEGMENTERS: dict[str, Callable[[str], list[str]]] = {
    CHINESE: _chinese_words, JAPANESE: _japanese_words, KOREAN: _korean_morphemes,
}


# The segmenters load dictionaries or models (jieba ~1 s, kiwi a few s): once per process, on first use.
@cache
def _jieba() -> Any:
    import jieba

    segmenter = jieba.Tokenizer()
    segmenter.initialize()
    return segmenter


@cache
def _janome() -> Any:
    from janome.tokenizer import Tokenizer

    return Tokenizer()


@cache
def _kiwi() -> Any:
    from kiwipiepy import Kiwi

    return Kiwi()
