"""BM25 baselines: Lucene's analysis and real word segmenters, Okapi BM25 numbers as Lucene scores them, MTEB
evaluation and index reuse."""

from __future__ import annotations

import json
import math
import os
import platform
from collections import Counter
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest
from datasets import Dataset
from mteb import TaskMetadata
from mteb.abstasks.retrieval import AbsTaskRetrieval

import airbench_mteb  # noqa: F401  (registers the airbench-mteb/bm25 alias)
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25 import BM25, BM25_WORDS, BM25Search, _arrow_batches, c_allocator, pyserini_scores
from airbench_mteb.models.bm25 import index as bm25_index
from airbench_mteb.models.bm25 import workers as bm25_workers
from airbench_mteb.models.bm25.index import BM25Index
from airbench_mteb.models.bm25.workers import analysed_batches
from airbench_mteb.models.lucene_analysis import lucene_terms
from airbench_mteb.models.segmenters import tokenize
from tests.conftest import SAMPLE_DATA


@pytest.mark.parametrize(("text", "language", "words"), [
    ("我来到北京清华大学", "cmn", ["我", "来到", "北京", "清华大学"]),
    ("他来到了网易杭研大厦", "zho-Hans", ["他", "来到", "了", "网易", "杭研", "大厦"]),
    # janome: particles and auxiliaries dropped, verbs in their dictionary form.
    ("東京タワーに行きました", "jpn-Jpan", ["東京", "タワー", "行く"]),
    ("すもももももももものうち", "jpn", ["すもも", "もも", "もも", "うち"]),
    # kiwipiepy morphemes: 나+는, 학교+에, 가+었+습니다 -> the content morphemes.
    ("나는 학교에 갔습니다", "kor-Hang", ["나", "학교", "가"]),
    ("大韓民國의 首都는 서울이다", "kor", ["大韓民國", "首都", "서울"]),
])
def test_cjk_text_is_segmented_into_words(text: str, language: str, words: list[str]) -> None:
    assert tokenize(text, language) == words


def test_latin_words_get_stopwords_and_snowball_stems() -> None:
    assert tokenize("The Runners were RUNNING to the studies", "eng") == ["runner", "were", "run", "studi"]
    assert tokenize("Les chanteuses chantaient", "fra-Latn") == ["chanteux", "chant"]
    assert tokenize("Ｆｕｌｌwidth ｔｅｘｔ", "xyz") == ["fullwidth", "text"]  # NFKC; unknown language: no stemming


def test_mixed_language_text_segments_cjk_runs_and_analyses_the_rest_as_latin() -> None:
    text = "Students of 清华大学 are running in 北京, 我用iPhone拍照"
    assert tokenize(text, ["eng-Latn", "cmn-Hans"]) == [
        "student", "清华大学", "run", "北京", "我用", "iphon", "拍照"]
    # Script decides the segmenter of a run whatever the declared language; Han alone follows the language.
    assert tokenize("ラーメンを食べた", "eng") == ["ラーメン", "食べる"]
    assert tokenize("東京都", "jpn") == ["東京", "都"]
    assert tokenize("東京都", "cmn") == ["東", "京都"]


def _metadata(name: str, eval_langs: list[str] | dict[str, list[str]], splits: list[str]) -> TaskMetadata:
    return TaskMetadata(
        name=name, description="A tiny retrieval task built by the BM25 tests.", reference=None,
        dataset={"path": "NA", "revision": "NA"}, type="Retrieval", category="t2t", modalities=["text"],
        eval_splits=splits, eval_langs=eval_langs, main_score="ndcg_at_10", date=("2024-01-01", "2024-01-02"),
        domains=[], task_subtypes=[], license="cc-by-4.0", annotations_creators="derived", dialect=[],
        sample_creation="found", bibtex_citation="",
    )


