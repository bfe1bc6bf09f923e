"""Issue 44: a tampered per-query file is refused by every command that reads it, in the same one line.

Two queries' judged@10 swapped in the default BM25's per-query file (every mean stays), the digest its results
record kept (it no longer matches) or removed: ``significance``, ``consistency`` and ``leaderboard`` refuse it
with one message naming the file, the same after each command's name; the table intervals (the main-score table
of the demo and ``report``) refuse such a file too, never showing the score bare as if nothing were kept.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_inputs.cases_query_set import (
    BM25,
    TASK,
    THIRD,
    TUNED,
    _only_digest_removed,
    _swap_two_queries,
    results_files,
)
from tests.bad_inputs.cases_query_set import build_results as build_query_set_results
from tests.test_cocktail_metrics import tiny_sources  # noqa: F401  (the fixture)

SECOND = "AIR-Bench_24.05_qa_news_en"  # consistency compares two query sets: the panel is run on this one too
TAMPERINGS: dict[str, Callable[[Path], None]] = {"digest-kept": _swap_two_queries,
                                                 "digest-removed": _only_digest_removed}
PROBLEMS = {"digest-kept": "SHA-256 differs from its per_query_sha256", "digest-removed": "has no per_query_sha256"}


def _commands(results: Path, out: Path) -> dict[str, list[str]]:
    """Every command that reads per-query files, on the three BM25 settings' results."""
    return {
        "significance": ["significance", "--results", str(results), "-m", BM25, TUNED, "-t", TASK,
                         "--metrics", "judged_at_10", "--resamples", "99", "--out", str(out / "significance")],
        "consistency": ["consistency", "--results", str(results), "-m", BM25, TUNED, THIRD, "--generated", TASK,
                        "--human", SECOND, "--generated-split", "dev", "--human-split", "dev", "--no-corpus-check",
                        "--resamples", "99", "--out", str(out / "consistency")],
        "leaderboard": ["leaderboard", "--results", str(results), "--split", "dev", "--resamples", "99",
                        "--out", str(out / "leaderboard")],
    }


@pytest.fixture(scope="module")
def query_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The query-set results (three BM25 settings on :data:`TASK`), and the same three on :data:`SECOND`."""
    import mteb

    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.settings import settings_applied
    from tests.airbench_mirror import english_documents, write_entry

    folder = build_query_set_results(tmp_path_factory.mktemp("tampered"))
    write_entry(folder / "mirror", next(e for e in airbench_entries() if e.task_name == SECOND), english_documents())
    with settings_applied(data_dir=folder / "mirror"):
        for kwargs in ({}, {"k1": 1.2, "b": 0.75}, {"k1": 2.0, "b": 0.9}):
            mteb.evaluate(mteb.get_model(BM25, **kwargs), [mteb.get_task(SECOND)],
                          cache=mteb.ResultCache(folder / "results"), show_progress_bar=False)
    return folder


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_every_command_refuses_a_tampered_per_query_file_in_the_same_line(query_set: Path, tampering: str,
                                                                           tmp_path: Path, capsys) -> None:
    from airbench_mteb.cli import main

    shutil.copytree(query_set / "results", tmp_path / "results")
    TAMPERINGS[tampering](tmp_path)
    kept_path = results_files(tmp_path, ".per_query.json.gz")[0]
    messages = {}
    for name, argv in _commands(tmp_path / "results", tmp_path / "out").items():
        capsys.readouterr()
        assert main(argv) == 2, name
        (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
        prefix = f"airbench-mteb {name}: "
        assert line.startswith(prefix), line
        messages[name] = line.removeprefix(prefix)
    assert len(set(messages.values())) == 1, messages
    message = messages["significance"]
    assert message.startswith(f"{kept_path}: ") and PROBLEMS[tampering] in message, message
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_the_table_intervals_refuse_a_tampered_per_query_file(tiny_sources: Path, tampering: str,  # noqa: F811
                                                              tmp_path: Path) -> None:
    """The main-score table's interval of a mean over subsets is read from the per-query file: held to its results
    by the same rule (the error is the line the commands print), never dropped to a bare score."""
    import gzip

    import mteb

    from airbench_mteb.data.errors import DatasetError
    from airbench_mteb.registry import register_tasks
    from airbench_mteb.report.irsc import main_score_table
    from airbench_mteb.results.kept import held_scores, read_kept_file
    from airbench_mteb.results.reading import read_results
    from airbench_mteb.settings import settings_applied
    from airbench_mteb.tasks.cocktail import make_source_bias_task

    task = make_source_bias_task(tiny_sources, ["human", "llm"], name="TinyTamperedBias", settings=["human", "llm"])
    register_tasks([type(task)])
    with settings_applied(ci="percentile", ci_resamples=999):
        mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), task, cache=mteb.ResultCache(tmp_path),
                      show_progress_bar=False)
    (kept_path,) = tmp_path.rglob("TinyTamperedBias.per_query.json.gz")
    (results_path,) = tmp_path.rglob("TinyTamperedBias.json")
    data = json.loads(gzip.decompress(kept_path.read_bytes()))
    values = data["scores"]["test"]["human"]["metrics"]["ndcg_at_1"]
    j = next(k for k, value in enumerate(values) if value != values[0])
    values[0], values[j] = values[j], values[0]
    kept_path.write_bytes(gzip.compress(json.dumps(data).encode()))
    if tampering == "digest-removed":
        result = json.loads(results_path.read_text())
        for rows in result["scores"].values():
            for row in rows:
                row.pop("per_query_sha256", None)
        results_path.write_text(json.dumps(result))
    (found,) = read_results(tmp_path, tasks=["TinyTamperedBias"]).found
    with pytest.raises(DatasetError) as held:
        held_scores(read_kept_file(found), "test", "human", ("ndcg_at_1",))
    with pytest.raises(DatasetError) as table:
        main_score_table(tmp_path, ["airbench-mteb/bm25"], ["TinyTamperedBias"])
    assert str(table.value) == str(held.value) and str(table.value).startswith(f"{kept_path}: ")
    assert PROBLEMS[tampering] in str(table.value)
