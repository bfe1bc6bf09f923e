"""Metric keys as values: every key the plugin writes reads back to the value that wrote it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airbench_mteb.metrics.keys import DELTAS, STATS, MetricKey

WRITTEN = {  # keys as the results files hold them, and the value each is
    "ndcg_at_10": MetricKey("ndcg", 10),
    "share_at_5_human": MetricKey("share", 5, "human"),
    "relative_delta_ndcg_at_1_llm_tie_neutral": MetricKey("ndcg", 1, "llm", "relative_delta", tie_neutral=True),
    "ndcg_at_10_tie_neutral_ci_low": MetricKey("ndcg", 10, tie_neutral=True, stat="ci_low"),
    "relative_delta_map_at_3_llm_ties_to_human": MetricKey("map", 3, "llm", "relative_delta", ties_to="human"),
    "relative_delta_ndcg_at_1_llm_tie_neutral_ci_method": MetricKey("ndcg", 1, "llm", "relative_delta", True,
                                                                    stat="ci_method"),
    "delta_ndsr_at_5_llama_2_7b_p_value": MetricKey("ndsr", 5, "llama_2_7b", "delta", stat="p_value"),
    "tie_decided_queries_at_100": MetricKey("tie_decided_queries", 100),
}


@pytest.mark.parametrize(("text", "key"), WRITTEN.items())
def test_written_keys_read_back(text: str, key: MetricKey) -> None:
    assert str(key) == text and MetricKey.parse(text) == key


@pytest.mark.parametrize("text", ["ci_level", "tie_checked_queries", "accuracy", "ndcg_at_0", "ndcg_at_01", "ndcg_at_",
                                  "main_score"])
def test_other_keys_are_not_metric_keys(text: str) -> None:
    assert MetricKey.parse(text) is None


@pytest.mark.parametrize("source", ["", "ci_low", "x_tie_neutral", "a_ties_to_b", "x_p_value", "ties_to"])
def test_a_source_that_would_not_read_back_is_refused(source: str) -> None:
    with pytest.raises(ValueError, match="cannot be read back"):
        MetricKey("ndcg", 1, source)


_NAME = st.from_regex(r"[a-z0-9][a-z0-9_\-.]{0,12}", fullmatch=True)


@st.composite
def metric_keys(draw: st.DrawFn) -> MetricKey:
    measure = draw(st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True))
    source, ties_to = draw(st.none() | _NAME), draw(st.none() | _NAME)
    try:
        return MetricKey(measure, draw(st.integers(1, 10**6)), source, draw(st.none() | st.sampled_from(DELTAS)),
                         draw(st.booleans()), ties_to, draw(st.none() | st.sampled_from(STATS)))
    except ValueError:  # a name the key refuses (covered above)
        return MetricKey("ndcg", 1)


@given(metric_keys())
def test_every_key_reads_back_to_itself(key: MetricKey) -> None:
    assert MetricKey.parse(str(key)) == key
