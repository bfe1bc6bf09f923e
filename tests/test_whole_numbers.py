"""Issue 50, item 5: a count is a whole number however JSON writes it (``80`` or ``80.0``), read as an int wherever a
count is read; ``80.5``, ``true`` and ``"80"`` are refused. One helper (``data.numbers.whole_number``) for all."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.qrels import relevance
from airbench_mteb.results.reading import COUNT, SOURCE_BIAS, _whole_counts, score_problem
from airbench_mteb.whole_numbers import whole_number


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(), st.floats(), st.booleans(), st.text(max_size=3), st.none()))
def test_whole_number_against_the_rule(value: object) -> None:
    expected = None
    if isinstance(value, int) and not isinstance(value, bool):
        expected = value
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        expected = int(value)
    got = whole_number(value)
    assert got == expected and type(got) is type(expected)


def test_json_spellings_of_80() -> None:
    assert [whole_number(json.loads(text)) for text in ("80", "80.0", "8e1", "8.0E+1", "80.5", "true", '"80"')] == [
        80, 80, 80, 80, None, None, None]


def test_a_count_in_a_results_file_is_read_as_an_int() -> None:
    """Finding 6: ``ndsr_queries`` written 80.0 was refused as "not a whole number"."""
    row = {"main_score": 0.5, "ndcg_at_10": 0.5, SOURCE_BIAS: {"ndsr_queries": 80.0, "tie_checked_queries": 3}}
    assert score_problem(row) is None and COUNT.problem(80.0) is None
    _whole_counts(row)
    assert row[SOURCE_BIAS] == {"ndsr_queries": 80, "tie_checked_queries": 3}
    assert type(row[SOURCE_BIAS]["ndsr_queries"]) is int
    for wrong in (80.5, True, "80", math.nan):
        problem = score_problem({**row, SOURCE_BIAS: {"ndsr_queries": wrong}})
        assert problem is not None and "ndsr_queries" in problem and "whole number" in problem


def test_the_irsc_manifest_reads_a_count_written_as_float(tmp_path: Path) -> None:
    from airbench_mteb.catalog.irsc import read_irsc_manifest

    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"settings": {"en": {"tasks": {"title": 12.0, "part": 12}}}}))
    read_irsc_manifest(path)
    for wrong in (12.5, True, "12"):
        path.write_text(json.dumps({"settings": {"en": {"tasks": {"title": wrong}}}}))
        with pytest.raises(DatasetError, match="title"):
            read_irsc_manifest(path)


def test_relevance_and_a_packages_top_k_read_whole_numbers() -> None:
    from airbench_mteb.submission.layout import _extras

    assert relevance(1.0, path="q") == 1 and type(relevance(1.0, path="q")) is int
    with pytest.raises(DatasetError, match="not an integer"):
        relevance(1.5, path="q")
    assert _extras({"top_k": 100.0}, "f")["top_k"] == 100 and type(_extras({"top_k": 100.0}, "f")["top_k"]) is int
    for wrong in (100.5, True, "100", 0):
        with pytest.raises(DatasetError, match="top_k"):
            _extras({"top_k": wrong}, "f")


def test_a_comparisons_counts_are_whole_numbers_as_json_writes_them() -> None:
    import numpy as np
    import pytest

    from airbench_mteb.metrics.pairwise import PairwiseComparison

    written = PairwiseComparison(models=("a", "b"), ssci=np.eye(2), rcci=np.eye(2), num_queries=80, depth=10,
                                 uncertainty=None).to_json()
    assert PairwiseComparison.from_json({**written, "num_queries": 80.0, "depth": 1e1}).num_queries == 80
    with pytest.raises(ValueError, match=r"num_queries is 80\.5, not a whole number"):
        PairwiseComparison.from_json({**written, "num_queries": 80.5})