ENGLISH_CORPUS = {
    "d1": ("Photosynthesis", "Plants turn sunlight, water and carbon dioxide into sugar and oxygen."),
    "d2": ("Volcanoes", "Magma rises through the crust and erupts as lava and ash."),
    "d3": ("Tides", "The gravity of the moon pulls the oceans and makes the tides."),
    "d4": ("Glaciers", "Compacted snow becomes ice that flows slowly down valleys."),
}
CHINESE_CORPUS = {
    "z1": ("", "清华大学位于北京海淀区，是著名的高等学府。"),
    "z2": ("", "上海是中国最大的城市之一，港口繁忙。"),
    "z3": ("", "熊猫生活在四川的竹林里，以竹子为食。"),
}
QUERIES = {
    "en": ({"q1": "how do plants make sugar from sunlight", "q2": "what makes the ocean tides"},
           {"q1": {"d1": 1}, "q2": {"d3": 1}}),
    "zh": ({"q3": "清华大学在哪里", "q4": "熊猫吃什么"}, {"q3": {"z1": 1}, "q4": {"z3": 1}}),
}


def _split(corpus: dict[str, tuple[str, str]], queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> dict:
    return {
        "corpus": Dataset.from_dict({"id": list(corpus), "title": [t for t, _ in corpus.values()],
                                     "text": [x for _, x in corpus.values()]}),
        "queries": Dataset.from_dict({"id": list(queries), "text": list(queries.values())}),
        "relevant_docs": qrels,
        "top_ranked": None,
    }


class TinyBilingualRetrieval(AbsTaskRetrieval):
    """Two subsets (English, Chinese), two splits sharing each subset's corpus."""

    metadata = _metadata("BM25TestBilingual", {"en": ["eng-Latn"], "zh": ["cmn-Hans"]}, ["dev", "test"])

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        corpora = {"en": ENGLISH_CORPUS, "zh": CHINESE_CORPUS}
        self.dataset = {subset: {split: _split(corpora[subset], *QUERIES[subset]) for split in ("dev", "test")}
                        for subset in ("en", "zh")}
        self.data_loaded = True


class TinyEnglishRetrieval(AbsTaskRetrieval):
    """Another task over the same English corpus, with one query of its own."""

    metadata = _metadata("BM25TestEnglish", ["eng-Latn"], ["test"])

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        self.dataset = {"default": {"test": _split(ENGLISH_CORPUS, {"q9": "lava from a volcano"}, {"q9": {"d2": 1}})}}
        self.data_loaded = True


def test_mteb_evaluate_ranks_the_expected_documents_and_indexes_each_corpus_once(tmp_path: Path) -> None:
    model = mteb.get_model(BM25)
    assert isinstance(model, BM25Search)
    result = mteb.evaluate(model, [TinyBilingualRetrieval(), TinyEnglishRetrieval()], cache=None,
                           prediction_folder=tmp_path, show_progress_bar=False)

    for task in ("BM25TestBilingual", "BM25TestEnglish"):
        predictions = json.loads((tmp_path / f"{task}_predictions.json").read_text())
        rankings = {qid: run for subset in predictions.values() if isinstance(subset, dict)
                    for split in subset.values() if isinstance(split, dict) for qid, run in split.items()}
        expected = {"BM25TestBilingual": {"q1": "d1", "q2": "d3", "q3": "z1", "q4": "z3"},
                    "BM25TestEnglish": {"q9": "d2"}}[task]
        assert {qid: max(run, key=run.get) for qid, run in rankings.items() if qid in expected} == expected
    assert all(r.get_score() == pytest.approx(1.0) for r in result.task_results)
    # Corpora: English (2 splits + another task) and Chinese (2 splits) -> two builds, not five.
    assert model.index_builds == 2


def test_index_is_rebuilt_when_content_or_languages_change() -> None:
    task = TinyEnglishRetrieval()
    task.load_data()
    model = BM25Search()
    corpus = task.dataset["default"]["test"]["corpus"]
    common = {"task_metadata": task.metadata, "hf_split": "test", "hf_subset": "default", "encode_kwargs": {}}
    model.index(corpus, **common)
    model.index(corpus.select(range(len(corpus))), **common)  # same content, new object: reused
    assert model.index_builds == 1
    edited = corpus.map(lambda row: {"text": row["text"] + " edited"})
    model.index(edited, **common)
    assert model.index_builds == 2
    model.index(corpus, **{**common, "task_metadata": _metadata("BM25TestFrench", ["fra-Latn"], ["test"])})
    assert model.index_builds == 3
    model.index(corpus, **common)  # still among the kept indexes
    assert model.index_builds == 3


FIVE_DOCUMENTS = [
    "The cat sat on the mat while another cat slept.",
    "Dogs and cats are popular pets in many homes.",
    "A mat made of straw lies by the door of the house.",
    "Cats chase mice; mice hide from cats and dogs.",
    "Weather reports predict rain over the mountains.",
    # 57 terms: Lucene keeps this length as 56 (its norm byte has 4 significant bits above 24).
    "Rain " + " ".join(f"word{i}" for i in range(55)) + " house",
    "the and of",  # only stopwords: no terms, so neither N nor avgdl counts it
]


def _norm_byte_length(length: int) -> int:
    """A length after Lucene's SmallFloat.intToByte4 and back: 24 + (length - 24) cut to 4 significant bits."""
    if length < 24:
        return length
    excess = length - 24
    drop = max(excess.bit_length() - 4, 0)
    return 24 + (excess >> drop << drop)


def _okapi_bm25(query: list[str], documents: list[list[str]], k1: float, b: float) -> list[float]:
    """Okapi BM25 as Lucene scores it: IDF log(1 + (N - df + 0.5) / (df + 0.5)) and tf / (tf + k1 (1 - b + b
    dl/avgdl)), with dl as the one-byte norm stores it and N, avgdl over the documents that have terms."""
    n = sum(1 for d in documents if d)
    avgdl = sum(len(d) for d in documents) / n
    df = Counter(term for d in documents for term in set(d))
    scores = []
    for doc in documents:
        tf = Counter(doc)
        norm = k1 * (1 - b + b * _norm_byte_length(len(doc)) / avgdl)
        scores.append(sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * tf[t] / (tf[t] + norm)
                          for t in query if tf[t]))
    return scores


