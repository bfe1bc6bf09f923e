"""Unusual text and language codes for the plugin's one text analysis: Lucene's words, and quality control's
query filters built on them (issues 36 and 43).

Each ``check`` compares with what a reader of the language counts by hand: the words of a question, how many of
them are copied in a row, which analyzer a code names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.bad_inputs.framework import Case, Workspace

HINDI_PASSAGE = ("अमेज़न वर्षावन पृथ्वी के वायुमंडल की लगभग बीस प्रतिशत ऑक्सीजन पैदा करता है, हालांकि पारिस्थितिकी "
                 "विज्ञानी इस अनुमान पर अब भी बहस करते हैं।")
KOREAN_PASSAGE = ("아마존 열대우림은 지구 대기 중 산소의 약 20퍼센트를 만들어 내는 것으로 추정되지만, 생태학자들은 이 "
                  "추정치에 대해 여전히 논쟁하고 있다.")
ARABIC_PASSAGE = ("تُنْتِجُ غَابَاتُ الأَمَازُونِ المَطِيرَةُ نَحْوَ عِشْرِينَ فِي المِئَةِ مِنَ الأُكْسُجِينِ فِي الغِلَافِ الجَوِّيِّ "
                  "لِلأَرْضِ.")
ENGLISH_PASSAGE = ("The Amazon rainforest produces about twenty percent of the oxygen in the atmosphere of the Earth, "
                   "according to estimates that ecologists still debate.")


def _fullwidth(text: str) -> str:
    """ASCII in its fullwidth forms (U+FF01-FF5E), a space as the ideographic space."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)


def _check_query(query: str, passage: str, language: str, **settings: Any) -> Callable[[Workspace], Any]:
    def call(ws: Workspace) -> Any:
        from airbench_mteb.generation.airbench.query_filters import FilterSettings, check_query

        return check_query(query, passage, language, FilterSettings(**settings) if settings else None)
    return call


def _kept(ws: Workspace, decision: Any) -> None:
    assert decision is None, decision


def _copied(run: int) -> Callable[[Workspace, Any], None]:
    def check(ws: Workspace, decision: Any) -> None:
        assert decision is not None and decision.filter == "copied" and decision.common_run == run, decision
    return check


def _wrong_language(ws: Workspace, decision: Any) -> None:
    assert decision is not None and decision.filter == "wrong_language" and decision.script_share == 0.0, decision


PERSIAN = ("کتاب‌های درسی می‌توانند به دانش‌آموزان کمک کنند تا مفاهیم پایه‌ای ریاضی را بهتر بفهمند و مهارت‌های "
           "حل مسئله را تقویت کنند.")  # 26 words as Lucene cuts them (a ZWNJ splits), 21 with the 5 ZWNJ words joined
RUSSIAN_PASSAGE = ("Тропические леса Амазонии производят около двадцати процентов кислорода в атмосфере Земли, хотя "
                   "экологи до сих пор спорят об этой оценке.")


def _terms(text: str, language: str) -> Callable[[Workspace], list[str]]:
    def call(ws: Workspace) -> list[str]:
        from airbench_mteb.models.lucene_analysis import lucene_terms

        return lucene_terms(text, language)
    return call


def _words(text: str) -> Callable[[Workspace], list[str]]:
    def call(ws: Workspace) -> list[str]:
        from airbench_mteb.models.lucene_analysis import standard_words

        return standard_words(text)
    return call


def _is(expected: Any) -> Callable[[Workspace, Any], None]:
    def check(ws: Workspace, value: Any) -> None:
        assert value == expected, f"{value!r} != {expected!r}"
    return check


