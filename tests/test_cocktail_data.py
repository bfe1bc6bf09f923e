"""Cocktail data: the catalog, the real mirror shipped in the package (tests.conftest.SAMPLE_DATA), settings, hub zips, and clear errors."""

from __future__ import annotations

import hashlib
import shutil
import zipfile
from pathlib import Path

import mteb
import pytest

import airbench_mteb  # noqa: F401  (registers the tasks)
from airbench_mteb.catalog import cocktail_entries
from airbench_mteb.data import DatasetError
from airbench_mteb.data.cocktail_source import (
    MIXED,
    MIXED_ALL_RELEVANT,
    download_zip,
    hub_folder,
    read_multi_source_split,
    read_source_corpora,
    setting_data,
    unpack_verified,
)
from tests.catalog_counts import COCKTAIL_DATASETS
from tests.conftest import SAMPLE_DATA

COCKTAIL = SAMPLE_DATA / "cocktail"
LLM_FILE = "llama-2-7b-chat-tmp0.2"
STEMS = {"human": "human", "llm": LLM_FILE}


def _entry(name: str):
    return next(e for e in cocktail_entries() if e.name == name)


@pytest.fixture()
def nq_utd_copy(tmp_path: Path) -> Path:
    """A private copy of the real NQ-UTD folder that a test may break."""
    return Path(shutil.copytree(COCKTAIL / "nq-utd", tmp_path / "nq-utd"))


def test_catalog_lists_the_papers_datasets_with_their_release_md5s() -> None:
    entries = cocktail_entries()
    assert len(entries) == COCKTAIL_DATASETS
    assert {e.name for e in entries} >= {  # the co*cktail paper's 16 (arXiv 2405.16546, Table 1)
        "msmarco", "dl19", "dl20", "trec-covid", "nfcorpus", "nq", "hotpotqa", "fiqa", "webis-touche2020",
        "cqadupstack", "dbpedia-entity", "scidocs", "fever", "climate-fever", "scifact", "nq-utd"}
    assert _entry("nfcorpus").md5 == "695327760647984c5014d64b2fee8de0"
    assert _entry("nq-utd").md5 == "2e12e66393829cd4be715718f99d2436"
    assert _entry("msmarco").eval_splits == ("dev",)  # Cocktail's MS MARCO test set is its dev split
    for entry in entries:
        task = mteb.get_task(entry.task_name)
        meta = task.metadata
        assert meta.is_filled(), entry.task_name
        assert meta.hf_subsets == ["human", "llm", MIXED, MIXED_ALL_RELEVANT]
        assert meta.main_score == "ndcg_at_1" and meta.dataset["path"] == f"IR-Cocktail/{entry.name}"
        assert entry.paper_split in meta.eval_splits
        # adapted_from must name real MTEB tasks: mteb resolves them when it writes a dataset card
        if entry.adapted_from:
            assert [t.metadata.name for t in mteb.get_tasks(tasks=list(entry.adapted_from))] == list(entry.adapted_from)
    assert _entry("nq-utd").adapted_from == ()  # collected by the Cocktail authors


@pytest.mark.parametrize(("name", "split", "queries", "corpus"), [("nfcorpus", "test", 323, 3633),
                                                                  ("nfcorpus", "dev", 324, 3633),
                                                                  ("nq-utd", "test", 80, 800)])
def test_real_mirror_matches_the_published_sizes(name: str, split: str, queries: int, corpus: int) -> None:
    corpora = read_source_corpora(COCKTAIL / name, STEMS)
    data = read_multi_source_split(corpora, split)
    assert len(data.queries) == queries
    assert {label: len(docs) for label, docs in data.corpora.items()} == {"human": corpus, "llm": corpus}
    if split == "test":
        assert len(data.queries) == _entry(name).test_queries and corpus == _entry(name).corpus_size


def test_settings_share_ids_and_texts_and_titles_are_dropped_by_default() -> None:
    data = read_multi_source_split(read_source_corpora(COCKTAIL / "nfcorpus", STEMS), "test")
    human, llm = setting_data(data, STEMS, "human"), setting_data(data, STEMS, "llm")
    mixed, both = setting_data(data, STEMS, MIXED), setting_data(data, STEMS, MIXED_ALL_RELEVANT)
    assert len(mixed.corpus) == len(human.corpus) + len(llm.corpus) == 2 * 3633
    rows = {name: dict(zip(c.corpus["id"], c.corpus["text"], strict=True)) for name, c in
            (("human", human), ("llm", llm), ("mixed", mixed))}
    assert rows["mixed"] == {**rows["human"], **rows["llm"]}  # same id and text in every setting
    assert "MED-10-human" in rows["human"] and f"MED-10-{LLM_FILE}" in rows["llm"]
    assert mixed.corpus.column_names == ["id", "text"]  # titles dropped
    # Arrow all the way: the texts stay in the memory-mapped files the corpora were built into
    assert mixed.corpus.cache_files and all(Path(f["filename"]).suffix == ".arrow" for f in mixed.corpus.cache_files)
    assert mixed.qrels == both.qrels
    qid, docs = next(iter(data.qrels.items()))
    assert mixed.qrels[qid] == {**human.qrels[qid], **llm.qrels[qid]}
    assert {f"{d}-human" for d in docs} == set(human.qrels[qid])
    titled = read_source_corpora(COCKTAIL / "nfcorpus", STEMS, keep_titles=True).corpora["human"]
    assert titled[titled["id"].index("MED-10")]["title"].startswith("Statin Use and Breast Cancer Survival")
    with pytest.raises(ValueError, match="unknown setting 'both'"):
        setting_data(data, STEMS, "both")