@pytest.mark.parametrize(("k1", "b"), [(0.9, 0.4), (1.2, 0.75)])
@pytest.mark.parametrize("query", ["cats on a mat", "dog cat cat", "rain in the house"])
def test_scores_match_lucenes_bm25(query: str, k1: float, b: float) -> None:
    metadata = _metadata("BM25TestFormula", ["eng-Latn"], ["test"])
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(len(FIVE_DOCUMENTS))], "text": FIVE_DOCUMENTS})
    model = BM25Search(k1=k1, b=b)
    model.index(corpus, task_metadata=metadata, hf_split="test", hf_subset="default", encode_kwargs={})
    run = model.search(Dataset.from_dict({"id": ["q"], "text": [query]}), task_metadata=metadata, hf_split="test",
                       hf_subset="default", top_k=10, encode_kwargs={})["q"]

    expected = _okapi_bm25(lucene_terms(query, "eng"), [lucene_terms(d, "eng") for d in FIVE_DOCUMENTS], k1, b)
    assert run.keys() == {f"d{i}" for i, s in enumerate(expected) if s > 0}
    for i, score in enumerate(expected):
        if score > 0:
            assert run[f"d{i}"] == pytest.approx(score, abs=1e-5)
    assert list(run.values()) == sorted(run.values(), reverse=True)


def test_the_index_is_the_same_however_the_corpus_is_cut_into_batches() -> None:
    rng = np.random.default_rng(3)
    documents = [[f"t{w}" for w in rng.zipf(1.5, size=rng.integers(0, 30)) % 40] for _ in range(101)]
    whole = BM25Index.build([documents], k1=0.9, b=0.4)
    for size in (1, 7, 64):
        cut = BM25Index.build([documents[i:i + size] for i in range(0, len(documents), size)], k1=0.9, b=0.4)
        assert cut.vocabulary == whole.vocabulary
        for name in ("terms", "term_blocks", "postings", "norms"):
            assert np.array_equal(getattr(cut, name), getattr(whole, name)), (size, name)
    for term, t in whole.vocabulary.items():  # each term's documents ascending, with Lucene's weights
        postings, _ = whole.postings_of(t)
        assert postings.tolist() == [i for i, d in enumerate(documents) if term in d]
    expected = _okapi_bm25(["t1", "t2", "t7"], documents, 0.9, 0.4)
    assert whole.scores(whole.term_ids(["t1", "t2", "t7"])).tolist() == pytest.approx(expected, abs=1e-5)


