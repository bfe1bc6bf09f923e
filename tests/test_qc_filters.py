"""Quality control's query filters on hand-made queries: copied, not in the dataset's language, easy.

The measures are checked against independent computations (difflib's longest matching block, Unicode
script names, numpy's percentile of similarities encoded here); the filters' decisions through a real
quality control run (MiniLM recall, a judge answering from a table).
"""

from __future__ import annotations

import asyncio
import difflib
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from airbench_mteb.data.languages import eval_language
from airbench_mteb.generation.airbench.qc import QCInput, QCResult, QCSettings, QualityControl
from airbench_mteb.generation.airbench.query_filters import (
    longest_common_run,
    script_letters,
    script_share,
    token_overlap,
    tokens,
)
from airbench_mteb.generation.errors import GenerationError
from tests.test_generation_units import TableJudge

PASSAGE = ("The Amazon rainforest produces about twenty percent of the oxygen in the atmosphere of the Earth, "
           "according to estimates that ecologists still debate.")
COPIED_RUN = "the Amazon rainforest produces about twenty percent of the oxygen in the atmosphere"  # 13 tokens in a row
COPIED_WORDS = "oxygen percent Amazon rainforest produces twenty estimates"  # all 7 words in the passage, shuffled
KEYWORDS = "Amazon oxygen"  # every word in the passage, but a keyword query: too short for the overlap rule
CHINESE = "亚马逊雨林产生多少氧气"
OWN_WORDS = "how much of the air we breathe comes from South American jungles"


@pytest.mark.parametrize(("query", "passage"), [
    ("a b c d", "x a b c y"), ("a b x c d e", "c d e a b"), ("p q", "r s"), ("same words here", "same words here"),
])
def test_longest_common_run_is_difflibs_longest_matching_block(query: str, passage: str) -> None:
    q, p = query.split(), passage.split()
    expected = difflib.SequenceMatcher(None, q, p, autojunk=False).find_longest_match(0, len(q), 0, len(p)).size
    assert longest_common_run(q, p) == expected


def test_copy_measures_of_hand_made_queries() -> None:
    passage = tokens(PASSAGE, "en")
    assert longest_common_run(tokens(COPIED_RUN, "en"), passage) == 13
    assert longest_common_run(tokens(COPIED_WORDS, "en"), passage) == 3  # "amazon rainforest produces"
    assert token_overlap(tokens(COPIED_WORDS, "en"), passage) == 1.0
    assert token_overlap(tokens(OWN_WORDS, "en"), passage) == pytest.approx(2 / 12)  # "of", "the"
    # a language written without spaces is compared in character bigrams
    assert tokens("氧气含量", "zh") == ["氧气", "气含", "含量"]


def test_script_share_counts_letters_only() -> None:
    assert script_share(CHINESE, "Hans") == 1.0 and script_share(CHINESE, "Latn") == 0.0
    assert script_share("GPT-4 生成了 3 个问题", "Hans") == 1.0  # digits are no letters, Latin ones neutral here
    assert script_share("GPT-4", "Hans") == 0.0  # but judged where they are all the letters
    assert script_share("2024?", "Latn") is None  # no letter: nothing to judge
    assert script_share("какой кислород", "Cyrl") == 1.0
    assert script_share("ひらがなとカタカナと漢字", "Jpan") == 1.0


def test_every_default_script_of_an_iso_639_1_language_has_its_letters() -> None:
    table = json.loads(resources.files("mteb.languages").joinpath("iso_639_1_to_3.json").read_text(encoding="utf-8"))
    scripts = set()
    for code in table:
        try:
            scripts.add(eval_language(code).split("-")[1])
        except Exception:  # a language without a default script is refused before any filter runs
            continue
    assert all(script_letters(script) is not None for script in scripts), scripts
    assert script_letters("Xyzw") is None and script_share("abc", "Xyzw") is None  # no such script: no check


