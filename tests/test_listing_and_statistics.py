"""MTEB conventions users rely on: AIR-Bench listed by the default filters, descriptive statistics filled."""

from __future__ import annotations

import csv
import json
from itertools import islice
from pathlib import Path

import mteb
import pytest

from airbench_mteb.catalog import airbench_entries
from airbench_mteb.cli import main
from airbench_mteb.data.airbench_source import mirror_file
from airbench_mteb.generation.irsc import BuildConfig, build_irsc
from airbench_mteb.generation.irsc.sources import peoples_daily_records, wikipedia_sample_records
from airbench_mteb.settings import configure
from airbench_mteb.tasks.cocktail import paper_statistics
from airbench_mteb.tasks.statistics import SHIPPED_STATS
from tests.airbench_mirror import english_documents, write_entry
from tests.conftest import SAMPLE_DATA

COCKTAIL_DATA = SAMPLE_DATA / "cocktail"
SHIPPED_COCKTAIL = {"CocktailNFCorpus": "nfcorpus", "CocktailNQUTD": "nq-utd"}
LLM_CORPUS = "llama-2-7b-chat-tmp0.2"


# --- listing ---------------------------------------------------------------------------------------

def test_default_filters_list_airbench_legal_tasks() -> None:
    listed = {t.metadata.name for t in mteb.get_tasks(domains=["Legal"], languages=["eng"])}
    legal_english = {e.task_name for e in airbench_entries() if "Legal" in e.mteb_domains and e.eval_lang == "eng-Latn"}
    # law_en: QA and the lex_files Long-Doc datasets, in every release
    assert {"AIR-Bench_24.05_qa_law_en", "AIR-Bench_24.04_long-doc_law_en_lex_files_300K-400K"} <= legal_english
    assert legal_english <= listed


def test_every_airbench_task_is_found_by_type_and_language_without_exclude_private() -> None:
    listed = {t.metadata.name for t in mteb.get_tasks(task_types=["Retrieval"])}
    assert {e.task_name for e in airbench_entries()} <= listed


def test_gated_test_split_stays_selectable_and_says_what_it_needs() -> None:
    [task] = mteb.get_tasks(tasks=["AIR-Bench_24.05_qa_law_en"], eval_splits=["test"])
    assert list(task.eval_splits) == ["test"]
    assert "HF_TOKEN" in task.metadata.description and "leaderboard" in task.metadata.description
    dev_only = mteb.get_task("AIR-Bench_24.05_qa_msmarco_en")  # no gated split: nothing to explain
    assert "HF_TOKEN" not in dev_only.metadata.description


# --- statistics --------------------------------------------------------------------------------------

def _qrels_rows(path: Path) -> list[list[str]]:
    rows = list(csv.reader(path.open(encoding="utf-8"), delimiter="\t"))
    return rows[1:] if rows and rows[0][0] == "query-id" else rows


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


@pytest.mark.parametrize(("task_name", "folder"), SHIPPED_COCKTAIL.items())
def test_shipped_cocktail_statistics_match_the_files(task_name: str, folder: str) -> None:
    metadata = mteb.get_task(task_name).metadata
    assert metadata.descriptive_stat_path == SHIPPED_STATS / "Retrieval" / f"{task_name}.json"
    stats = metadata.descriptive_stats
    assert set(stats) == set(metadata.eval_splits)
    root = COCKTAIL_DATA / folder
    queries = {row["_id"]: row["text"] for row in _jsonl(root / "queries.jsonl")}
    # a document as the model reads it: titles dropped (as evaluated), then stripped (as MTEB joins title and text)
    human = [row["text"].strip() for row in _jsonl(root / "corpus" / "human.jsonl")]
    llm = [row["text"].strip() for row in _jsonl(root / "corpus" / f"{LLM_CORPUS}.jsonl")]
    for split in metadata.eval_splits:
        rows = _qrels_rows(root / "qrels" / f"{split}.tsv")
        qids = {qid for qid, _, _ in rows}
        positives = sum(int(score) != 0 for _, _, score in rows)
        subsets = stats[split]["hf_subset_descriptive_stats"]
        for subset, texts, copies in (("human", human, 1), ("llm", llm, 1), ("mixed", human + llm, 2)):
            got = subsets[subset]
            assert got["num_documents"] == len(texts)
            assert got["num_queries"] == len(qids)
            assert got["num_samples"] == len(texts) + len(qids)
            assert got["documents_text_statistics"]["total_text_length"] == sum(map(len, texts))
            assert got["queries_text_statistics"]["total_text_length"] == sum(len(queries[q]) for q in qids)
            assert got["relevant_docs_statistics"]["num_relevant_docs"] == copies * positives
        assert metadata.n_samples[split] == stats[split]["num_samples"]