def test_scores_of_some_documents_are_the_same_numbers_as_the_scores_of_all() -> None:
    rng = np.random.default_rng(5)
    documents = [[f"t{w}" for w in rng.zipf(1.3, size=rng.integers(0, 40)) % 60] for _ in range(500)]
    index = BM25Index.build([documents[:200], documents[200:]], k1=0.9, b=0.4)
    positions = rng.permutation(500)[:150]  # in no order, some sharing no term with the query
    for query in (["t1", "t2", "t1", "t9"], ["t59"], [], ["t3", "unknown"]):
        terms = index.term_ids(query)
        assert np.array_equal(index.scores_of(terms, positions), index.scores(terms)[positions]), query
        assert index.scores_of(terms, positions).dtype == np.float32


def test_term_counts_above_65535_are_exact_as_in_lucene() -> None:
    # Both lengths keep the same norm byte (65,560), so only the term counts 70,000 and 70,010 order them;
    # short documents keep avgdl small, so the counts move the float32 score.
    documents = [["x"] * 70_000, ["x"] * 70_010] + [["y"]] * 3000
    index = BM25Index.build([documents], k1=1.2, b=0.75)
    scores = index.scores(index.term_ids(["x"]))
    expected = _okapi_bm25(["x"], documents, 1.2, 0.75)
    assert scores[1] > scores[0]
    assert scores[:2].tolist() == pytest.approx(expected[:2], rel=1e-6)


def test_top_k_cut_is_deterministic_on_ties_and_reranking_scores_only_candidates() -> None:
    metadata = _metadata("BM25TestTies", ["eng-Latn"], ["test"])
    texts = ["apple pie", "banana", "apple pie", "apple pie", "cherry", "apple pie"]
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(6)], "text": texts})
    model = BM25Search()
    common = {"task_metadata": metadata, "hf_split": "test", "hf_subset": "default", "encode_kwargs": {}}
    model.index(corpus, **common)
    queries = Dataset.from_dict({"id": ["q"], "text": ["apple"]})
    assert list(model.search(queries, top_k=2, **common)["q"]) == ["d0", "d2"]
    assert list(model.search(queries, top_k=10, **common)["q"]) == ["d0", "d2", "d3", "d5"]
    reranked = model.search(queries, top_k=10, top_ranked={"q": ["d4", "d3"]}, **common)["q"]
    assert list(reranked) == ["d3", "d4"] and reranked["d4"] == 0.0
    # several reranked queries, looked up together, each keeps its own candidates; a searched one among them
    several = Dataset.from_dict({"id": ["q1", "q2", "q3"], "text": ["apple", "cherry", "apple"]})
    runs = model.search(several, top_k=2, top_ranked={"q1": ["d5", "d1", "d3"], "q3": ["d4", "d2", "d2"]}, **common)
    assert {query: list(run) for query, run in runs.items()} == {"q1": ["d3", "d5"], "q2": ["d4"], "q3": ["d2", "d4"]}
    assert model.search(Dataset.from_dict({"id": ["q"], "text": ["zebra"]}), top_k=10, **common) == {"q": {}}
    as_pyserini = BM25Search(pyserini_ties=True)
    as_pyserini.index(corpus, **common)
    tied = as_pyserini.search(queries, top_k=10, **common)["q"]
    assert list(tied) == ["d0", "d2", "d3", "d5"]
    assert [round(tied["d0"] - score, 7) for score in tied.values()] == [0, 1e-6, 2e-6, 3e-6]


def test_bm25_indexes_lucene_bigrams_and_bm25_words_indexes_segmented_words() -> None:
    metadata = _metadata("BM25TestAnalyses", ["cmn-Hans"], ["test"])
    corpus = Dataset.from_dict({"id": ["z1"], "text": [CHINESE_CORPUS["z1"][1]]})
    vocabularies = {}
    for name in (BM25, BM25_WORDS):
        model = mteb.get_model(name)
        model.index(corpus, task_metadata=metadata, hf_split="test", hf_subset="default", encode_kwargs={})
        vocabularies[name] = model._current.index.vocabulary
    assert {"清华", "华大", "大学", "学位"} <= vocabularies[BM25].keys()
    assert "清华大学" in vocabularies[BM25_WORDS] and "清华大学" not in vocabularies[BM25]
    metas = {name: mteb.get_model_meta(name) for name in (BM25, BM25_WORDS)}
    assert metas[BM25].revision != "1"  # results of the word analysis (revision 1) must not mix with Lucene's
    assert {"jpn-Jpan", "ben-Beng", "ind-Latn"} <= set(metas[BM25].languages)