@pytest.mark.parametrize(("field", "value", "message"), [
    ("copied_run", -1, "copied_run must be at least 0"),
    ("copied_overlap", 1.5, "copied_overlap must be between 0.0 and 1.0"),
    ("language_share", -0.1, "language_share must be between 0.0 and 1.0"),
    ("easy_percentile", 101, "easy_percentile must be between 0.0 and 100.0"),
])
def test_filter_thresholds_are_checked(field: str, value: float, message: str) -> None:
    with pytest.raises(GenerationError, match=message):
        QCSettings(**{field: value})


def _case(language: str, queries: dict[str, str], passages: dict[str, str]) -> tuple[QCInput, TableJudge]:
    """One positive passage per query (``p-<qid>``) and a judge that rates every pair it is asked 3."""
    corpus = {f"p-{qid}": passages[qid] for qid in queries}
    corpus["other"] = "Penguins live in the southern hemisphere and cannot fly."
    data = QCInput(queries=dict(queries), positives={qid: f"p-{qid}" for qid in queries},
                   hard_negatives={}, corpus=corpus, language=language)
    judge = TableJudge({(q, d): 3 for q in queries.values() for d in corpus.values()})
    return data, judge


def _run(data: QCInput, judge: TableJudge, settings: QCSettings) -> QCResult:
    from airbench_mteb.generation.shared_models import BiEncoderReranker, make_encoder

    minilm = make_encoder("minilm")
    return asyncio.run(QualityControl(judge, minilm, [BiEncoderReranker(minilm)], settings).run(data))


def test_copied_and_foreign_queries_are_dropped_before_the_judge_sees_them() -> None:
    queries = {"q-copy": COPIED_RUN, "q-words": COPIED_WORDS, "q-keys": KEYWORDS, "q-zh": CHINESE, "q-own": OWN_WORDS}
    data, judge = _case("en", queries, dict.fromkeys(queries, PASSAGE))
    result = _run(data, judge, QCSettings())
    dropped = {d["qid"]: d for d in result.decisions if d.get("filter")}
    assert {qid: d["filter"] for qid, d in dropped.items()} == {"q-copy": "copied", "q-words": "copied",
                                                                "q-zh": "wrong_language"}
    assert all(d["action"] == "drop_query" and d["docid"] == f"p-{d['qid']}" for d in dropped.values())
    assert dropped["q-copy"]["common_run"] == 13 and dropped["q-words"]["token_overlap"] == 1.0
    assert dropped["q-zh"]["script_share"] == 0.0
    assert set(result.queries) == {"q-keys", "q-own"}
    assert not any(query in (COPIED_RUN, COPIED_WORDS, CHINESE) for query, _ in judge.calls)  # no judge call spent
    assert result.counts["dropped_by"] == {"copied": 2, "wrong_language": 1, "judged_low_quality": 0, "easy": 0}
    assert result.counts["easy_threshold"] is None

    off = _run(*_case("en", queries, dict.fromkeys(queries, PASSAGE)),
               QCSettings(copied_run=0, copied_overlap=0, language_share=0))
    assert set(off.queries) == set(queries) and not any(d.get("filter") for d in off.decisions)


def test_an_english_query_in_a_chinese_dataset_and_a_copied_chinese_query() -> None:
    passage = "亚马逊雨林产生了地球大气中大约百分之二十的氧气，但生态学家仍在争论这一估计。"
    queries = {"q-en": "how much oxygen does the rainforest make", "q-copy": "亚马逊雨林产生了地球大气中大约百分之二十的氧气",
               "q-own": "热带森林对空气有什么贡献"}
    data, judge = _case("zh", queries, dict.fromkeys(queries, passage))
    result = _run(data, judge, QCSettings())
    assert {d["qid"]: d["filter"] for d in result.decisions if d.get("filter")} == {"q-en": "wrong_language",
                                                                                  "q-copy": "copied"}
    assert set(result.queries) == {"q-own"}