@pytest.mark.parametrize("task_name", SHIPPED_COCKTAIL)
def test_the_cocktail_papers_sizes_agree_with_the_statistics_computed_from_the_data(task_name: str) -> None:
    task = mteb.get_task(task_name)
    paper, computed = paper_statistics(task.entry), task.metadata.descriptive_stats
    assert set(paper) == set(computed) == set(task.metadata.eval_splits)
    for split, stats in paper.items():
        assert stats["num_samples"] == computed[split]["num_samples"]
        for setting, got in stats["hf_subset_descriptive_stats"].items():
            want = computed[split]["hf_subset_descriptive_stats"][setting]
            assert (got["num_documents"], got["num_queries"]) == (want["num_documents"], want["num_queries"])
            if got["relevant_docs_statistics"] is not None:  # the paper's split: "Avg. D/Q" to one decimal
                assert got["relevant_docs_statistics"]["average_relevant_docs_per_query"] == pytest.approx(
                    want["relevant_docs_statistics"]["average_relevant_docs_per_query"], abs=0.05)


def test_a_hub_only_cocktail_task_has_the_papers_sizes() -> None:
    metadata = mteb.get_task("CocktailFEVER").metadata
    assert not metadata.descriptive_stat_path.exists()
    stats = metadata.descriptive_stats
    # the co*cktail paper (arXiv 2405.16546), Table 1: FEVER's dev and test queries, corpus, Avg. D/Q
    human, mixed = (stats["test"]["hf_subset_descriptive_stats"][s] for s in ("human", "mixed"))
    assert (human["num_documents"], human["num_queries"]) == (114_529, 6_666)
    assert human["relevant_docs_statistics"]["average_relevant_docs_per_query"] == 1.2
    assert mixed["num_documents"] == 2 * 114_529  # both sources' copies, each relevant where the original is
    assert mixed["relevant_docs_statistics"]["num_relevant_docs"] == 2 * human["relevant_docs_statistics"]["num_relevant_docs"]
    assert stats["dev"]["num_queries"] == 4 * 6_666 and stats["dev"]["relevant_docs_statistics"] is None
    assert metadata.n_samples == {"dev": 6 * 114_529 + 4 * 6_666, "test": 6 * 114_529 + 4 * 6_666}


def test_airbench_statistics_are_the_catalogs_sizes() -> None:
    for entry in airbench_entries():
        metadata = mteb.get_task(entry.task_name).metadata
        assert set(metadata.n_samples) == set(metadata.eval_splits)
        for split in metadata.eval_splits:
            stats = metadata.descriptive_stats[split]
            assert stats["num_documents"] == entry.size.corpus
            assert metadata.n_samples[split] == entry.size.corpus + entry.size.queries[split]
            assert stats["relevant_docs_statistics"]["num_relevant_docs"] == entry.labels[split].pos_num


