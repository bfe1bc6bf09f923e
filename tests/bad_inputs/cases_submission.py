"""Bad inputs of `package-submission` and `score-submission` (one validator for both), and their correct results.

The shared data: a small AIR-Bench mirror (NEWS: dev and a closed-book test, its test qrels removed; ARXIV:
dev only), BM25's prediction files over it, and the package made from them. Cases change copies only.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from tests.bad_inputs.framework import Case, Workspace, shared_data

NEWS = "AIR-Bench_24.05_qa_news_en"  # dev + closed-book test
ARXIV = "AIR-Bench_24.05_long-doc_arxiv_en_llama2"  # dev only
FINANCE_2404 = "AIR-Bench_24.04_qa_finance_zh"  # test only, another version
NEWS_DEV = "qa/news/en_default_dev.json"
NEWS_TEST = "qa/news/en_default_test.json"
ARXIV_DEV = "long-doc/arxiv/en_llama2_dev.json"
PLUGIN_FIELDS = ("dataset_revision", "top_k")


@dataclass
class Shared:
    mirror: Path
    predictions: Path
    package: Path


@shared_data("submission_bm25")
def _build(folder: Path) -> Shared:
    from airbench_mteb.settings import settings_applied
    from airbench_mteb.submission import package_submission
    from tests.airbench_mirror import chinese_documents, english_documents, write_entry
    from tests.closed_book_run import entry, run_bm25

    mirror = folder / "mirror"
    for name in (NEWS, ARXIV):
        write_entry(mirror, entry(name), english_documents())
    write_entry(mirror, entry(FINANCE_2404), chinese_documents())
    news_test_qrels = _mirror_path(mirror, NEWS, "qrels", "test")
    news_test_qrels.unlink()  # closed-book, as for a user without access to the test qrels
    run = run_bm25(mirror, folder / "bm25", [NEWS, ARXIV], ["dev", "test"])
    with settings_applied(data_dir=mirror):
        package = package_submission(run.predictions, folder / "package")
    return Shared(mirror=mirror, predictions=run.predictions, package=package)


def _mirror_path(mirror: Path, task: str, kind: str, split: str = "") -> Path:
    from airbench_mteb.data.airbench_source import mirror_file
    from tests.closed_book_run import entry

    e = entry(task)
    where = {"corpus": e.corpus_location, "qrels": lambda: e.qrels_location(split),
             "queries": lambda: e.queries_location(split)}[kind]()
    return mirror_file(mirror, e, where)


def _shared(ws: Workspace) -> Shared:
    return ws.shared("submission_bm25")


def _predicted(ws: Workspace, task: str = NEWS, split: str = "dev") -> dict[str, dict[str, float]]:
    return json.loads((_shared(ws).predictions / f"{task}_predictions.json").read_text())["default"][split]


def _first(ws: Workspace) -> tuple[str, str]:
    """The first query (by id) of NEWS dev and its best document in the shared predictions."""
    run = _predicted(ws)
    qid = sorted(run)[0]
    return qid, next(iter(run[qid]))


# --- inputs: copies of the shared predictions or package, changed -----------------------------------------------

Edit = Callable[[Workspace, dict], None]


def _predictions(ws: Workspace, edit: Edit | None = None, task: str = NEWS) -> Path:
    folder = ws.tmp / "predictions"
    if not folder.exists():
        shutil.copytree(_shared(ws).predictions, folder)
    if edit is not None:
        path = folder / f"{task}_predictions.json"
        data = json.loads(path.read_text())
        edit(ws, data)
        path.write_text(json.dumps(data))
    return folder


def _package(ws: Workspace, edit: Callable[[Workspace, str, dict], None] | None = None,
             extra: tuple[tuple[str, bytes], ...] = ()) -> Path:
    """A copy of the shared package with ``edit(ws, member, data)`` applied to each member, ``extra`` appended."""
    target = ws.tmp / "bm25_NoReranker.zip"
    with zipfile.ZipFile(_shared(ws).package) as source, zipfile.ZipFile(target, "w") as out:
        for name in source.namelist():
            data = json.loads(source.read(name))
            if edit is not None:
                edit(ws, name, data)
            out.writestr(name, json.dumps(data))
        for name, raw in extra:
            out.writestr(name, raw)
    return target


def _news_dev(change: Callable[[Workspace, dict], None]) -> Callable[[Workspace, str, dict], None]:
    def edit(ws: Workspace, name: str, data: dict) -> None:
        if name == NEWS_DEV:
            change(ws, data)
    return edit


def _set_score(value: Any) -> Edit:
    def edit(ws: Workspace, data: dict) -> None:
        qid, doc = _first(ws)
        data["default"]["dev"][qid][doc] = value
    return edit


def _set_member_score(value: Any) -> Callable[[Workspace, str, dict], None]:
    def change(ws: Workspace, data: dict) -> None:
        qid, doc = _first(ws)
        data["search_results"][qid][doc] = value
    return _news_dev(change)


def _pack(edit: Edit | None = None, *options: str, task: str = NEWS) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        folder = _predictions(ws, edit, task)
        return ["package-submission", "--predictions", str(folder), "--out", str(ws.tmp / "out"),
                "--data-dir", str(_shared(ws).mirror), *options]
    return argv


def _score(package: Callable[[Workspace], Path] = lambda ws: _shared(ws).package,
           *options: str) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        return ["score-submission", str(package(ws)), "--data-dir", str(_shared(ws).mirror), *options]
    return argv


def _score_edited(change: Callable[[Workspace, dict], None], *options: str) -> Callable[[Workspace], list[str]]:
    return _score(lambda ws: _package(ws, _news_dev(change)), *options)


def _score_error(shown: str) -> Callable[[Workspace], str]:
    def error(ws: Workspace) -> str:
        qid, doc = _first(ws)
        return f"{NEWS_DEV}: id {qid!r}: document {doc!r} has score {shown}"
    return error


def _pack_score_error(shown: str) -> Callable[[Workspace], str]:
    def error(ws: Workspace) -> str:
        qid, doc = _first(ws)
        return f"{NEWS}_predictions.json: id {qid!r}: document {doc!r} has score {shown}"
    return error


def _with_mirror(ws: Workspace, call: Callable[[], Any]) -> Any:
    from airbench_mteb.settings import settings_applied

    with settings_applied(data_dir=_shared(ws).mirror):
        return call()


# --- structural edits --------------------------------------------------------------------------------------------

def _drop_query(ws: Workspace, data: dict) -> None:
    data["default"]["dev"].pop(_first(ws)[0])


def _duplicate_doc(ws: Workspace, folder: Path) -> None:
    qid, doc = _first(ws)
    path = folder / f"{NEWS}_predictions.json"
    path.write_text(path.read_text().replace(f'"{qid}": {{', f'"{qid}": {{"{doc}": 0.5, ', 1))


def _pack_duplicate_doc(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    _duplicate_doc(ws, ws.tmp / "predictions")
    return argv


def _score_duplicate_doc(ws: Workspace) -> list[str]:
    qid, doc = _first(ws)
    target = ws.tmp / "twice_doc.zip"
    with zipfile.ZipFile(_shared(ws).package) as source, zipfile.ZipFile(target, "w") as out:
        for name in source.namelist():
            text = source.read(name).decode()
            if name == NEWS_DEV:
                text = text.replace(f'"{qid}": {{', f'"{qid}": {{"{doc}": 0.5, ', 1)
            out.writestr(name, text)
    return _score(lambda ws: target)(ws)


def _changed_corpus_mirror(ws: Workspace) -> Path:
    mirror = ws.tmp / "mirror"
    shutil.copytree(_shared(ws).mirror, mirror)
    corpus = _mirror_path(mirror, NEWS, "corpus")
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("doc-0", "doc-0-renamed", 1), encoding="utf-8")
    return mirror


def _pack_changed_data(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    return [*argv[:-2], "--data-dir", str(_changed_corpus_mirror(ws))]


def _recorded_revision(ws: Workspace) -> str:
    return json.loads((_shared(ws).predictions / f"{NEWS}_predictions.json").read_text())["dataset_revision"]


def _text_member(name: str, text: bytes) -> Callable[[Workspace], Path]:
    def package(ws: Workspace) -> Path:
        target = ws.tmp / "bad.zip"
        with zipfile.ZipFile(_shared(ws).package) as source, zipfile.ZipFile(target, "w") as out:
            for member in source.namelist():
                out.writestr(member, text if member == name else source.read(member))
        return target
    return package


def _unknown_dataset(ws: Workspace) -> Path:
    with zipfile.ZipFile(_shared(ws).package) as archive:
        data = json.loads(archive.read(NEWS_DEV))
    data["dataset_name"] = "x"
    return _package(ws, extra=(("qa/news/en_x_dev.json", json.dumps(data).encode()),))


def _package_top_k(top_k: int) -> Callable[[Workspace], Path]:
    def call(ws: Workspace) -> Path:
        from airbench_mteb.submission import package_submission

        return _with_mirror(ws, lambda: package_submission(_predictions(ws), ws.tmp / "out", top_k=top_k))
    return call


def _file(name: str, content: bytes) -> Callable[[Workspace], Path]:
    def path(ws: Workspace) -> Path:
        (ws.tmp / name).write_bytes(content)
        return ws.tmp / name
    return path


def _truncated(ws: Workspace) -> Path:
    (ws.tmp / "cut.zip").write_bytes(_shared(ws).package.read_bytes()[:300])
    return ws.tmp / "cut.zip"


def _fifo(ws: Workspace) -> Path:
    os.mkfifo(ws.tmp / "pipe.zip")
    return ws.tmp / "pipe.zip"


def _corrupt_member(ws: Workspace) -> Path:
    """The package with one byte of a member's compressed data changed (its CRC no longer matches)."""
    raw = bytearray(_shared(ws).package.read_bytes())
    with zipfile.ZipFile(_shared(ws).package) as archive:
        info = archive.getinfo(NEWS_DEV)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.compress_size // 2] ^= 0xFF
    (ws.tmp / "corrupt.zip").write_bytes(bytes(raw))
    return ws.tmp / "corrupt.zip"