CASES = [
    # a natural question sharing 2-5 words with its passage: the old \w tokens cut Hindi at every vowel sign and
    # Korean into bigrams, and dropped both as copied
    Case("text-qc-hindi-natural-question", call=_check_query("अमेज़न वर्षावन वायुमंडल को कितनी ऑक्सीजन देता है?",
                                                             HINDI_PASSAGE, "hi"), check=_kept),
    Case("text-qc-korean-natural-question", call=_check_query("아마존 열대우림은 지구 대기 중 산소를 얼마나 만들어 내나요?",
                                                              KOREAN_PASSAGE, "ko"), check=_kept),
    Case("text-qc-vowelled-arabic-natural-question",
         call=_check_query("كَمْ مِنَ الأُكْسُجِينِ فِي الغِلَافِ الجَوِّيِّ تُنْتِجُهُ غَابَاتُ الأَمَازُونِ؟", ARABIC_PASSAGE, "ar"),
         check=_kept),
    # unvowelled copy of a vowelled passage: 14 words in a row (تنتج ... للأرض)
    Case("text-qc-unvowelled-arabic-copy",
         call=_check_query("هل تنتج غابات الأمازون المطيرة نحو عشرين في المئة من الأكسجين في الغلاف الجوي للأرض؟",
                           ARABIC_PASSAGE, "ar"), check=_copied(14)),
    # fullwidth Latin is Latin: kept, and its copy is a copy (12 words: "about ... earth")
    Case("text-qc-fullwidth-english-question",
         call=_check_query(_fullwidth("How much of the air we breathe comes from South American jungles?"),
                           ENGLISH_PASSAGE, "en"), check=_kept),
    Case("text-qc-fullwidth-english-copy",
         call=_check_query(_fullwidth("Does the Amazon rainforest produce about twenty percent of the oxygen in the "
                                      "atmosphere of the Earth?"), ENGLISH_PASSAGE, "en"), check=_copied(12)),
    Case("text-qc-halfwidth-katakana-question", call=_check_query("ｱﾏｿﾞﾝﾉ ｼﾞｬﾝｸﾞﾙﾊ ﾄﾞﾚｸﾗｲ ｻﾝｿｦ ﾂｸﾙﾉ?",
                                                                  "アマゾンの熱帯雨林は酸素を生み出している。", "ja"),
         check=_kept),
    Case("text-qc-unknown-language", call=_check_query("hello there", "hello there", "xx"),
         error="unknown ISO 639-1 language code 'xx'"),
    Case("text-qc-negative-copied-run", call=_check_query("a", "a", "en", copied_run=-1),
         error="copied_run must be at least 0"),
    Case("text-qc-share-above-one", call=_check_query("a", "a", "en", language_share=1.5),
         error="language_share must be between 0.0 and 1.0"),
    # AIR-Bench's ISO 639-1 code picks English's analyzer (it silently gave unstemmed standard tokens)
    Case("text-lucene-terms-iso-639-1", call=_terms("The runners were running", "en"),
         check=_is(["runner", "were", "run"])),
    Case("text-lucene-terms-outside-the-13", call=_terms("The Runners", "nl"), check=_is(["the", "runners"])),
    # two spaces, a zero-width joiner and an emoji are one segment (UAX #29 WB3d, WB4, WB3c)
    # issue 43: Persian copies typed without their ZWNJ (21 joined words), with it as spaces or with Arabic yeh/kaf
    # (26 words); the old filter found no run of 10 and kept them all
    Case("text-qc-persian-copy-without-zwnj", call=_check_query(PERSIAN.replace("\u200c", ""), PERSIAN, "fa"),
         check=_copied(21)),
    Case("text-qc-persian-copy-zwnj-as-spaces", call=_check_query(PERSIAN.replace("\u200c", " "), PERSIAN, "fa"),
         check=_copied(26)),
    Case("text-qc-persian-copy-arabic-yeh-kaf",
         call=_check_query(PERSIAN.replace("\u06cc", "\u064a").replace("\u06a9", "\u0643"), PERSIAN, "fa"),
         check=_copied(26)),
    # 8 words copied verbatim plus an emoji: all 8 distinct words in the passage (the emoji is no word)
    Case("text-qc-copied-clause-plus-emoji",
         call=_check_query("Тропические леса Амазонии производят около двадцати процентов кислорода 🤔",
                           RUSSIAN_PASSAGE, "ru"), check=_copied(8)),
    Case("text-qc-accents-folded-on-one-side",
         call=_check_query("la basilica de la sagrada familia en barcelona fue disenada por antoni gaudi",
                           "La basílica de la Sagrada Familia en Barcelona fue diseñada por Antoni Gaudí.", "es"),
         check=_copied(13)),
    Case("text-qc-umlauts-written-out",
         call=_check_query("der koelner dom ist die groesste gotische kathedrale deutschlands und wurde gebaut",
                           "Der Kölner Dom ist die größte gotische Kathedrale Deutschlands und wurde gebaut.", "de"),
         check=_copied(12)),
    Case("text-qc-japanese-question-naming-python",
         call=_check_query("Pythonでlist comprehensionを使うとfor文より速くなるのはなぜですか？",
                           "アマゾンの熱帯雨林は酸素を生み出している。", "ja"), check=_kept),
    Case("text-qc-hindi-question-naming-python",
         call=_check_query("Python में list comprehension का उपयोग for loop से तेज़ क्यों होता है?", HINDI_PASSAGE,
                           "hi"), check=_kept),
    Case("text-qc-emoji-only-query", call=_check_query("🤔🤔❓", ENGLISH_PASSAGE, "en"), check=_wrong_language),
    Case("text-standard-words-spaces-zwj-emoji", call=_words("  \u200d\U0001F600"), check=_is(["  \u200d\U0001F600"])),
]
