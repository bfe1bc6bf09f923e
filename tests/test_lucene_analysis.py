"""Lucene's analysis in Python against Lucene itself: fixtures recorded with Pyserini, no Java needed here."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from airbench_mteb.models.lucene_analysis import ANALYZERS, analysis_name, english, lucene_terms, tokenizer
from airbench_mteb.models.lucene_analysis.english import english_terms
from airbench_mteb.models.lucene_analysis.filters import cjk_width, lowercase
from airbench_mteb.models.lucene_analysis.japanese import search_penalty, stem_katakana
from airbench_mteb.models.lucene_analysis.tokenizer import (
    ALPHANUM,
    EMOJI,
    HANGUL,
    HIRAGANA,
    IDEOGRAPHIC,
    KATAKANA,
    NUM,
    SOUTHEAST_ASIAN,
    standard_tokens,
    standard_words,
    whitespace_pieces,
)

FIXTURES = Path(__file__).parent / "data" / "lucene_analysis"

# (language, sentence) -> why the Python analysis cannot reproduce Lucene's tokens there. Each entry must
# still differ (strict xfail), so the list stays true; the README's BM25 table names the same cases.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


def _cases() -> list[object]:
    cases = []
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        for number, case in enumerate(fixture["cases"]):
            reason = KNOWN_DIFFERENCES.get((path.stem, case["text"]))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(path.stem, case["text"], case["tokens"], marks=marks,
                                      id=f"{path.stem}-{number}"))
    return cases


def test_every_airbench_language_has_a_fixture() -> None:
    assert {path.stem for path in FIXTURES.glob("*.json")} == {
        "en", "zh", "es", "fr", "de", "ru", "ja", "ko", "ar", "fa", "id", "hi", "bn"}


@pytest.mark.parametrize(("language", "text", "tokens"), _cases())
def test_analysis_reproduces_lucene_token_for_token(language: str, text: str, tokens: list[str]) -> None:
    assert ANALYZERS[language](text) == tokens


@pytest.mark.parametrize(("text", "expected"), [
    ("Paris's e-mail 3.14 U.S.A. foo_bar", [("Paris's", ALPHANUM), ("e", ALPHANUM), ("mail", ALPHANUM),
                                            ("3.14", NUM), ("U.S.A", ALPHANUM), ("foo_bar", ALPHANUM)]),
    ("東京にカタカナ 서울의", [("東", IDEOGRAPHIC), ("京", IDEOGRAPHIC), ("に", HIRAGANA), ("カタカナ", KATAKANA),
                          ("서울의", HANGUL)]),
    ("ภาษาไทย 😀 -- ...", [("ภาษาไทย", SOUTHEAST_ASIAN), ("😀", EMOJI)]),
])
def test_standard_tokenizer_splits_at_unicode_word_boundaries_with_lucenes_token_kinds(
        text: str, expected: list[tuple[str, str]]) -> None:
    tokens = standard_tokens(text)
    assert [(t.text, t.kind) for t in tokens] == expected
    assert all(text[t.start:t.end] == t.text for t in tokens)


def test_standard_tokenizer_cuts_tokens_longer_than_255_characters() -> None:
    tokens = standard_tokens("x" * 600)
    assert [len(t.text) for t in tokens] == [255, 255, 90]
    assert [t.start for t in tokens] == [0, 255, 510]


def test_issue_examples_analyse_as_pyserini_does() -> None:
    assert lucene_terms("美国中东和谈特别协调员罗斯结束了中东之行", "cmn-Hans")[:4] == ["美国", "国中", "中东", "东和"]
    assert lucene_terms("서울의 날씨는 맑습니다", "kor-Hang")[:4] == ["서울", "울의", "날씨", "씨는"]
    assert lucene_terms("The runners were running quickly through Paris's streets", "eng-Latn") == [
        "runner", "were", "run", "quickli", "through", "pari", "street"]


def test_english_stems_with_lucenes_porter_variant() -> None:
    # Martin Porter's implementation: -bli -> -ble, -logi -> -log, one- and two-letter words kept.
    assert english_terms("possibly etiology vs us") == ["possibl", "etiolog", "vs", "us"]


def test_subset_languages_pick_the_analyzer() -> None:
    assert analysis_name(["eng-Latn", "cmn-Hans"]) == "zh"  # IRSC's mixed subsets: as --language zh
    assert analysis_name(("kor", "eng")) == "ko"
    assert analysis_name("jpn-Jpan") == "ja"
    assert analysis_name(["xyz-Latn"]) == "standard"
    # AIR-Bench's ISO 639-1 codes pick the same analyzers as MTEB's codes (issue 36: "en" was unstemmed)
    assert [analysis_name(code) for code in ("en", "zh", "ko", "AR", "bn")] == ["en", "zh", "ko", "ar", "bn"]
    assert lucene_terms("The runners were running", "en") == lucene_terms("The runners were running", "eng-Latn") == [
        "runner", "were", "run"]
    assert analysis_name(["en", "ja"]) == "ja" and analysis_name("nl") == "standard"
    # StandardAnalyzer behaviour outside the 13 languages: lower-cased standard tokens, no stopwords, no stems.
    assert lucene_terms("The Runners", "nld-Latn") == ["the", "runners"]


def test_filters_follow_lucene() -> None:
    assert cjk_width("ＡＢＣ１ ｶﾞｷﾞﾊﾟ") == "ABC1 ガギパ"
    assert lowercase(["ΟΔΟΣ", "İSTANBUL"]) == ["οδοσ", "istanbul"]  # per code point, as Java lower-cases


def test_japanese_helpers_follow_kuromoji_and_lucene() -> None:
    assert search_penalty("関西国際空港") == 4 * 3000
    assert search_penalty("空港") == 0
    assert search_penalty("コンピューターシステム") == 4 * 1700
    assert stem_katakana("コンピューター") == "コンピュータ"
    assert stem_katakana("カー") == "カー"  # shorter than four characters: kept
    assert lucene_terms("関西国際空港に行きました", "jpn") == ["関西", "国際", "空港", "行く"]


# Characters where the fast paths' shortcuts could go wrong: every ASCII joiner, whitespace kinds, and non-ASCII
# letters, marks (combining acute, soft hyphen, ZWJ), an emoji, Han, Hangul and Thai.
_TRICKY = "aZ09_.,;:'\"- \t\n!#/@é\u0301\u00ad\u200d\U0001F600中国서울ไทย"


# 3,000 fixed cases in the default profile; the deep profile's count where that is more.
WIDE = settings(max_examples=max(3000, settings.default.max_examples), deadline=None)


@WIDE
@given(st.text(alphabet=_TRICKY[:20], max_size=16))
def test_the_ascii_fast_path_cuts_as_the_general_word_boundary_search(text: str) -> None:
    assert standard_tokens(text) == tokenizer._segmented_tokens(text)


@WIDE
@given(st.text(alphabet=_TRICKY, max_size=16))
@example("  \u200d\U0001F600")  # issue 36: the fast path cut one of two spaces off the emoji's segment
def test_standard_words_are_the_texts_of_standard_tokens(text: str) -> None:
    assert standard_words(text) == [token.text for token in tokenizer._segmented_tokens(text)]


# Words and whitespace runs for longer texts: ASCII stretches between non-ASCII words, whitespace before marks
_WORDS = st.sampled_from(["a", "Zz9", "x_y", "a.b", "'", "-", "__", "é", "e\u0301", "\u0301", "\u00ad",
                          "\u200d\U0001F600", "中国", "서울", "ไทย", "na\u00efve"])
_SPACES = st.sampled_from(["", " ", "  ", "\t", "\n", " \n "])


@WIDE
@given(st.lists(st.tuples(_WORDS, _SPACES), max_size=14))
def test_standard_words_of_longer_mixed_texts_are_the_texts_of_standard_tokens(parts: list[tuple[str, str]]) -> None:
    text = "".join(word + space for word, space in parts)
    assert standard_words(text) == [token.text for token in tokenizer._segmented_tokens(text)]


def test_arrows_class_of_attached_marks_holds_exactly_the_code_points_of_the_general_paths() -> None:
    every = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]  # Arrow holds valid UTF-8
    in_arrow = pc.match_substring_regex(pa.array(every), tokenizer._attached_class()).to_pylist()
    attached = regex.compile(tokenizer._ATTACHED)
    assert in_arrow == [attached.fullmatch(char) is not None for char in every]
    assert sum(in_arrow) > 2000  # marks of every script, format characters, ZWJ


@settings(max_examples=600, deadline=None)  # an Arrow call each: 5 ms
@given(st.lists(st.one_of(st.none(), st.lists(st.tuples(_WORDS, _SPACES), max_size=8).map(
    lambda parts: "".join(word + space for word, space in parts))), max_size=4))
def test_texts_cut_at_whitespace_by_arrow_have_the_words_of_the_whole_text(texts: list[str | None]) -> None:
    pieces, cuttable = whitespace_pieces(pa.array(texts, pa.string()))
    for text, text_pieces, cut in zip(texts, pieces.to_pylist(), cuttable.tolist(), strict=True):
        holds_attached = text is not None and regex.search(tokenizer._ATTACHED, text) is not None
        assert cut == (text is not None and not holds_attached)
        if cut:
            assert [word for piece in text_pieces for word in standard_words(piece)] == standard_words(text)
        else:
            assert text_pieces == [""]


@pytest.mark.parametrize(("text", "expected"), [
    ("  \u200d\U0001F600", ["  \u200d\U0001F600"]),  # issue 36's case
    ("x   \u200d\U0001F600 y", ["x", "   \u200d\U0001F600", "y"]),
    ("\n \u200d\U0001F600 x", [" \u200d\U0001F600", "x"]),  # a newline is a segment of its own (WB3a)
    ("x\t\u200d\U0001F600", ["x", "\t\u200d\U0001F600"]),
])
def test_spaces_before_an_attached_mark_stay_in_its_segment(text: str, expected: list[str]) -> None:
    # WB3d keeps spaces together, WB4 attaches the ZWJ to the last of them and WB3c joins the emoji: one segment,
    # which the fast path may not cut inside
    assert standard_words(text) == [token.text for token in tokenizer._segmented_tokens(text)] == expected


# Terms near the spots where Snowball's "porter" and Martin Porter's stemmer part ways: stems, then suffixes the
# steps strip or rewrite, letters that double, and the characters a token may hold besides letters.
_STEMS = st.text(alphabet="abcdeiklogsty019_.'\u00e9\u00fc\u00df\u0131\u0142", min_size=1, max_size=9)
_SUFFIXES = st.sampled_from(["", "s", "es", "ies", "ed", "ing", "ly", "bly", "bli", "blies", "blied", "logi", "logy",
                             "logies", "ation", "ational", "izer", "ement", "ness", "ful", "iviti", "alli", "entli",
                             "ousli", "ize", "ate", "ive"])


@WIDE
@given(stem=_STEMS, suffix=_SUFFIXES, double=st.sampled_from(["", "k", "t", "l", "s", "0", "1", "_"]))
def test_the_fast_porter_stemmer_is_martin_porters(stem: str, suffix: str, double: str) -> None:
    term = stem + double * 2 + suffix
    english.porter_stem.cache_clear()
    assert english.porter_stem(term) == english._porter().stem(term, to_lowercase=False)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_STEMS, st.sampled_from(["The", "CAT'S", "runs\u2019s", "\u0130STANBUL", "\u039f\u0394\u039f\u03a3",
                                                    "and", "possibly", "technology", "x"]))))
def test_the_english_terms_of_many_words_at_once_are_each_words_term(words: list[str]) -> None:
    assert english._english_terms_of(words) == [english._english_term(word) for word in words]
