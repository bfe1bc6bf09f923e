"""Bad inputs of re-ranking (`run --previous-results P --rerank-top-k K`): first-stage files, depths, reranker kinds.

The shared data: an AIR-Bench mirror of two tasks (NEWS_EN's test qrels removed: closed-book) and BM25's
prediction files of both, as `run --prediction-folder` leaves them. Each case re-ranks a copy, edited.
Correct results are checked against the first stage and the mirror's files read here, scored with pytrec_eval.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytrec_eval

from tests.bad_inputs.framework import Case, Workspace, shared_data

NEWS_EN = "AIR-Bench_24.05_qa_news_en"
NEWS_ZH = "AIR-Bench_24.05_qa_news_zh"
BM25 = "airbench-mteb/bm25"
MINILM = "airbench-mteb/all-MiniLM-L6-v2"
E5 = "airbench-mteb/multilingual-e5-small"
LLM = "airbench-mteb/smollm2-yes-no-reranker"
Edit = Callable[[dict], Any]


@shared_data("reranking_first_stage")
def _first_stage(folder: Path) -> Path:
    """``folder/mirror`` (NEWS_EN, its test qrels removed, and NEWS_ZH) and ``folder/bm25`` (BM25's predictions)."""
    import mteb

    from airbench_mteb.data.airbench_source import mirror_file
    from airbench_mteb.settings import settings_applied
    from tests.airbench_mirror import chinese_documents, english_documents, write_entry
    from tests.closed_book_run import entry

    write_entry(folder / "mirror", entry(NEWS_EN), english_documents())
    write_entry(folder / "mirror", entry(NEWS_ZH), chinese_documents())
    mirror_file(folder / "mirror", entry(NEWS_EN), entry(NEWS_EN).qrels_location("test")).unlink()
    with settings_applied(data_dir=folder / "mirror"):
        mteb.evaluate(mteb.get_model(BM25), mteb.get_tasks(tasks=[NEWS_EN, NEWS_ZH], eval_splits=["dev", "test"]),
                      cache=None, prediction_folder=folder / "bm25", show_progress_bar=False)
    return folder


def _mirror(ws: Workspace) -> Path:
    return ws.shared("reranking_first_stage") / "mirror"


def _shared_file(ws: Workspace, task: str = NEWS_EN) -> Path:
    return ws.shared("reranking_first_stage") / "bm25" / f"{task}_predictions.json"


def _content(ws: Workspace, task: str = NEWS_EN) -> dict:
    return json.loads(_shared_file(ws, task).read_text())


def _shared(ws: Workspace) -> Path:
    return _shared_file(ws).parent


def _edited(edit: Edit, *, task: str = NEWS_EN, saved_as: str = NEWS_EN) -> Callable[[Workspace], Path]:
    """A first-stage folder holding ``task``'s file, changed by ``edit``, saved under ``saved_as``'s name."""
    def folder(ws: Workspace) -> Path:
        data = _content(ws, task)
        edit(data)
        (ws.tmp / "P").mkdir(exist_ok=True)
        (ws.tmp / "P" / f"{saved_as}_predictions.json").write_text(json.dumps(data))
        return ws.tmp / "P"
    return folder


def _written(text: str | bytes) -> Callable[[Workspace], Path]:
    """A first-stage folder whose NEWS_EN file holds exactly ``text``."""
    def folder(ws: Workspace) -> Path:
        (ws.tmp / "P").mkdir(exist_ok=True)
        path = ws.tmp / "P" / f"{NEWS_EN}_predictions.json"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return ws.tmp / "P"
    return folder


def _truncated(ws: Workspace) -> Path:
    text = _shared_file(ws).read_text()
    return _written(text[:len(text) // 2])(ws)


def _the_file(ws: Workspace) -> str:
    return str(ws.tmp / "P" / f"{NEWS_EN}_predictions.json")


def _changed_mirror(ws: Workspace) -> Path:
    """A copy of the mirror whose NEWS_EN corpus changed in one word: the first stage is of other data now."""
    from airbench_mteb.data.airbench_source import mirror_file
    from tests.closed_book_run import entry

    copy = ws.tmp / "changed_mirror"
    shutil.copytree(_mirror(ws), copy)
    corpus = mirror_file(copy, entry(NEWS_EN), entry(NEWS_EN).corpus_location())
    corpus.write_text(corpus.read_text(encoding="utf-8").replace(" the ", " a ", 1), encoding="utf-8")
    return copy


def _rerank(previous: Callable[[Workspace], Path], *options: str, reranker: str = BM25, task: str = NEWS_EN,
            split: str = "dev", mirror: Callable[[Workspace], Path] = _mirror) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["run", "-m", reranker, "--previous-results", str(previous(ws)), "-t", task, "--eval-splits", split,
                "--data-dir", str(mirror(ws)), "--prediction-folder", str(ws.tmp / "out"),
                "--output-folder", str(ws.tmp / "R"), *options]
    return argv


def _dev(change: Callable[[dict], Any]) -> Edit:
    """An edit of the dev run ({qid: {docid: score}}) of the default subset."""
    return lambda data: change(data["default"]["dev"])


def _score(value: Any) -> Edit:
    """Query q-dev-1 ranks doc-0 (a corpus document) with ``value`` as its score."""
    return _dev(lambda run: run["q-dev-1"].__setitem__("doc-0", value))


def _rename_best(run: dict) -> None:
    docs = run["q-dev-0"]
    docs["doc-elsewhere"] = docs.pop(max(docs, key=docs.get))


def _two_models(ws: Workspace) -> Path:
    folder = _edited(lambda data: None)(ws)
    other = _content(ws, NEWS_ZH)
    other["mteb_model_meta"]["model_name"] = "someone/else"
    (folder / f"{NEWS_ZH}_predictions.json").write_text(json.dumps(other))
    return folder


def _other_task_only(ws: Workspace) -> Path:
    (ws.tmp / "P").mkdir()
    shutil.copy(_shared_file(ws, NEWS_ZH), ws.tmp / "P")
    return ws.tmp / "P"


def _empty_folder(ws: Workspace) -> Path:
    (ws.tmp / "P").mkdir()
    return ws.tmp / "P"


def _library_top_k(top_k: Any) -> Callable[[Workspace], Any]:
    def call(ws: Workspace) -> Any:
        import mteb

        from airbench_mteb.names import reranked_model_meta

        return reranked_model_meta(mteb.get_model_meta(BM25), _shared(ws), top_k)
    return call


# -- independent computations for the correct results ---------------------------------------------------------

def _top(run: dict, k: int) -> dict[str, list[str]]:
    """Each query's best ``k`` documents: by score, then by id, descending (trec_eval's order)."""
    return {q: [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k]]
            for q, docs in run.items()}


def _reranked(ws: Workspace, split: str = "dev") -> dict[str, dict[str, float]]:
    return json.loads((ws.tmp / "out" / f"{NEWS_EN}_predictions.json").read_text())["default"][split]


def _scores(ws: Workspace, split: str = "dev") -> dict[str, Any]:
    (path,) = (ws.tmp / "R").glob(f"results/*/*/{NEWS_EN}.json")
    return json.loads(path.read_text())["scores"][split][0]


def _mirror_rows(ws: Workspace, location: tuple[str, str]) -> list[dict]:
    from airbench_mteb.data.airbench_source import mirror_file
    from tests.closed_book_run import entry, read_jsonl

    return read_jsonl(mirror_file(_mirror(ws), entry(NEWS_EN), location))


def _assert_ndcg_from_saved_rankings(ws: Workspace) -> None:
    """The reported nDCG@10 is pytrec_eval's over the saved re-ranked run and the mirror's qrels file."""
    from tests.closed_book_run import entry

    qrels: dict[str, dict[str, int]] = {}
    for row in _mirror_rows(ws, entry(NEWS_EN).qrels_location("dev")):
        qrels.setdefault(row["qid"], {})[row["docid"]] = int(row["relevance"])
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(_reranked(ws))
    expected = sum(per_query.get(q, {"ndcg_cut_10": 0.0})["ndcg_cut_10"] for q in qrels) / len(qrels)
    assert abs(_scores(ws)["ndcg_at_10"] - expected) < 1e-5, (_scores(ws)["ndcg_at_10"], expected)


def _bm25_keeps_the_top(k: int, first_stage: Callable[[Workspace], dict] = lambda ws: _content(ws)["default"]["dev"]
                        ) -> Callable[[Workspace, Any], None]:
    """BM25 re-scoring BM25's candidates: each query keeps the first stage's top ``k``, BM25 scores unchanged."""
    def check(ws: Workspace, _: Any) -> None:
        original = _content(ws)["default"]["dev"]
        reranked = _reranked(ws)
        candidates = _top(first_stage(ws), k)
        assert set(reranked) == set(candidates), "every query of the split, and only those"
        for qid, ids in candidates.items():
            assert sorted(reranked[qid]) == sorted(ids), qid
            assert all(abs(reranked[qid][d] - original[qid][d]) < 1e-4 for d in ids if d in original[qid]), qid
        _assert_ndcg_from_saved_rankings(ws)
    return check


def _edited_dev(edit: Edit) -> Callable[[Workspace], dict]:
    def run(ws: Workspace) -> dict:
        data = _content(ws)
        edit(data)
        return data["default"]["dev"]
    return run


def _minilm_matches_an_independent_rerank(ws: Workspace, _: Any) -> None:
    from tests.closed_book_run import entry
    from tests.test_reranking import _minilm_encode
    from tests.test_reranking import _rerank as independent_rerank

    queries = {row["id"]: row["text"] for row in _mirror_rows(ws, entry(NEWS_EN).queries_location("dev"))}
    documents = {row["id"]: row["text"] for row in _mirror_rows(ws, entry(NEWS_EN).corpus_location())}
    expected = independent_rerank(_content(ws)["default"]["dev"], 5, queries, documents, _minilm_encode)
    reranked = _reranked(ws)
    assert set(reranked) == set(expected)
    for qid, docs in expected.items():
        assert set(reranked[qid]) == set(docs), qid
        assert all(abs(reranked[qid][d] - score) < 1e-4 for d, score in docs.items()), qid
    _assert_ndcg_from_saved_rankings(ws)


def _closed_book_keeps_10(ws: Workspace, _: Any) -> None:
    reranked = _reranked(ws, "test")
    first = _top(_content(ws)["default"]["test"], 10)
    assert {q: sorted(d) for q, d in reranked.items()} == {q: sorted(d) for q, d in first.items()}
    assert max(len(d) for d in reranked.values()) == 10
    assert _scores(ws, "test")["closed_book"]["top_k"] == 10


def _revision(ws: Workspace, task: str = NEWS_EN) -> str:
    return _content(ws, task)["dataset_revision"]


def _first_stage_again_with_a_prediction_folder(ws: Workspace) -> tuple[int, int, Path]:
    """The README's order: a first stage, then the same with --prediction-folder (its results now cached)."""
    from airbench_mteb.cli import main

    first = ["run", "-m", BM25, "-t", NEWS_EN, "--eval-splits", "dev", "--data-dir", str(_mirror(ws)),
             "--output-folder", str(ws.tmp / "R")]
    return main(first), main([*first, "--prediction-folder", str(ws.tmp / "P")]), ws.tmp / "P"


def _rankings_written(ws: Workspace, value: tuple[int, int, Path]) -> None:
    from tests.closed_book_run import mirror_query_ids

    first, again, folder = value
    assert (first, again) == (0, 0), (first, again)
    path = folder / f"{NEWS_EN}_predictions.json"
    assert path.is_file(), f"exit 0 without {path}"
    saved = json.loads(path.read_text())["default"]["dev"]
    assert set(saved) == set(mirror_query_ids(_mirror(ws), NEWS_EN, "dev")), sorted(saved)


CASES = [
    # issue 36: the second run exited 0 with cached scores and no rankings file, and re-ranking then failed
    Case("rerank-first-stage-cached-then-prediction-folder", call=_first_stage_again_with_a_prediction_folder,
         check=_rankings_written),
    # a query of the split the first stage did not rank: one line naming the file, split and query, every kind
    Case("rerank-missing-query-bm25", argv=_rerank(_edited(_dev(lambda run: run.pop("q-dev-3")))),
         error="no ranking for 1 of the 12 queries ('q-dev-3')"),
    Case("rerank-missing-query-minilm", argv=_rerank(_edited(_dev(lambda run: run.pop("q-dev-3"))), reranker=MINILM),
         error="default/dev: the first stage has no ranking for 1 of the 12 queries ('q-dev-3')"),
    Case("rerank-missing-query-e5", argv=_rerank(_edited(_dev(lambda run: run.pop("q-dev-3"))), reranker=E5),
         error="'q-dev-3'"),
    Case("rerank-missing-query-llm-yes-no", argv=_rerank(_edited(_dev(lambda run: run.pop("q-dev-3"))), reranker=LLM),
         error="'q-dev-3'"),
    Case("rerank-missing-query-closed-book-test",
         argv=_rerank(_edited(lambda data: data["default"]["test"].pop("q-test-2")), split="test"),
         error="default/test: the first stage has no ranking for 1 of the 12 queries ('q-test-2')"),
    Case("rerank-missing-query-names-the-file", argv=_rerank(_edited(_dev(lambda run: run.pop("q-dev-3")))),
         error=_the_file),
    # a candidate that is not a document of the corpus, every kind
    Case("rerank-unknown-document-bm25", argv=_rerank(_edited(_dev(_rename_best))), error="('doc-elsewhere')"),
    Case("rerank-unknown-document-minilm", argv=_rerank(_edited(_dev(_rename_best)), reranker=MINILM),
         error="('doc-elsewhere')"),
    Case("rerank-unknown-document-e5", argv=_rerank(_edited(_dev(_rename_best)), reranker=E5), error="'doc-elsewhere'"),
    Case("rerank-unknown-document-llm-yes-no", argv=_rerank(_edited(_dev(_rename_best)), reranker=LLM),
         error="'doc-elsewhere'"),
    # scores that are not finite numbers
    Case("rerank-string-score", argv=_rerank(_edited(_score("high"))), error="document 'doc-0' has score \"high\""),
    Case("rerank-numeric-string-score", argv=_rerank(_edited(_score("0.5"))), error="document 'doc-0' has score \"0.5\""),
    Case("rerank-nan-score", argv=_rerank(_edited(_score(float("nan")))), error="document 'doc-0' has score NaN"),
    Case("rerank-infinite-score", argv=_rerank(_edited(_score(float("inf")))), error="document 'doc-0' has score Infinity"),
    Case("rerank-minus-infinite-score", argv=_rerank(_edited(_score(float("-inf")))),
         error="document 'doc-0' has score -Infinity"),
    Case("rerank-null-score", argv=_rerank(_edited(_score(None))), error="document 'doc-0' has score null"),
    Case("rerank-bool-score", argv=_rerank(_edited(_score(True))), error="document 'doc-0' has score true"),
    Case("rerank-list-score", argv=_rerank(_edited(_score([1.0]))), error="document 'doc-0' has score [1.0]"),
    Case("rerank-object-score", argv=_rerank(_edited(_score({"score": 1.0}))), error="document 'doc-0'"),
    # the shape of the file
    Case("rerank-query-not-an-object", argv=_rerank(_edited(_dev(lambda run: run.__setitem__("q-dev-2", ["doc-0"])))),
         error="id 'q-dev-2'"),
    Case("rerank-split-missing", argv=_rerank(_edited(lambda data: data["default"].pop("dev"))), error="split 'dev'"),
    Case("rerank-split-not-an-object", argv=_rerank(_edited(lambda data: data["default"].__setitem__("dev", []))),
         error="split 'dev'"),
    Case("rerank-subset-not-an-object", argv=_rerank(_edited(lambda data: data.__setitem__("default", "dev"))),
         error="subset 'default'"),
    Case("rerank-subset-renamed", argv=_rerank(_edited(lambda data: data.__setitem__("en", data.pop("default")))),
         error="subset 'default'"),
    Case("rerank-not-an-mteb-file", argv=_rerank(_edited(lambda data: data.pop("mteb_model_meta"))),
         error="mteb_model_meta"),
    Case("rerank-json-array", argv=_rerank(_written("[]")), error="mteb_model_meta"),
    Case("rerank-empty-file", argv=_rerank(_written("")), error=_the_file),
    Case("rerank-truncated-json", argv=_rerank(_truncated), error=_the_file),
    Case("rerank-not-utf8", argv=_rerank(_written(b"\xff\xfe{}")), error=_the_file),
    Case("rerank-empty-folder", argv=_rerank(_empty_folder), error=lambda ws: str(ws.tmp / "P")),
    Case("rerank-missing-folder", argv=_rerank(lambda ws: ws.tmp / "nowhere"), error="nowhere"),
    Case("rerank-two-models-in-one-folder", argv=_rerank(_two_models), error="someone/else"),
    Case("rerank-task-not-in-the-folder", argv=_rerank(_other_task_only), error=f"{NEWS_EN}_predictions.json"),
    # rankings of other data, or of unknown data
    Case("rerank-first-stage-of-other-data", argv=_rerank(_shared, mirror=_changed_mirror), error=_revision),
    Case("rerank-other-task-saved-under-this-name", argv=_rerank(_edited(lambda data: None, saved_as=NEWS_ZH),
                                                                 task=NEWS_ZH), error=_revision),
    Case("rerank-first-stage-without-fingerprint", argv=_rerank(_edited(lambda data: data.pop("dataset_revision"))),
         error="rerun the model with --prediction-folder"),
    Case("rerank-fingerprint-not-a-string", argv=_rerank(_edited(lambda data: data.__setitem__("dataset_revision", 5))),
         error="dataset_revision"),
    # the depth
    Case("rerank-top-k-zero", argv=_rerank(_shared, "--rerank-top-k", "0"), error="--rerank-top-k"),
    Case("rerank-top-k-negative", argv=_rerank(_shared, "--rerank-top-k", "-1"), error="--rerank-top-k"),
    Case("rerank-top-k-not-a-number", argv=_rerank(_shared, "--rerank-top-k", "ten"), error="--rerank-top-k"),
    Case("rerank-library-top-k-zero", call=_library_top_k(0), error="--rerank-top-k"),
    Case("rerank-library-top-k-bool", call=_library_top_k(True), error="--rerank-top-k"),
    Case("rerank-library-top-k-float", call=_library_top_k(2.5), error="--rerank-top-k"),
    # correct results
    Case("rerank-bm25-top-5", argv=_rerank(_shared, "--rerank-top-k", "5"), check=_bm25_keeps_the_top(5)),
    Case("rerank-top-k-beyond-the-candidates", argv=_rerank(_shared, "--rerank-top-k", "1000000000"),
         check=_bm25_keeps_the_top(1000)),
    Case("rerank-minilm-top-5", argv=_rerank(_shared, "--rerank-top-k", "5", reranker=MINILM),
         check=_minilm_matches_an_independent_rerank, slow=True),
    Case("rerank-closed-book-records-the-depth-kept", argv=_rerank(_shared, "--rerank-top-k", "10", split="test"),
         check=_closed_book_keeps_10),
    Case("rerank-query-the-first-stage-found-nothing-for",
         argv=_rerank(_edited(_dev(lambda run: run.__setitem__("q-dev-4", {}))), "--rerank-top-k", "5"),
         check=_bm25_keeps_the_top(5, _edited_dev(_dev(lambda run: run.__setitem__("q-dev-4", {}))))),
    Case("rerank-integer-scores",
         argv=_rerank(_edited(_dev(lambda run: run.__setitem__("q-dev-5", {d: 1 for d in run["q-dev-5"]}))),
                      "--rerank-top-k", "3"),
         check=_bm25_keeps_the_top(3, _edited_dev(_dev(lambda run: run.__setitem__(
             "q-dev-5", {d: 1 for d in run["q-dev-5"]}))))),
]