def test_airbench_statistics_from_a_mirror_go_with_it_and_leave_out_a_closed_book_split(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    entry = next(e for e in airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    write_entry(tmp_path, entry, english_documents())
    mirror_file(tmp_path, entry, entry.qrels_location("test")).unlink()  # test qrels not at hand: closed-book
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(tmp_path))

    assert main(["stats", "-t", entry.task_name]) == 0
    written = Path(capsys.readouterr().out.strip().split(": ", 1)[1])
    assert written.is_relative_to(tmp_path / "descriptive_stats") and written.name == f"{entry.task_name}.json"
    assert not (SHIPPED_STATS / "Retrieval" / f"{entry.task_name}.json").exists()  # the package keeps no mirror's
    stats = mteb.get_task(entry.task_name).metadata.descriptive_stats
    assert set(stats) == {"dev"}
    documents = _jsonl(mirror_file(tmp_path, entry, entry.corpus_location()))
    queries_file, qrels_file = (mirror_file(tmp_path, entry, location("dev"))
                                for location in (entry.queries_location, entry.qrels_location))
    queries, qrels = _jsonl(queries_file), _jsonl(qrels_file)
    assert (stats["dev"]["num_documents"], stats["dev"]["num_queries"]) == (len(documents), len(queries))
    assert stats["dev"]["relevant_docs_statistics"]["num_relevant_docs"] == sum(row["relevance"] > 0 for row in qrels)

    # the mirror's dev queries cut to 5: the statistics of the old files are not shown for the new ones
    kept = queries[:5]
    queries_file.write_text("".join(json.dumps(row) + "\n" for row in kept), encoding="utf-8")
    qrels_file.write_text("".join(json.dumps(row) + "\n" for row in qrels if row["qid"] in {q["id"] for q in kept}),
                          encoding="utf-8")
    assert len(queries) > 5
    assert mteb.get_task(entry.task_name).metadata.descriptive_stats["dev"]["num_queries"] != len(queries)
    assert main(["stats", "-t", entry.task_name]) == 0
    assert mteb.get_task(entry.task_name).metadata.descriptive_stats["dev"]["num_queries"] == 5


def _irsc_counts(root: Path, setting: str, query_type: str) -> tuple[int, int]:
    """(documents, queries) of one built IRSC subset, read from the build's files."""
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    documents = sum(len(_jsonl(root / "corpus" / f"{lang}.jsonl")) for lang in manifest["settings"][setting]["corpus"])
    return documents, len(_jsonl(root / setting / query_type / "queries.jsonl"))


def test_irsc_statistics_are_computed_into_the_build_and_follow_a_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the head of the shipped offline sources: real text, enough for the offline build's three tasks
    records = [*islice(wikipedia_sample_records(), 400), *islice(peoples_daily_records(), 400)]
    build_irsc(records, tmp_path, BuildConfig(per_task=6, corpus_limit=20, seed=7))
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(tmp_path))
    _assert_manifest_sizes(tmp_path / "irsc", "IRSCPartRetrieval")  # until computed: the build's sizes

    assert main(["stats", "-t", "IRSCPartRetrieval", "--data-dir", str(tmp_path)]) == 0
    written = Path(capsys.readouterr().out.split(": ", 1)[1].strip())
    assert written.is_relative_to(tmp_path / "irsc" / "descriptive_stats")
    assert [p.name for p in written.parent.iterdir()] == ["IRSCPartRetrieval.json"]  # published whole, no scratch
    metadata = mteb.get_task("IRSCPartRetrieval").metadata
    subsets = metadata.descriptive_stats["test"]["hf_subset_descriptive_stats"]
    assert set(subsets) == {"en", "zh", "mixed"}  # the offline build's subsets of this task
    for setting, got in subsets.items():
        documents, queries = _irsc_counts(tmp_path / "irsc", setting, "part")
        assert (got["num_documents"], got["num_queries"]) == (documents, queries)

    build_irsc(records, tmp_path / "other", BuildConfig(per_task=6, corpus_limit=20, seed=8))
    configure(data_dir=tmp_path / "other")  # as --data-dir does (the stats command configured the first build)
    _assert_manifest_sizes(tmp_path / "other" / "irsc", "IRSCPartRetrieval")  # another build: not computed yet


def _assert_manifest_sizes(root: Path, task_name: str) -> None:
    """The task's statistics are the sizes of the build at ``root``, counted from its files."""
    subsets = mteb.get_task(task_name).metadata.descriptive_stats["test"]["hf_subset_descriptive_stats"]
    assert set(subsets) == {"en", "zh", "mixed"}
    for setting, got in subsets.items():
        documents, queries = _irsc_counts(root, setting, "part")
        assert (got["num_documents"], got["num_queries"]) == (documents, queries)
        assert got["num_samples"] == documents + queries
        assert got["relevant_docs_statistics"]["num_relevant_docs"] == queries  # one paragraph per query
        assert "documents_text_statistics" not in got  # sizes only: nothing was computed


def test_irsc_statistics_without_a_build_are_the_papers_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRBENCH_MTEB_DATA_DIR", raising=False)
    metadata = mteb.get_task("IRSCTitleRetrieval").metadata
    subsets = metadata.descriptive_stats["test"]["hf_subset_descriptive_stats"]
    # IRSC paper (arXiv 2409.15763): 5000 pairs per task and language (section 3.2), 1000 translated (4.2.3)
    assert {s: got["num_queries"] for s, got in subsets.items()} == {"en": 5000, "zh": 5000, "mixed": 10000,
                                                                      "c2e": 1000, "e2c": 1000}
    assert all(got["num_documents"] is None for got in subsets.values())  # the paper gives no corpus size
    assert metadata.n_samples == {"test": 22000}


def test_stats_of_a_task_without_its_data_is_a_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "-t", "IRSCQueryRetrieval", "--data-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "generate irsc" in error
