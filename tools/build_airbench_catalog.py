"""Rebuild airbench_mteb/catalog/airbench.json from the AIR-Bench catalog facts.

Usage: python tools/build_airbench_catalog.py tests/data/airbench_catalog.json
(that file is the official AIR-Bench catalog of both releases, kept for the tests).
The output is the package's own catalog: one self-contained entry per dataset. Contributors
normally edit the output directly (see CONTRIBUTING.md); this script documents where the
original 97 entries came from.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LANGUAGE_SCRIPTS = {
    "en": "eng-Latn", "zh": "cmn-Hans", "ar": "ara-Arab", "bn": "ben-Beng", "de": "deu-Latn",
    "es": "spa-Latn", "fa": "fas-Arab", "fr": "fra-Latn", "hi": "hin-Deva", "id": "ind-Latn",
    "ja": "jpn-Jpan", "ko": "kor-Hang", "ru": "rus-Cyrl",
}
MTEB_DOMAINS = {
    "wiki": ["Encyclopaedic", "Written"], "web": ["Web", "Written"], "msmarco": ["Web", "Written"],
    "healthcare": ["Medical", "Written"], "law": ["Legal", "Written"], "arxiv": ["Academic", "Written"],
    "science": ["Academic", "Written"], "news": ["News", "Written"], "finance": ["Financial", "Written"],
    "book": ["Non-fiction", "Written"],
}
# Source-corpus licenses as listed in the AIR-Bench paper (Tables 16-17); others unknown.
SOURCE_LICENSES = {
    "armancohan/long-summarization": "Apache 2.0", "reuters21578": "CC BY 4.0",
    "Duxiaoman-DI/FinCorpus": "Apache 2.0", "qiaojin/PubMedQA": "MIT",
    "huatuo_encyclopedia_qa": "Apache 2.0", "pile-of-law": "CC BY-NC-SA 4.0",
    "wikipedia": "CC BY-SA 3.0, GFDL", "mc4": "ODC-BY", "simlm-msmarco": "MIT",
    "2312.11805": "CC BY 4.0", "2005.14165": "arXiv.org perpetual, non-exclusive license 1.0",
    "2307.09288": "arXiv.org perpetual, non-exclusive license 1.0",
    "2303.18223": "arXiv.org perpetual, non-exclusive license 1.0", "lex_files": "CC BY-NC-SA 4.0",
    "asas-ai/financial_news": "Apache 2.0", "CoFiF": "CC BY-NC 4.0", "GEM/mlsum": "MIT",
    "Multi_Legal_Pile": "CC BY-NC-SA 4.0", "ru_sci_bench": "MIT",
}
RELEASE_DATES = {"AIR-Bench_24.04": "2024-04-30", "AIR-Bench_24.05": "2024-05-31"}


def source_license(url: str) -> str:
    for key, licence in SOURCE_LICENSES.items():
        if key.lower() in url.lower():
            return licence
    return "not specified"


def entries(facts: dict) -> list[dict]:
    out = []
    for version, by_type in facts.items():
        for task_type, by_domain in by_type.items():
            for domain, by_language in by_domain.items():
                for language, by_dataset in by_language.items():
                    for dataset, info in by_dataset.items():
                        out.append({
                            "version": version,
                            "task_type": task_type,
                            "domain": domain,
                            "language": language,
                            "dataset": dataset,
                            "eval_lang": LANGUAGE_SCRIPTS[language],
                            "mteb_domains": MTEB_DOMAINS[domain],
                            "source_name": info["name"],
                            "source_url": info["source"],
                            "source_license": source_license(info["source"]),
                            "release_date": RELEASE_DATES[version],
                            "revision": "main",
                            "license": "cc-by-nc-sa-4.0",  # all AIR-Bench data (seed 000, section F)
                            "splits": info["splits"],
                            "size": info["size"],
                            "labels": info["labels"],
                            "avg_tokens": {
                                "corpus": info["token_num"]["corpus"]["avg_token_num"],
                                **{s: q["avg_token_num"] for s, q in info["token_num"]["queries"].items()},
                            },
                        })
    return out


if __name__ == "__main__":
    facts = json.loads(Path(sys.argv[1]).read_text())
    target = Path(__file__).resolve().parents[1] / "airbench_mteb" / "catalog" / "airbench.json"
    target.write_text(json.dumps({"datasets": entries(facts)}, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {target}")
