"""Japanese as Pyserini analyses it: Lucene's JapaneseAnalyzer, with janome in place of Kuromoji.

Lucene's chain: CJK width folding of the text, Kuromoji morphology (IPADIC, search mode, punctuation
and compound tokens discarded), base forms of inflected words, a part-of-speech stop filter (particles,
auxiliary verbs, conjunctions, symbols, fillers), Lucene's Japanese stopwords, a trailing prolonged
sound mark removed from katakana words of four or more characters, lower-casing. janome segments with
the same IPADIC dictionary; Kuromoji's search mode additionally penalises long words (a kanji-only word
of more than 2 characters, any word of more than 7) so compounds split into their parts, mirrored here
by adding the same penalties to janome's word costs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from contextvars import ContextVar
from functools import cache
from typing import Any

from airbench_mteb.models.lucene_analysis.filters import cjk_width, lowercase, remove_stopwords

# Lucene's ja/stoptags.txt (Lucene 9.5): the parts of speech JapaneseAnalyzer drops, joined with "-".
STOP_TAGS = frozenset("""
接続詞 助詞 助詞-格助詞 助詞-格助詞-一般 助詞-格助詞-引用 助詞-格助詞-連語 助詞-接続助詞 助詞-係助詞 助詞-副助詞
助詞-間投助詞 助詞-並立助詞 助詞-終助詞 助詞-副助詞／並立助詞／終助詞 助詞-連体化 助詞-副詞化 助詞-特殊 助動詞 記号
記号-一般 記号-読点 記号-句点 記号-空白 記号-括弧開 記号-括弧閉 その他-間投 フィラー 非言語音
""".split())
# Lucene's ja/stopwords.txt (Lucene 9.5).
JAPANESE_STOPWORDS = frozenset("""
の に は を た が で て と し れ さ ある いる も する から な こと として い や れる など なっ ない この ため その
あっ よう また もの という あり まで られ なる へ か だ これ によって により おり より による ず なり られる において
ば なかっ なく しかし について せ だっ その後 できる それ う ので なお のみ でき き つ における および いう さらに
でも ら たり その他 に関する たち ます ん なら に対して 特に せる 及び これら とき では にて ほか ながら うち そして
とともに ただし かつて それぞれ または お ほど ものの に対する ほとんど と共に といった です とも ところ ここ
""".split())

# Unicode categories Kuromoji treats as punctuation (a token starting with one is discarded).
_PUNCTUATION = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Pd", "Ps", "Pe", "Pc", "Po", "Sm", "Sc", "Sk", "So", "Pi",
                          "Pf"})
_PROLONGED_SOUND_MARK = "\u30fc"
_MIN_KATAKANA_STEM_LENGTH = 4


def stem_katakana(term: str) -> str:
    """Lucene's JapaneseKatakanaStemFilter: drop the final prolonged sound mark of a long katakana word."""
    if (len(term) >= _MIN_KATAKANA_STEM_LENGTH and term[-1] == _PROLONGED_SOUND_MARK
            and all("\u30a0" <= char <= "\u30ff" for char in term)):
        return term[:-1]
    return term


# Kuromoji's search-mode penalties (Lucene's JapaneseTokenizer constants).
_KANJI_LENGTH, _KANJI_PENALTY = 2, 3000
_OTHER_LENGTH, _OTHER_PENALTY = 7, 1700


def search_penalty(word: str) -> int:
    """The cost Kuromoji's search mode adds to a word: per kanji beyond 2 in a kanji-only word, else per
    character beyond 7."""
    if len(word) <= _KANJI_LENGTH:
        return 0
    if all(_is_kanji(char) for char in word):
        return (len(word) - _KANJI_LENGTH) * _KANJI_PENALTY
    return max(len(word) - _OTHER_LENGTH, 0) * _OTHER_PENALTY


@cache
def _is_kanji(char: str) -> bool:
    return "KANJI" in _janome().sys_dic.get_char_categories(char)


def _morphemes(text: str) -> Iterator[Any]:
    """Kuromoji's (search mode) morphemes of the text, without punctuation."""
    return (token for token in _segment(text) if unicodedata.category(token.surface[0]) not in _PUNCTUATION)


def _base_forms(text: str) -> Iterator[str]:
    """Words of the text in their base form, without punctuation and stop parts of speech."""
    for token in _morphemes(text):
        if "-".join(part for part in token.part_of_speech.split(",") if part != "*") in STOP_TAGS:
            continue
        yield token.base_form if token.base_form != "*" else token.surface


def japanese_words(text: str) -> list[str]:
    """JapaneseAnalyzer's segmentation alone: the width-folded text's morphemes as written, lower-cased (no base
    forms, stop filters or stemming)."""
    return lowercase(token.surface for token in _morphemes(cjk_width(text)))


def japanese_terms(text: str) -> list[str]:
    words = remove_stopwords(_base_forms(cjk_width(text)), JAPANESE_STOPWORDS)
    return lowercase(stem_katakana(word) for word in words)


# janome has no search mode: while this module tokenizes, its lattice adds the penalties to the costs of
# dictionary and unknown words. Other janome users in the process (``bm25-words``) are not affected.
_SEARCH_MODE: ContextVar[bool] = ContextVar("kuromoji_search_mode", default=False)


def _segment(text: str) -> list[Any]:
    flag = _SEARCH_MODE.set(True)
    try:
        return list(_janome().tokenize(text))
    finally:
        _SEARCH_MODE.reset(flag)


@cache
def _janome() -> Any:
    import janome.tokenizer
    from janome.lattice import Lattice, NodeType

    class SearchModeLattice(Lattice):  # type: ignore[misc]
        def add(self, node: Any) -> None:
            if _SEARCH_MODE.get() and getattr(node, "node_type", NodeType.USER_DICT) != NodeType.USER_DICT:
                node.cost += search_penalty(node.surface)
            super().add(node)

    janome.tokenizer.Lattice = SearchModeLattice
    return janome.tokenizer.Tokenizer()


ANALYZERS = {"ja": japanese_terms}