def test_scores_are_reported_as_pyserini_reports_them() -> None:
    # Order by score, equal scores by id; 4 decimals; documents tied after rounding keep that order, each
    # 1e-6 lower than the one before.
    scores = np.array([0.5, 1.23456, 1.234649, 2.0, 0.5], dtype=np.float32)
    reported = pyserini_scores(["c", "b", "a", "d", "aa"], scores)
    assert list(reported) == ["d", "a", "b", "aa", "c"]
    assert reported == {"d": 2.0, "a": pytest.approx(1.2346, abs=1e-7), "b": pytest.approx(1.234599, abs=1e-7),
                        "aa": 0.5, "c": pytest.approx(0.499999, abs=1e-7)}


def _nfcorpus_mixed() -> tuple[Dataset, Dataset]:
    """co*cktail's NFCorpus, human and LLM-written documents side by side (7,266: two batches), and its queries."""
    folder = SAMPLE_DATA / "cocktail" / "nfcorpus"
    rows = [{**json.loads(line), "source": source} for source, name in (("h", "human"), ("l", "llama-2-7b-chat-tmp0.2"))
            for line in (folder / "corpus" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = Dataset.from_dict({"id": [f"{r['source']}-{r['_id']}" for r in rows],
                                "title": [r.get("title", "") for r in rows], "text": [r["text"] for r in rows]})
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return corpus, Dataset.from_dict({"id": [q["_id"] for q in queries], "text": [q["text"] for q in queries]})


NFCORPUS_METADATA = _metadata("BM25TestNFCorpus", ["eng-Latn"], ["test"])
NFCORPUS_COMMON = {"task_metadata": NFCORPUS_METADATA, "hf_split": "test", "hf_subset": "default",
                   "encode_kwargs": {"show_progress_bar": False}}


@pytest.fixture(scope="module")
def nfcorpus_in_process() -> tuple[BM25Search, Dataset, Dataset]:
    corpus, queries = _nfcorpus_mixed()
    model = BM25Search(workers=1)
    model.index(corpus, **NFCORPUS_COMMON)
    return model, corpus, queries


def test_index_built_by_worker_processes_equals_the_one_built_in_process(
        nfcorpus_in_process: tuple[BM25Search, Dataset, Dataset]) -> None:
    alone, corpus, queries = nfcorpus_in_process
    workers = BM25Search(workers=2)
    workers.index(corpus, **NFCORPUS_COMMON)
    one, two = alone._current.index, workers._current.index
    assert one.vocabulary == two.vocabulary
    for name in ("terms", "term_blocks", "postings", "norms"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    runs = [model.search(queries, top_k=100, **NFCORPUS_COMMON) for model in (alone, workers)]
    assert [list(run.items()) for run in runs[0].values()] == [list(run.items()) for run in runs[1].values()]
    assert sum(map(len, runs[0].values())) > 50 * len(queries)  # real rankings, not empty ones


def test_a_worker_and_this_process_analyse_the_batches_in_corpus_order() -> None:
    texts = [f"batch{i // 4096}" for i in range(4 * 4096)]
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(len(texts))], "text": texts})
    batches = list(analysed_batches(_process_and_text, _arrow_batches(corpus), workers=2))
    terms = [term.split(":") for batch in batches for term in batch.vocabulary.to_pylist()]
    assert [text for _, text in terms] == ["batch0", "batch1", "batch2", "batch3"]
    # the first batch by the worker process, the second by this one, which works rather than waits
    assert [process == str(os.getpid()) for process, _ in terms] == [False, True, False, True]


def _process_and_text(text: str) -> list[str]:
    return [f"{os.getpid()}:{text}"]


def test_block_search_equals_scoring_each_query_alone(nfcorpus_in_process: tuple[BM25Search, Dataset, Dataset]) -> None:
    model, _, queries = nfcorpus_in_process
    index = model._current.index
    term_ids = [index.term_ids(model._current.terms(text)) for text in queries["text"]]
    for terms, (positions, scores) in zip(term_ids, index.search(term_ids, 50), strict=True):
        dense = index.scores(terms)  # one query, scored term by term over every document
        candidates = np.flatnonzero(dense > 0)
        order = np.lexsort((candidates, -dense[candidates]))[:50]
        assert positions.tolist() == candidates[order].tolist()
        assert scores.tolist() == dense[candidates[order]].tolist()