def test_easy_queries_are_those_above_the_percentile_of_the_recall_similarities() -> None:
    from airbench_mteb.generation.shared_models import make_encoder

    passages = {
        "q-1": "Tomatoes need six hours of sun and regular watering to ripen in a garden.",
        "q-2": "The 1998 world cup final was played in Paris, where France beat Brazil three to nil.",
        "q-3": "Sourdough bread rises slowly because wild yeast ferments the dough over many hours.",
        "q-4": "Glaciers carve U-shaped valleys as the ice grinds the rock beneath it.",
        "q-5": "A bicycle chain should be cleaned and oiled every few hundred kilometres.",
    }
    queries = {"q-1": "tomato plant sunlight needs", "q-2": "who won the football final in France in 1998",
               "q-3": "why does naturally leavened bread take long", "q-4": "how do landscapes form",
               "q-5": "maintenance"}
    data, judge = _case("en", queries, passages)
    result = _run(data, judge, QCSettings(easy_percentile=60))

    minilm = make_encoder("minilm")  # the similarities again, independently: one query and passage at a time
    similarity = {qid: float(minilm.encode([queries[qid]], is_query=True)[0] @
                             minilm.encode([passages[qid]], is_query=False)[0]) for qid in queries}
    threshold = np.percentile(list(similarity.values()), 60)
    easy = {qid for qid, value in similarity.items() if value > threshold}
    assert len(easy) == 2  # 60th percentile of five values: the two highest are above it
    decisions = {d["qid"]: d for d in result.decisions if d.get("filter") == "easy"}
    assert set(decisions) == easy
    assert result.counts["easy_threshold"] == pytest.approx(threshold, abs=1e-5)
    for qid, decision in decisions.items():
        assert decision["similarity"] == pytest.approx(similarity[qid], abs=1e-5)
    assert set(result.queries) == set(queries) - easy
    assert result.counts["dropped_by"]["easy"] == 2
    # an easy query was judged (the rule needs the judged set), but its labels were never corrected
    assert all(qid not in {d["qid"] for d in result.decisions if d["doc_type"] != "original_positive"} for qid in easy)


def test_the_generator_keeps_the_candidates_before_quality_control_as_a_registrable_dataset(tmp_path) -> None:
    from airbench_mteb.catalog.user import airbench_folder_entry
    from airbench_mteb.data.airbench_source import mirror_file
    from tests.test_generation_golden import run_airbench

    def read_jsonl(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    out = tmp_path / "out"
    run_airbench(out)
    candidates = [row for row in read_jsonl(out / "candidates.jsonl") if row["status"] == "ok"]
    kept, before = airbench_folder_entry(out), airbench_folder_entry(out / "pre_qc")
    assert before.task_name == kept.task_name + "_default-pre-qc"

    def split_rows(entry, split: str, location) -> list[dict]:
        return read_jsonl(mirror_file(Path(entry.data_dir), entry, location(split)))

    queries = {split: {row["id"]: row["text"] for row in split_rows(before, split, before.queries_location)}
               for split in before.splits}
    assert {q: t for split in queries.values() for q, t in split.items()} == {c["qid"]: c["query"] for c in candidates}
    for split in kept.splits:  # a kept query keeps its split
        assert {row["id"] for row in split_rows(kept, split, kept.queries_location)} <= set(queries[split])
    labels = {(row["qid"], row["docid"]): row["relevance"]
              for split in before.splits for row in split_rows(before, split, before.qrels_location)}
    expected = {(c["qid"], c["positive_id"]): 1 for c in candidates}
    expected.update({(c["qid"], f"hn-{c['index']}-{j}"): 0 for c in candidates for j in range(len(c["hard_negatives"]))})
    assert labels == expected
    corpus = {row["id"] for row in read_jsonl(mirror_file(Path(before.data_dir), before, before.corpus_location()))}
    assert {doc for _, doc in expected} <= corpus and before.size.corpus >= kept.size.corpus
    assert not (out / "pre_qc" / "beir").exists()
