"""Bad prediction files given to `airbench-mteb compare` (issue 50, finding 4): read as every reader of rankings reads
them (re-ranking, leaderboard packages): finite scores, queries of the split, documents of the corpus, each refused
in one line naming the file and the query.

The shared data are re-ranking's (``cases_reranking``): BM25's prediction files of an AIR-Bench mirror. The second
model is the same file with other arguments recorded, edited by the case.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.bad_inputs.cases_reranking import NEWS_EN, _content, _mirror
from tests.bad_inputs.framework import Case, Workspace

Edit = Callable[[dict], Any]
SPLIT = "dev"


def _first(data: dict) -> tuple[str, str]:
    """The first query of the dev split and its first document."""
    qid, docs = next(iter(data["default"][SPLIT].items()))
    return qid, next(iter(docs))


def _argv(edit: Edit) -> Callable[[Workspace], list[str]]:
    def argv(ws: Workspace) -> list[str]:
        for name, change in (("bm25", None), ("tuned", edit)):
            data = _content(ws)
            if change is not None:
                data["mteb_model_meta"]["experiment_kwargs"] = {"k1": 1.2}
                change(data)
            (ws.tmp / name).mkdir()
            (ws.tmp / name / f"{NEWS_EN}_predictions.json").write_text(json.dumps(data))
        return ["compare", "--predictions", str(ws.tmp / "bm25"), str(ws.tmp / "tuned"), "--split", SPLIT, "--no-ci",
                "--out", str(ws.tmp / "out"), "--data-dir", str(_mirror(ws))]
    return argv


def _score(value: Any) -> Edit:
    def edit(data: dict) -> None:
        qid, doc = _first(data)
        data["default"][SPLIT][qid][doc] = value
    return edit


def _extra_document(data: dict) -> None:
    qid, _ = _first(data)
    data["default"][SPLIT][qid]["doc-nowhere"] = 0.5


def _extra_query(data: dict) -> None:
    data["default"][SPLIT]["q-nowhere"] = {_first(data)[1]: 1.0}


def _error(message: str) -> Callable[[Workspace], str]:
    """The one line: the tuned model's file, the first query, then ``message``."""
    def error(ws: Workspace) -> str:
        qid, doc = _first(_content(ws))
        return (f"{ws.tmp / 'tuned' / f'{NEWS_EN}_predictions.json'}: id {qid!r}: default/{SPLIT}: "
                + message.format(doc=repr(doc)))
    return error


def _check_compared(ws: Workspace, _: Any) -> None:
    assert (ws.tmp / "out" / "comparison.json").is_file()


CASES = [
    Case("compare-score-nan", argv=_argv(_score(float("nan"))), error=_error("document {doc} has score NaN")),
    Case("compare-score-infinite", argv=_argv(_score(float("inf"))), error=_error("document {doc} has score Infinity")),
    Case("compare-score-text", argv=_argv(_score("1.5")), error=_error('document {doc} has score "1.5"')),
    Case("compare-document-not-in-corpus", argv=_argv(_extra_document),
         error=_error(f"document 'doc-nowhere' is not in the corpus of {NEWS_EN} {SPLIT}")),
    Case("compare-query-not-of-the-split", argv=_argv(_extra_query),
         error=lambda ws: f"id 'q-nowhere': default/{SPLIT}: 1 query ids are not queries of {NEWS_EN} {SPLIT}"),
    Case("compare-two-sound-files", argv=_argv(lambda data: None), check=_check_compared),
]