def test_blocks_of_queries_searched_by_a_worker_and_this_process_are_those_searched_alone(
        nfcorpus_in_process: tuple[BM25Search, Dataset, Dataset], monkeypatch: pytest.MonkeyPatch) -> None:
    model, _, queries = nfcorpus_in_process
    index = model._current.index
    term_ids = [index.term_ids(model._current.terms(text)) for text in queries["text"]]
    monkeypatch.setattr(bm25_index, "_BLOCK_ENTRIES", 5_000)  # many blocks, each query alone or a few together
    blocks = list(index.query_blocks(term_ids))
    assert len(blocks) > 20 and any(len(block.queries) > 1 for block in blocks)
    used = []
    monkeypatch.setattr(bm25_workers, "_search_block",
                        lambda shared, block: used.append(os.getpid()) or bm25_index.BM25Index.search_block(
                            shared[0], block, shared[1]))
    in_workers = list(bm25_workers.searched(index, term_ids, 100, workers=2))
    assert len(used) == len(blocks) // 2  # every second block scored in this process, the others by the worker
    alone = list(index.search(term_ids, 100))
    assert len(in_workers) == len(alone) == len(term_ids)
    for (positions, scores), (positions_alone, scores_alone) in zip(in_workers, alone, strict=True):
        assert positions.tolist() == positions_alone.tolist() and scores.tolist() == scores_alone.tolist()


def _fill_and_free_128_mb() -> None:
    """About what a query block does: 43 arrays of 3 MB allocated, filled and freed (numpy asks for huge pages
    only from 4 MB on)."""
    arrays = [np.ones(3 << 17) for _ in range(43)]
    del arrays


def _faults_of_the_last_round(_: None, rounds: int) -> int:
    """Page faults of the last of ``rounds`` calls of :func:`_fill_and_free_128_mb`."""
    import resource

    before = 0
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        _fill_and_free_128_mb()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


_GLIBC_WORKERS = pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not bm25_workers.can_fork(),
                                    reason="glibc's allocator, in forked workers")


@_GLIBC_WORKERS
def test_worker_processes_reuse_the_memory_they_free() -> None:
    # glibc's defaults return such arrays to the system when freed, and each round faults in ~33,000 pages again.
    (faults,) = bm25_workers.in_order(_faults_of_the_last_round, None, [3], workers=2)
    assert faults < 2_000


def _resident_mb_freed_and_released(_: None, __: None) -> tuple[float, float]:
    """This process's resident memory after 128 MB of arrays are freed, and after release_freed_memory()."""
    def resident_mb() -> float:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    _fill_and_free_128_mb()
    freed = resident_mb()
    c_allocator.release_freed_memory()
    return freed, resident_mb()


@_GLIBC_WORKERS
def test_memory_a_process_keeps_is_given_back_when_asked() -> None:
    # in a worker, which keeps what it frees (the test above); the index build asks once it has freed its batches
    ((freed, released),) = bm25_workers.in_order(_resident_mb_freed_and_released, None, [None], workers=2)
    assert freed - released > 100


def test_a_document_that_cannot_be_analysed_in_a_worker_is_named_in_one_line() -> None:
    texts = ["plain words"] * 5000
    texts[4500] = None
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(5000)], "text": texts})
    with pytest.raises(DatasetError, match=r"^id 'd4500': BM25: the document has no text$"):
        BM25Search(workers=2).index(corpus, **NFCORPUS_COMMON)


def test_a_selected_or_filtered_corpus_is_indexed_as_its_rows_not_the_table_under_it() -> None:
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(len(FIVE_DOCUMENTS))], "text": FIVE_DOCUMENTS})
    common = {"task_metadata": _metadata("BM25TestSelect", ["eng-Latn"], ["test"]), "hf_split": "test",
              "hf_subset": "default", "encode_kwargs": {}}
    queries = Dataset.from_dict({"id": ["q"], "text": ["cats on a mat"]})
    for subset in (corpus.select([3, 0]), corpus.filter(lambda row: row["id"] in {"d0", "d3"})):
        model, copy = BM25Search(), BM25Search()
        model.index(subset, **common)
        copy.index(Dataset.from_dict(subset.to_dict()), **common)  # the same rows in a table of their own
        assert model._current.doc_ids.to_pylist() == subset["id"]
        assert model.search(queries, top_k=10, **common) == copy.search(queries, top_k=10, **common)
