"""ISO 639-1 codes (what dataset cards and users write) to MTEB's language codes and English names.

The tables are MTEB's own (``mteb/languages/``: ISO 639-1 -> 639-3, the default script of each
language, ISO 639-3 names), the ones MTEB itself uses to read languages off hub cards.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from airbench_mteb.data.errors import DatasetError

# Where a table cannot choose: the hub's "zh" is the macrolanguage, MTEB's Chinese retrieval tasks
# (and AIR-Bench's zh data) are Mandarin in simplified script.
EVAL_LANGUAGE_CHOICES = {"zh": "cmn-Hans"}


@cache
def _mteb_table(name: str) -> dict[str, str]:
    return json.loads(resources.files("mteb.languages").joinpath(name).read_text(encoding="utf-8"))


def _iso_639_3(code: str) -> str:
    iso3 = _mteb_table("iso_639_1_to_3.json").get(code.lower())
    if iso3 is None:
        raise DatasetError(f"unknown ISO 639-1 language code {code!r}")
    return iso3


def eval_language(code: str) -> str:
    """MTEB's ``xxx-Scrp`` code (ISO 639-3 and ISO 15924 script) of an ISO 639-1 code: ``en`` -> ``eng-Latn``."""
    if code in EVAL_LANGUAGE_CHOICES:
        return EVAL_LANGUAGE_CHOICES[code]
    iso3 = _iso_639_3(code)
    script = _mteb_table("iso_639_3_to_default_script.json").get(iso3)
    if script is None:
        raise DatasetError(f"MTEB knows no default script for language {code!r} ({iso3})")
    return f"{iso3}-{script}"


def language_name(code: str) -> str:
    """The English name of an ISO 639-1 code (``zh`` -> ``Chinese``, the macrolanguage's name)."""
    from mteb.languages import ISO_TO_LANGUAGE  # mteb at first use: the generators' option checks import this module

    return ISO_TO_LANGUAGE[_iso_639_3(code)]
