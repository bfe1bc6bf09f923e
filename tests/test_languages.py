"""ISO 639-1 codes to MTEB's language codes and names, from MTEB's own ISO tables."""

from __future__ import annotations

import pytest
from mteb.languages import check_language_code

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.languages import eval_language, language_name
from airbench_mteb.generation.airbench import AirBenchConfig
from airbench_mteb.generation.airbench.candidates import CandidateSettings
from airbench_mteb.generation.errors import GenerationError

# what the AIR-Bench generator wrote before the tables (catalog eval_lang, the name in its prompts)
AIRBENCH_LANGUAGES = {"ar": ("ara-Arab", "Arabic"), "bn": ("ben-Beng", "Bengali"), "de": ("deu-Latn", "German"),
                      "en": ("eng-Latn", "English"), "es": ("spa-Latn", "Spanish"), "fa": ("fas-Arab", "Persian"),
                      "fr": ("fra-Latn", "French"), "hi": ("hin-Deva", "Hindi"), "id": ("ind-Latn", "Indonesian"),
                      "ja": ("jpn-Jpan", "Japanese"), "ko": ("kor-Hang", "Korean"), "ru": ("rus-Cyrl", "Russian"),
                      "zh": ("cmn-Hans", "Chinese")}


@pytest.mark.parametrize("code", sorted(AIRBENCH_LANGUAGES))
def test_the_tables_give_what_the_generator_always_wrote(code: str) -> None:
    assert (eval_language(code), language_name(code)) == AIRBENCH_LANGUAGES[code]
    check_language_code(eval_language(code))  # a code MTEB's TaskMetadata accepts


def test_languages_beyond_the_old_maps_come_from_the_tables() -> None:
    assert eval_language("sw") == "swa-Latn" and language_name("it") == "Italian"


@pytest.mark.parametrize("code", ["xx", "zh-CN", ""])
def test_an_unknown_code_is_refused_naming_it(code: str) -> None:
    with pytest.raises(DatasetError, match=repr(code)):
        eval_language(code)


def test_the_airbench_generator_refuses_an_unknown_language_when_its_settings_are_built() -> None:
    with pytest.raises(GenerationError, match="'xx'"):  # before a corpus is read or an LLM is loaded
        AirBenchConfig(corpus="unused.jsonl", domain="news", language="xx", candidates=CandidateSettings(language="xx"))