def _empty_zip(ws: Workspace) -> Path:
    with zipfile.ZipFile(ws.tmp / "empty.zip", "w"):
        pass
    return ws.tmp / "empty.zip"


def _twice_member(ws: Workspace) -> Path:
    with zipfile.ZipFile(_shared(ws).package) as archive:
        raw = archive.read(NEWS_DEV)
    with warnings.catch_warnings():  # zipfile warns of the duplicate name it is asked to write
        warnings.simplefilter("ignore")
        return _package(ws, extra=((NEWS_DEV, raw),))


def _official_folder(ws: Workspace) -> Path:
    """The package unzipped as the official runner writes it (indent=4, without the plugin's two fields)."""
    folder = ws.tmp / "search_results" / "bm25" / "NoReranker"
    with zipfile.ZipFile(_shared(ws).package) as archive:
        for name in archive.namelist():
            data = json.loads(archive.read(name))
            for field in PLUGIN_FIELDS:
                del data[field]
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(json.dumps(data, indent=4))
    return folder


def _bad_folder_member(ws: Workspace) -> Path:
    folder = _official_folder(ws)
    (folder / NEWS_DEV).write_text('{"model_name": "bm25"')
    return folder


def _dev_only_package(ws: Workspace) -> Path:
    from airbench_mteb.submission import package_submission

    return _with_mirror(ws, lambda: package_submission(_shared(ws).predictions, ws.tmp / "dev", dev_only=True))


