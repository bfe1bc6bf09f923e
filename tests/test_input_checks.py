"""Issue 14 findings 3, 5, 6 and 9, issue 18 finding 11: qrels, id and text inputs that used to give wrong numbers,
bare tracebacks or unclear errors."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import pytrec_eval

import airbench_mteb.data.beir_folder
import airbench_mteb.data.cocktail_source
import airbench_mteb.generation.cocktail.corpus
import airbench_mteb.tasks.irsc
from airbench_mteb.catalog import airbench_entries
from airbench_mteb.data import DatasetError
from airbench_mteb.data.airbench_source import load_queries_and_qrels, mirror_file
from airbench_mteb.data.beir_folder import read_beir_folder
from airbench_mteb.data.cocktail_source import read_multi_source_split, read_source_corpora
from airbench_mteb.data.qrels import RELEVANCE_MAX, read_qrels_jsonl, read_qrels_tsv
from airbench_mteb.data.retrieval_data import read_corpus_jsonl, read_queries_jsonl
from airbench_mteb.generation.cocktail.corpus import read_input
from tests.conftest import SAMPLE_DATA

NQ_UTD = SAMPLE_DATA / "cocktail" / "nq-utd"
STEMS = {"human": "human", "llm": "llama-2-7b-chat-tmp0.2"}


@pytest.fixture()
def nq_utd(tmp_path: Path) -> Path:
    return Path(shutil.copytree(NQ_UTD, tmp_path / "nq-utd"))


def _drop_header_positive_first(qrels_file: Path) -> None:
    """Rewrite a qrels TSV without its header, a relevant judgment on line 1 (the one an old reader lost)."""
    header, *rows = qrels_file.read_text(encoding="utf-8").splitlines()
    assert header.split("\t")[2] == "score"
    first = next(i for i, row in enumerate(rows) if int(row.split("\t")[2]) > 0)
    rows.insert(0, rows.pop(first))
    qrels_file.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _judgments(qrels: dict[str, dict[str, int]]) -> int:
    return sum(len(docs) for docs in qrels.values())


# --- finding 3: a qrels TSV without a header keeps its first line, in every reader --------------

@pytest.mark.parametrize("module", [airbench_mteb.data.beir_folder, airbench_mteb.tasks.irsc,
                                    airbench_mteb.generation.cocktail.corpus])
def test_every_family_and_generator_reads_qrels_with_the_one_reader(module) -> None:
    assert module.read_qrels_tsv is read_qrels_tsv
    # co*cktail's multi-source folders are BEIR folders: their splits come from the BEIR reader
    assert airbench_mteb.data.cocktail_source.read_beir_split is airbench_mteb.data.beir_folder.read_beir_split


def test_cocktail_reader_keeps_line_one_of_a_headerless_file(nq_utd: Path) -> None:
    with_header = read_multi_source_split(read_source_corpora(nq_utd, STEMS), "test")
    _drop_header_positive_first(nq_utd / "qrels" / "test.tsv")
    without = read_multi_source_split(read_source_corpora(nq_utd, STEMS), "test")
    assert without.qrels == with_header.qrels and without.queries == with_header.queries
    assert _judgments(without.qrels) == 800  # every line of the published file


def test_generate_cocktail_input_keeps_line_one_of_a_headerless_file(nq_utd: Path) -> None:
    with_header = read_input(nq_utd).qrels
    _drop_header_positive_first(nq_utd / "qrels" / "test.tsv")
    assert read_input(nq_utd).qrels == with_header


def test_beir_reader_scores_a_headerless_file_as_the_file_with_header(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": f"document {i}"}) + "\n"
                                                 for i in range(3)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"query {i}"}) + "\n"
                                                  for i in range(2)))
    judgments = "q0\td0\t1\nq1\td1\t1\nq1\td2\t0\n"
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judgments)
    with_header = read_beir_folder(folder, "test")
    (folder / "qrels" / "test.tsv").write_text(judgments)
    without = read_beir_folder(folder, "test")
    assert without.qrels == with_header.qrels == {"q0": {"d0": 1}, "q1": {"d1": 1, "d2": 0}}
    # The symptom: with line 1 lost, q0 had no relevant document and nDCG@1 of a perfect run fell to 0.5.
    run = {"q0": {"d0": 1.0, "d1": 0.5}, "q1": {"d1": 1.0, "d2": 0.5}}
    scores = pytrec_eval.RelevanceEvaluator(without.qrels, {"ndcg_cut.1"}).evaluate(run)
    assert set(scores) == {"q0", "q1"} and all(s["ndcg_cut_1"] == 1.0 for s in scores.values())


# --- finding 5: every relevance is a finite integer pytrec_eval can hold ------------------------

BAD_RELEVANCE = ["nan", "inf", "-inf", "1e300", "4294967298", "2147483648", "1.5", "high"]


@pytest.mark.parametrize("value", BAD_RELEVANCE)
def test_bad_relevance_in_tsv_names_file_and_line(tmp_path: Path, value: str) -> None:
    path = tmp_path / "test.tsv"
    path.write_text(f"query-id\tcorpus-id\tscore\nq0\td0\t1\nq1\td1\t{value}\n")
    with pytest.raises(DatasetError, match=rf"test\.tsv, line 3: relevance score '{value}' is "):
        read_qrels_tsv(path)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e300", "4294967298", "true", "null", '"x"'])
def test_bad_relevance_in_json_lines_names_file_and_line(tmp_path: Path, value: str) -> None:
    path = tmp_path / "qrels.jsonl"
    path.write_text('{"qid": "q0", "docid": "d0", "relevance": 1}\n'
                    f'{{"qid": "q1", "docid": "d1", "relevance": {value}}}\n')
    with pytest.raises(DatasetError, match=r"qrels\.jsonl, line 2: relevance score .* is "):
        read_qrels_jsonl(path)


def test_the_int32_bounds_are_read_exactly(tmp_path: Path) -> None:
    """Both bounds are accepted; the lower one, a negative grade, is read as 0 as trec_eval counts it (issue 43)."""
    path = tmp_path / "test.tsv"
    path.write_text(f"q0\td0\t{RELEVANCE_MAX}\nq0\td1\t{-(2**31)}\n")
    assert read_qrels_tsv(path) == {"q0": {"d0": 2**31 - 1, "d1": 0}}
    path.write_text(f"q0\td0\t1\nq0\td1\t{-(2**31) - 1}\n")
    with pytest.raises(DatasetError, match=rf"test\.tsv, line 2: relevance score '{-(2**31) - 1}' is "):
        read_qrels_tsv(path)


def test_whole_number_floats_are_read_as_grades_and_scored_as_pytrec_eval_scores_them(tmp_path: Path) -> None:
    path = tmp_path / "qrels.jsonl"
    rows = [("q0", "d0", 1.0), ("q0", "d1", "2"), ("q1", "d0", 3e0), ("q1", "d1", "1.0")]
    path.write_text("".join(json.dumps({"qid": q, "docid": d, "relevance": r}) + "\n" for q, d, r in rows))
    qrels = read_qrels_jsonl(path)
    assert qrels == {"q0": {"d0": 1, "d1": 2}, "q1": {"d0": 3, "d1": 1}}
    assert all(type(grade) is int for docs in qrels.values() for grade in docs.values())
    run = {"q0": {"d0": 2.0, "d1": 1.0}, "q1": {"d0": 2.0, "d1": 1.0}}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.1"}).evaluate(run)
    assert scores["q0"]["ndcg_cut_1"] == pytest.approx(0.5)  # gain 1 ranked first where 2 was possible
    assert scores["q1"]["ndcg_cut_1"] == 1.0


# --- finding 6: empty qrels, or none relevant, are errors naming the file ----------------------

def test_empty_airbench_qrels_file_names_the_file(airbench_mirror: Path, tmp_path: Path) -> None:
    mirror = Path(shutil.copytree(airbench_mirror, tmp_path / "mirror"))
    entry = next(e for e in airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    qrels_file = mirror_file(mirror, entry, entry.qrels_location("dev"))
    qrels_file.write_text("")
    with pytest.raises(DatasetError, match=rf"{qrels_file.name}: no judgments"):
        load_queries_and_qrels(entry, "dev", mirror)


@pytest.mark.parametrize("text", ["", "\n\n", "query-id\tcorpus-id\tscore\n", "q0\td0\t0\nq1\td1\t0\n"])
def test_qrels_tsv_without_a_relevant_judgment_names_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "dev.tsv"
    path.write_text(text)
    with pytest.raises(DatasetError, match=r"dev\.tsv: no judgment"):
        read_qrels_tsv(path)


def test_generate_cocktail_refuses_a_split_whose_judgments_name_no_document(nq_utd: Path) -> None:
    (nq_utd / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nSports_q1\tnot-a-doc\t1\n")
    with pytest.raises(DatasetError, match=r"dev\.tsv: no judgment names a document"):
        read_input(nq_utd)


# --- finding 9: text that is not text is a file+line error, not a pyarrow traceback -------------

@pytest.mark.parametrize(("line", "reason"), [
    (b'{"_id": "d1", "text": "half a pair \\ud800 here"}', "lone surrogate"),
    (b'{"_id": "d1", "text": "low half \\uDC00"}', "lone surrogate"),
    (b'{"_id": "d1", "text": "nul \\u0000 escaped"}', "NUL"),
    (b'{"_id": "d1", "text": "raw nul \x00 byte"}', "NUL byte"),
    (b'{"_id": "d1", "text": "caf\xe9"}', "not valid UTF-8"),
    (b'{"_id": "d1", "text": "encoded surrogate \xed\xa0\x80"}', "not valid UTF-8"),
])
def test_corpus_text_that_is_not_text_names_file_and_line(tmp_path: Path, line: bytes, reason: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "d0", "text": "fine \\u00e9 \\ud83d\\ude00"}\n' + line + b"\n")
    with pytest.raises(DatasetError, match=rf"corpus\.jsonl, line 2: .*{reason}"):
        read_corpus_jsonl(path, id_key="_id")


def test_escaped_surrogate_pairs_and_non_ascii_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text('{"id": "q0", "text": "caf\\u00e9 \\ud83d\\ude00"}\n{"id": "q1", "text": "东京"}\n',
                    encoding="utf-8")
    assert read_queries_jsonl(path) == {"q0": "café 😀", "q1": "东京"}


def test_nul_byte_in_qrels_tsv_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_bytes(b"query-id\tcorpus-id\tscore\nq0\td\x000\t1\n")
    with pytest.raises(DatasetError, match=r"test\.tsv, line 2: NUL byte at column 5"):
        read_qrels_tsv(path)


def test_airbench_corpus_with_an_escaped_lone_surrogate_names_file_and_line(airbench_mirror: Path,
                                                                             tmp_path: Path) -> None:
    from airbench_mteb.data.airbench_source import load_corpus

    mirror = Path(shutil.copytree(airbench_mirror, tmp_path / "mirror"))
    entry = next(e for e in airbench_entries() if e.task_name == "AIR-Bench_24.05_qa_news_en")
    corpus_file = mirror_file(mirror, entry, entry.corpus_location())
    lines = corpus_file.read_text(encoding="utf-8").splitlines()
    lines[2] = json.dumps({"id": "doc-2", "text": "a lone half \ud800 of a pair"})  # written escaped: \ud800
    corpus_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"{corpus_file.name}, line 3: malformed text: a lone surrogate"):
        load_corpus(entry, mirror)


# --- issue 18, finding 11: an id is a string or an integer, a text is a string ---------------------

@pytest.mark.parametrize(("row", "named"), [
    ('{"_id": true, "text": "a document"}', "field '_id' must be a string or an integer, got true"),
    ('{"_id": 1.0, "text": "a document"}', "field '_id' must be a string or an integer, got 1.0"),
    ('{"_id": null, "text": "a document"}', "field '_id' must be a string or an integer, got null"),
    ('{"_id": ["d1"], "text": "a document"}', "field '_id' must be a string or an integer, got [\"d1\"]"),
    ('{"_id": "d1", "text": 5}', "field 'text' must be a string, got 5"),
    ('{"_id": "d1", "title": false, "text": "a document"}', "field 'title' must be a string, got false"),
])
def test_corpus_ids_and_texts_of_the_wrong_type_name_file_and_line(tmp_path: Path, row: str, named: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "d0", "text": "fine"}\n' + row + "\n")
    with pytest.raises(DatasetError, match=rf"corpus\.jsonl, line 2: {re.escape(named)}"):
        read_corpus_jsonl(path, id_key="_id")


@pytest.mark.parametrize(("row", "named"), [
    ('{"_id": "q1", "text": 42}', "field 'text' must be a string, got 42"),
    ('{"_id": false, "text": "a query"}', "field '_id' must be a string or an integer, got false"),
])
def test_query_ids_and_texts_of_the_wrong_type_name_file_and_line(tmp_path: Path, row: str, named: str) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(row + "\n")
    with pytest.raises(DatasetError, match=rf"queries\.jsonl, line 1: {re.escape(named)}"):
        read_queries_jsonl(path, id_key="_id")


def test_a_bool_query_id_in_qrels_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "qrels.jsonl"
    path.write_text('{"qid": true, "docid": "d0", "relevance": 1}\n')
    with pytest.raises(DatasetError, match=r"qrels\.jsonl, line 1: field 'qid' must be a string or an integer"):
        read_qrels_jsonl(path)


def test_integer_ids_are_still_read_as_their_digits(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": 7, "text": "seven"}\n{"_id": "08", "text": "eight", "title": null}\n')
    corpus = read_corpus_jsonl(path, id_key="_id")
    assert list(corpus) == ["7", "08"] and corpus["08"].title == ""