def test_mismatched_id_sets_name_ids_and_files(nq_utd_copy: Path) -> None:
    llm_file = nq_utd_copy / "corpus" / f"{LLM_FILE}.jsonl"
    lines = llm_file.read_text(encoding="utf-8").splitlines(keepends=True)
    llm_file.write_text("".join(lines[:3] + lines[5:]), encoding="utf-8")  # drop the 4th and 5th documents
    with pytest.raises(DatasetError) as error:
        read_source_corpora(nq_utd_copy, STEMS)
    message = str(error.value)
    assert f"{LLM_FILE}.jsonl" in message and "human.jsonl" in message
    assert "2 ids of" in message and "'Autos_d474'" in message and "'Autos_d475'" in message


def test_missing_source_file_names_it_and_the_files_present(nq_utd_copy: Path) -> None:
    (nq_utd_copy / "corpus" / f"{LLM_FILE}.jsonl").unlink()
    with pytest.raises(DatasetError, match=rf"{LLM_FILE}\.jsonl: corpus file of source 'llm' not found "
                                           r"\(corpus files present: human\)"):
        read_source_corpora(nq_utd_copy, STEMS)


def test_missing_split_and_unknown_document_in_qrels(nq_utd_copy: Path) -> None:
    corpora = read_source_corpora(nq_utd_copy, STEMS)
    with pytest.raises(DatasetError, match=r"no qrels for split 'dev' \(splits in this folder: test\)"):
        read_multi_source_split(corpora, "dev")
    qrels = nq_utd_copy / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text(encoding="utf-8") + "Sports_q1\tNo_such_doc\t1\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"test\.tsv: id 'No_such_doc': .*not in the corpus"):
        read_multi_source_split(corpora, "test")


def _zip_folder(folder: Path, target: Path) -> Path:
    """A zip laid out like Cocktail's hub files: the folder itself at the top."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, path.relative_to(folder.parent).as_posix())
    return target


def test_zip_is_md5_checked_and_unpacked_once(tmp_path: Path) -> None:
    archive = _zip_folder(COCKTAIL / "nq-utd", tmp_path / "nq-utd.zip")
    md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    target = tmp_path / "cache" / f"nq-utd-{md5}"
    folder = unpack_verified(archive, md5, target, "nq-utd")
    assert folder == target / "nq-utd"
    assert (folder / "corpus" / f"{LLM_FILE}.jsonl").read_bytes() == \
        (COCKTAIL / "nq-utd" / "corpus" / f"{LLM_FILE}.jsonl").read_bytes()
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no staging folder left behind


def test_corrupted_zip_names_file_and_both_md5s(tmp_path: Path) -> None:
    archive = _zip_folder(COCKTAIL / "nq-utd", tmp_path / "nq-utd.zip")
    good = hashlib.md5(archive.read_bytes()).hexdigest()
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte, as a broken download would have
    archive.write_bytes(bytes(data))
    bad = hashlib.md5(bytes(data)).hexdigest()
    with pytest.raises(DatasetError) as error:
        unpack_verified(archive, good, tmp_path / "cache" / "nq-utd", "nq-utd")
    assert str(archive) in str(error.value) and f"md5 is {bad}, expected {good}" in str(error.value)
    assert not (tmp_path / "cache").exists()


def test_zip_without_the_dataset_folder(tmp_path: Path) -> None:
    archive = _zip_folder(COCKTAIL / "nq-utd" / "qrels", tmp_path / "wrong.zip")
    md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    with pytest.raises(DatasetError, match=r"wrong\.zip: the zip does not hold the folder nq-utd/"):
        unpack_verified(archive, md5, tmp_path / "cache" / "x", "nq-utd")
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.slow
def test_hub_folder_uses_the_unpacked_cache_and_reports_an_unreachable_hub(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRBENCH_MTEB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    entry = _entry("nq-utd")
    with pytest.raises(DatasetError, match=r"could not download nq-utd\.zip from the hub dataset IR-Cocktail/nq-utd"
                                           r".*--data-dir"):
        download_zip(entry)
    # a zip with the published md5 unpacked earlier is used without touching the hub
    unpacked = tmp_path / "cache" / "cocktail" / f"nq-utd-{entry.md5}" / "nq-utd"
    shutil.copytree(COCKTAIL / "nq-utd", unpacked)
    assert hub_folder(entry) == unpacked