def _existing_zip(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    (ws.tmp / "out").mkdir()
    (ws.tmp / "out" / "bm25_NoReranker.zip").write_bytes(b"old")
    return argv


def _out_is_file(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    (ws.tmp / "out").write_text("a file")
    return argv


def _mixed_version_folder(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    shutil.copy(ws.tmp / "predictions" / f"{ARXIV}_predictions.json",
                ws.tmp / "predictions" / f"{FINANCE_2404}_predictions.json")
    return argv


def _renamed_task(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    (ws.tmp / "predictions" / f"{ARXIV}_predictions.json").rename(ws.tmp / "predictions" / "CocktailNQUTD_predictions.json")
    return argv


def _malformed_prediction(ws: Workspace) -> list[str]:
    argv = _pack()(ws)
    (ws.tmp / "predictions" / f"{ARXIV}_predictions.json").write_text('{"mteb_model_meta": ')
    return argv


# --- independent computations for the correct results ---------------------------------------------------------

def _qrels(ws: Workspace, task: str, split: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in _mirror_path(_shared(ws).mirror, task, "qrels", split).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        qrels.setdefault(row["qid"], {})[row["docid"]] = int(row["relevance"])
    return qrels


def _pytrec(qrels: dict, run: dict, measure: str) -> float:
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return sum(v[measure.replace(".", "_")] for v in per_query.values()) / len(per_query)


def _top(docs: dict[str, float], k: int) -> dict[str, float]:
    """trec_eval's order: score descending, ties by document id descending."""
    return {d: float(docs[d]) for d in sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:k]}


def _members(path: Path) -> dict[str, dict]:
    with zipfile.ZipFile(path) as archive:
        return {name: json.loads(archive.read(name)) for name in archive.namelist()}


def _check_package(top_k: int, splits: dict[str, tuple[str, str]]) -> Callable[[Workspace, Any], None]:
    """The zip in ws.tmp/out holds ``splits`` (member -> task, split), each the predictions' top ``top_k``."""
    def check(ws: Workspace, value: Any) -> None:
        members = _members(ws.tmp / "out" / "bm25_NoReranker.zip")
        assert set(members) == set(splits), sorted(members)
        for name, (task, split) in splits.items():
            expected = {q: _top(docs, top_k) for q, docs in _predicted(ws, task, split).items()}
            assert members[name]["search_results"] == expected, name
            assert members[name]["top_k"] == top_k
            assert members[name]["dataset_revision"] == json.loads(
                (_shared(ws).predictions / f"{task}_predictions.json").read_text())["dataset_revision"]
    return check


ALL_SPLITS = {NEWS_DEV: (NEWS, "dev"), NEWS_TEST: (NEWS, "test"), ARXIV_DEV: (ARXIV, "dev")}


def _demote_best(ws: Workspace, name: str, data: dict) -> None:
    """BM25 is perfect on the mirror: swap ranks 1 and 3 of every query so that scores move."""
    for docs in data["search_results"].values():
        ranked = list(docs)
        if len(ranked) >= 3:
            docs[ranked[0]], docs[ranked[2]] = docs[ranked[2]], docs[ranked[0]]


def _score_worse(ws: Workspace) -> list:
    from airbench_mteb.submission import score_submission

    return _with_mirror(ws, lambda: score_submission(_package(ws, _demote_best)))


def _check_worse(ws: Workspace, scores: list) -> None:
    news = next(s for s in scores if s.task_name == NEWS).scores
    run = _members(ws.tmp / "bm25_NoReranker.zip")[NEWS_DEV]["search_results"]
    qrels = _qrels(ws, NEWS, "dev")
    for metric, measure in (("ndcg_at_10", "ndcg_cut.10"), ("map_at_10", "map_cut.10"), ("precision_at_1", "P.1"),
                            ("recall_at_3", "recall.3")):
        assert news[metric] == pytest.approx(_pytrec(qrels, run, measure), abs=1e-5), metric
    assert 0 < news["ndcg_at_10"] < 1


def _score_with_empty_query(ws: Workspace) -> list:
    from airbench_mteb.submission import score_submission

    def empty(ws: Workspace, data: dict) -> None:
        data["search_results"][_first(ws)[0]] = {}
    return _with_mirror(ws, lambda: score_submission(_package(ws, _news_dev(empty))))


def _check_empty_query(ws: Workspace, scores: list) -> None:
    news = next(s for s in scores if s.task_name == NEWS).scores
    run = _members(ws.tmp / "bm25_NoReranker.zip")[NEWS_DEV]["search_results"]
    assert news["ndcg_at_10"] == pytest.approx(_pytrec(_qrels(ws, NEWS, "dev"), run, "ndcg_cut.10"), abs=1e-5)
    assert news["ndcg_at_10"] == pytest.approx(11 / 12, abs=1e-5)  # the emptied query counts, as a miss


def _score_official_folder(ws: Workspace) -> tuple[list, list]:
    from airbench_mteb.submission import score_submission

    return _with_mirror(ws, lambda: (score_submission(_official_folder(ws)), score_submission(_shared(ws).package)))


def _check_same_scores(ws: Workspace, value: tuple[list, list]) -> None:
    folder, package = value
    assert {s.task_name: s.scores for s in folder} == {s.task_name: s.scores for s in package}
    qrels = _qrels(ws, ARXIV, "dev")
    recall = next(s for s in folder if s.task_name == ARXIV).scores["recall_at_10"]
    assert recall == pytest.approx(_pytrec(qrels, _predicted(ws, ARXIV, "dev"), "recall.10"), abs=1e-5)


def _score_output(ws: Workspace) -> list[str]:
    return [*_score()(ws), "--output", str(ws.tmp / "scores.json")]


def _check_output(ws: Workspace, value: Any) -> None:
    written = {r["task_name"]: r for r in json.loads((ws.tmp / "scores.json").read_text())}
    assert set(written) == {NEWS, ARXIV}
    qrels = _qrels(ws, NEWS, "dev")
    assert written[NEWS]["scores"]["ndcg_at_10"] == pytest.approx(
        _pytrec(qrels, _predicted(ws, NEWS, "dev"), "ndcg_cut.10"), abs=1e-5)


def _pack_2404_by_hand(ws: Workspace) -> list:
    """A 24.04 member as its runs wrote it (``task_name``, no split), ranking each query's qrels by relevance."""
    from airbench_mteb.submission import score_submission

    qrels = _qrels(ws, FINANCE_2404, "test")
    run = {q: {d: float(rel) - i / 100 for i, (d, rel) in enumerate(docs.items())} for q, docs in qrels.items()}
    queries = _mirror_path(_shared(ws).mirror, FINANCE_2404, "queries", "test").read_text(encoding="utf-8")
    for line in queries.splitlines():
        run.setdefault(json.loads(line)["id"], {})
    member = {"model_name": "hand", "reranker_name": "NoReranker", "benchmark_version": "AIR-Bench_24.04",
              "task_type": "qa", "domain": "finance", "language": "zh", "task_name": "default", "search_results": run}
    (ws.tmp / "hand" / "qa" / "finance").mkdir(parents=True)
    (ws.tmp / "hand" / "qa" / "finance" / "zh_default_test.json").write_text(json.dumps(member))
    return _with_mirror(ws, lambda: (score_submission(ws.tmp / "hand", split="test"), run))


def _check_2404(ws: Workspace, value: tuple[list, dict]) -> None:
    scores, run = value
    assert [s.task_name for s in scores] == [FINANCE_2404]
    qrels = _qrels(ws, FINANCE_2404, "test")
    assert scores[0].scores["ndcg_at_10"] == pytest.approx(_pytrec(qrels, run, "ndcg_cut.10"), abs=1e-5)


def _check_dev_only(ws: Workspace, path: Path) -> None:
    members = _members(path)
    assert sorted(members) == [ARXIV_DEV, NEWS_DEV]
    assert members[NEWS_DEV]["search_results"] == {q: _top(d, 1000) for q, d in _predicted(ws).items()}


def _score_dev_only(ws: Workspace) -> list:
    from airbench_mteb.submission import score_submission

    package = _dev_only_package(ws)
    return _with_mirror(ws, lambda: score_submission(package, dev_only=True))


def _check_dev_only_scores(ws: Workspace, scores: list) -> None:
    news = next(s for s in scores if s.task_name == NEWS).scores
    assert news["ndcg_at_10"] == pytest.approx(_pytrec(_qrels(ws, NEWS, "dev"), _predicted(ws), "ndcg_cut.10"),
                                               abs=1e-5)


def _int_scores(ws: Workspace, data: dict) -> None:
    for docs in data["default"]["dev"].values():
        for rank, doc in enumerate(list(docs)):
            docs[doc] = len(docs) - rank


def _check_int_scores(ws: Workspace, value: Any) -> None:
    dev = _members(ws.tmp / "out" / "bm25_NoReranker.zip")[NEWS_DEV]["search_results"]
    data = json.loads((ws.tmp / "predictions" / f"{NEWS}_predictions.json").read_text())["default"]["dev"]
    assert dev == {q: {d: float(s) for d, s in docs.items()} for q, docs in data.items()}


def _empty_query(ws: Workspace, data: dict) -> None:
    data["default"]["dev"][_first(ws)[0]] = {}


def _check_empty_packaged(ws: Workspace, value: Any) -> None:
    dev = _members(ws.tmp / "out" / "bm25_NoReranker.zip")[NEWS_DEV]["search_results"]
    assert dev[_first(ws)[0]] == {} and len(dev) == len(_predicted(ws))


def _overwrite(ws: Workspace) -> list[str]:
    return [*_existing_zip(ws), "--overwrite"]


def _missing_query_error(ws: Workspace) -> str:
    return f"1 of the 12 queries of {NEWS} dev have no search results (first: [{_first(ws)[0]!r}])"


def _unknown_doc(ws: Workspace, data: dict) -> None:
    data["default"]["dev"][_first(ws)[0]]["doc-nowhere"] = 0.1


CASES = [
    # package-submission: scores
    Case("submission-pkg-nan-score", argv=_pack(_set_score(float("nan"))), error=_pack_score_error("NaN")),
    Case("submission-pkg-inf-score", argv=_pack(_set_score(float("inf"))), error=_pack_score_error("Infinity")),
    Case("submission-pkg-minus-inf-score", argv=_pack(_set_score(float("-inf"))), error=_pack_score_error("-Infinity")),
    Case("submission-pkg-bool-score", argv=_pack(_set_score(True)), error=_pack_score_error("true")),
    Case("submission-pkg-string-score", argv=_pack(_set_score("0.9")), error=_pack_score_error('"0.9"')),
    Case("submission-pkg-null-score", argv=_pack(_set_score(None)), error=_pack_score_error("null")),
    Case("submission-pkg-list-score", argv=_pack(_set_score([0.9])), error=_pack_score_error("[0.9]")),
    Case("submission-pkg-docs-not-object",
         argv=_pack(lambda ws, d: d["default"]["dev"].update({_first(ws)[0]: ["doc-1"]})),
         error=lambda ws: f"id {_first(ws)[0]!r}: the predictions of a query in default/dev are not an object"),
    Case("submission-pkg-duplicate-doc", argv=_pack_duplicate_doc,
         error=lambda ws: f"id {_first(ws)[0]!r}: {_first(ws)[1]!r} appears twice"),
    Case("submission-pkg-unknown-doc", argv=_pack(_unknown_doc),
         error=lambda ws: f"id {_first(ws)[0]!r}: document 'doc-nowhere' is not in the corpus of {NEWS} dev"),
    Case("submission-pkg-empty-doc-id",
         argv=_pack(lambda ws, d: d["default"]["dev"][_first(ws)[0]].update({"": 0.1})),
         error="document '' is not in the corpus"),
    # package-submission: queries and splits
    Case("submission-pkg-missing-query", argv=_pack(_drop_query), error=_missing_query_error),
    Case("submission-pkg-no-query", argv=_pack(lambda ws, d: d["default"].update(dev={})),
         error=f"12 of the 12 queries of {NEWS} dev have no search results"),
    Case("submission-pkg-foreign-query",
         argv=_pack(lambda ws, d: d["default"]["test"].update({_first(ws)[0]: {"doc-1": 1.0}})),
         error=lambda ws: f"id {_first(ws)[0]!r}: 1 query ids are not queries of {NEWS} test"),
    Case("submission-pkg-no-test", argv=_pack(lambda ws, d: d["default"].pop("test")),
         error=f"no test rankings of {NEWS}"),
    Case("submission-pkg-dev-only-without-dev", argv=_pack(lambda ws, d: d["default"].pop("dev"), "--dev-only"),
         error=f"no dev rankings of {NEWS} to package with --dev-only"),
    Case("submission-pkg-unknown-split",
         argv=_pack(lambda ws, d: d["default"].update(validation=d["default"]["dev"])),
         error=f"{NEWS} has no validation split"),
    Case("submission-pkg-extra-subset", argv=_pack(lambda ws, d: d.update(other={"dev": {}})),
         error="expected the one subset 'default'"),
    # package-submission: identity of the data
    Case("submission-pkg-other-data", argv=_pack_changed_data,
         error=lambda ws: f"dataset revision {_recorded_revision(ws)!r}); the task reads 'mirror-"),
    Case("submission-pkg-no-data-revision", argv=_pack(lambda ws, d: d.pop("dataset_revision")),
         error="rerun the model with --prediction-folder"),
    Case("submission-pkg-data-revision-not-string", argv=_pack(lambda ws, d: d.update(dataset_revision=7)),
         error="dataset_revision must be a string, got 7"),
    # package-submission: folder, names, options
    Case("submission-pkg-model-name-slash", argv=_pack(None, "--model-name", "org/model"), error="'org/model'"),
    Case("submission-pkg-model-name-backslash", argv=_pack(None, "--model-name", "a\\b"), error="'a\\\\b'"),
    Case("submission-pkg-model-name-control", argv=_pack(None, "--model-name", "a\tb"), error="'a\\tb'"),
    Case("submission-pkg-model-name-empty", argv=_pack(None, "--model-name", ""), error="model name ''"),
    Case("submission-pkg-reranker-name-slash", argv=_pack(None, "--reranker-name", "BAAI/bge"), error="'BAAI/bge'"),
    Case("submission-pkg-top-k-choice", argv=_pack(None, "--top-k", "5"), error="--top-k"),
    Case("submission-pkg-top-k-zero", call=_package_top_k(0),
         error="top_k must be a positive number of results per query, got 0"),
    Case("submission-pkg-top-k-negative", call=_package_top_k(-5),
         error="top_k must be a positive number of results per query, got -5"),
    Case("submission-pkg-out-is-file", argv=_out_is_file, error="is a file, not a folder"),
    Case("submission-pkg-existing-zip", argv=_existing_zip, error="bm25_NoReranker.zip: the package already exists"),
    Case("submission-pkg-mixed-models",
         argv=_pack(lambda ws, d: d["mteb_model_meta"].update(model_name="someone/else")),
         error="predictions of two models in one folder"),
    Case("submission-pkg-mixed-versions", argv=_mixed_version_folder,
         error=f"two benchmark versions in one package: AIR-Bench_24.04 in {FINANCE_2404}_predictions.json"),
    Case("submission-pkg-not-airbench", argv=_renamed_task, error="CocktailNQUTD is not an AIR-Bench task"),
    Case("submission-pkg-missing-folder",
         argv=lambda ws: ["package-submission", "--predictions", str(ws.tmp / "nowhere"), "--out", str(ws.tmp / "o")],
         error="nowhere: no MTEB prediction files"),
    Case("submission-pkg-predictions-is-file",
         argv=lambda ws: ["package-submission", "--predictions", str(_file("p.json", b"{}")(ws)), "--out",
                          str(ws.tmp / "o")],
         error="p.json: no MTEB prediction files"),
    Case("submission-pkg-malformed-json", argv=_malformed_prediction,
         error=f"{ARXIV}_predictions.json: cannot read this prediction file"),
    Case("submission-pkg-no-model-meta", argv=_pack(lambda ws, d: d.pop("mteb_model_meta")),
         error="not an MTEB prediction file"),
    # package-submission: correct results
    Case("submission-pkg-correct", argv=_pack(), check=_check_package(1000, ALL_SPLITS)),
    Case("submission-pkg-top-100", argv=_pack(None, "--top-k", "100"), check=_check_package(100, ALL_SPLITS)),
    Case("submission-pkg-overwrite", argv=_overwrite, check=_check_package(1000, ALL_SPLITS)),
    Case("submission-pkg-dev-only", call=_dev_only_package, check=_check_dev_only),
    Case("submission-pkg-int-scores", argv=_pack(_int_scores), check=_check_int_scores),
    Case("submission-pkg-query-with-no-results", argv=_pack(_empty_query), check=_check_empty_packaged),
    # score-submission: the file itself
    Case("submission-score-missing-path", argv=_score(lambda ws: ws.tmp / "nowhere.zip"), error="nowhere.zip: not found"),
    Case("submission-score-truncated-zip", argv=_score(_truncated), error="cut.zip: a damaged zip file"),
    Case("submission-score-text-file", argv=_score(_file("notes.txt", b"hello")),
         error="notes.txt: neither a zip file nor a folder"),
    Case("submission-score-fifo", argv=_score(_fifo), error="pipe.zip: neither a zip file nor a folder"),
    Case("submission-score-corrupt-member", argv=_score(_corrupt_member), error="corrupt.zip: a damaged zip file"),
    Case("submission-score-empty-zip", argv=_score(_empty_zip), error="empty.zip: no search-results files"),
    Case("submission-score-member-twice", argv=_score(_twice_member), error=f"member {NEWS_DEV} is in the zip 2 times"),
    Case("submission-score-not-json-member", argv=_score(_text_member(NEWS_DEV, b"{oops")),
         error=f"{NEWS_DEV}: not a JSON file"),
    Case("submission-score-member-not-object", argv=_score(_text_member(NEWS_DEV, b"[1, 2]")),
         error=f"{NEWS_DEV}: a search-results file holds a JSON object"),
    Case("submission-score-bad-folder-member", argv=_score(_bad_folder_member), error=f"{NEWS_DEV}: not a JSON file"),
    # score-submission: fields and layout
    Case("submission-score-no-split", argv=_score_edited(lambda ws, d: d.pop("split")), error="field 'split'"),
    Case("submission-score-misplaced", argv=_score_edited(lambda ws, d: d.update(domain="law")),
         error=f"its fields place it at qa/law/en_default_dev.json, not at {NEWS_DEV}"),
    Case("submission-score-unknown-dataset", argv=_score(_unknown_dataset),
         error="qa/news/en_x_dev.json: AIR-Bench_24.05 has no qa dataset 'x' in domain 'news', language 'en'"),
    Case("submission-score-mixed-models", argv=_score_edited(lambda ws, d: d.update(model_name="other")),
         error="one package holds one model, reranker and version"),
    Case("submission-score-results-not-object", argv=_score_edited(lambda ws, d: d.update(search_results=[])),
         error="field 'search_results' is missing or not an object"),
    Case("submission-score-top-k-zero", argv=_score_edited(lambda ws, d: d.update(top_k=0)),
         error="field 'top_k' is 0, not a positive integer"),
    Case("submission-score-revision-not-string", argv=_score_edited(lambda ws, d: d.update(dataset_revision=[])),
         error="field 'dataset_revision' is [], not a non-empty string"),
    # score-submission: rankings
    Case("submission-score-empty-results", argv=_score_edited(lambda ws, d: d.update(search_results={})),
         error=f"{NEWS_DEV}: id 'q-dev-0': 12 of the 12 queries of {NEWS} dev have no search results"),
    Case("submission-score-missing-query",
         argv=_score_edited(lambda ws, d: d["search_results"].pop(_first(ws)[0])), error=_missing_query_error),
    Case("submission-score-foreign-query",
         argv=_score_edited(lambda ws, d: d["search_results"].update({"q-test-0": {"doc-1": 1.0}})),
         error=f"id 'q-test-0': 1 query ids are not queries of {NEWS} dev"),
    Case("submission-score-nan", argv=_score(lambda ws: _package(ws, _set_member_score(float("nan")))),
         error=_score_error("NaN")),
    Case("submission-score-infinity", argv=_score(lambda ws: _package(ws, _set_member_score(float("inf")))),
         error=_score_error("Infinity")),
    Case("submission-score-string", argv=_score(lambda ws: _package(ws, _set_member_score("1"))),
         error=_score_error('"1"')),
    Case("submission-score-null", argv=_score(lambda ws: _package(ws, _set_member_score(None))),
         error=_score_error("null")),
    Case("submission-score-bool", argv=_score(lambda ws: _package(ws, _set_member_score(False))),
         error=_score_error("false")),
    Case("submission-score-duplicate-doc", argv=_score_duplicate_doc,
         error=lambda ws: f"id {_first(ws)[0]!r}: {_first(ws)[1]!r} appears twice"),
    Case("submission-score-unknown-doc",
         argv=_score_edited(lambda ws, d: d["search_results"][_first(ws)[0]].update({"doc-x": 0.5})),
         error=lambda ws: f"id {_first(ws)[0]!r}: document 'doc-x' is not in the corpus"),
    Case("submission-score-over-top-k", argv=_score_edited(lambda ws, d: d.update(top_k=1)),
         error="more than the top_k 1 the file records as kept"),
    Case("submission-score-other-data", argv=_score_edited(lambda ws, d: d.update(dataset_revision="mirror-0")),
         error=f"{NEWS_DEV}: these rankings of {NEWS} were computed on other data (dataset revision 'mirror-0')"),
    Case("submission-score-no-test", argv=_score(_dev_only_package), error=f"no test rankings of {NEWS}"),
    # score-submission: options
    Case("submission-score-split-closed-book", argv=_score(lambda ws: _shared(ws).package, "--split", "test"),
         error=f"no local qrels for {NEWS} test"),
    Case("submission-score-split-absent", argv=_score(lambda ws: _shared(ws).package, "--split", "train"),
         error="holds no train files (its splits: dev, test)"),
    Case("submission-score-output-folder", argv=lambda ws: [*_score()(ws), "--output", str(ws.tmp)],
         error="--output names the JSON file to write"),
    # score-submission: correct results
    Case("submission-score-worse-ranking", call=_score_worse, check=_check_worse),
    Case("submission-score-query-with-no-results", call=_score_with_empty_query, check=_check_empty_query),
    Case("submission-score-official-folder", call=_score_official_folder, check=_check_same_scores),
    Case("submission-score-dev-only", call=_score_dev_only, check=_check_dev_only_scores),
    Case("submission-score-2404-member", call=_pack_2404_by_hand, check=_check_2404),
    Case("submission-score-output", argv=_score_output, check=_check_output),
]
