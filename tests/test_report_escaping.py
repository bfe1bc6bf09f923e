"""Names are data in the significance, consistency and compare Markdown: whatever a model, task or subset is named
(HTML, ``|``, newlines, CJK, Markdown syntax), each table row keeps its cells and each name reads back as given.
The reading-back (unescaping) is the bad-input suite's oracle, written apart from the plugin's escape."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airbench_mteb.metrics.pairwise import compare_runs
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.report.consistency import GENERATED, HUMAN, ConsistencyReport, MetricConsistency, ModelScore
from airbench_mteb.report.pairwise_tables import matrix_markdown
from airbench_mteb.report.significance.records import Comparison, ReportContent
from airbench_mteb.report.significance.rendering import render_markdown
from airbench_mteb.report.text_format import markdown_text
from airbench_mteb.results.panel import QuerySet
from tests.bad_inputs.cases_leaderboard import HOSTILE_NAMES
from tests.bad_inputs.cases_reports import _unescaped, table_cells

HOSTILE = st.sampled_from([*sorted(HOSTILE_NAMES.values()), "a|b", "<script>x</script>", "語|\n言", "*em* `c` [l](u)"])
# any text a reader could be shown: what a table cell's strip() would change is not a name a cell can keep
NAMES = st.one_of(HOSTILE, st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=16)).filter(
    lambda name: name == name.strip() and name.strip())
PAIRS = st.tuples(NAMES, NAMES).filter(lambda pair: pair[0] != pair[1])
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])


@SETTINGS
@given(models=PAIRS, task=NAMES, subset=NAMES)
def test_significance_markdown(models: tuple[str, str], task: str, subset: str) -> None:
    a, b = models
    comparison = Comparison(task, "dev", subset, "ndcg_at_10", a, b, n_queries=3, mean_a=0.5, mean_b=0.4,
                            difference=0.1, ci_low=0.0, ci_high=0.2, p_value=0.5, p_adjusted=0.5, t_test_p_value=0.5,
                            effect_size=0.3, wins=1, ties=1, losses=1, exact=True, ci_method="BCa")
    markdown = render_markdown(ReportContent((a, b), (comparison,), "holm", Resampling(n_resamples=99), 0.05))
    rows = table_cells(markdown, "a. ") + table_cells(markdown, "b. ")
    assert [len(row) for row in rows] == [2, 2], rows
    assert [_unescaped(row[0]) for row in rows] == [f"a. {a}", f"b. {b}"]
    (row,) = [r for r in table_cells(markdown, "") if len(r) == 12 and r[1] != "split"]  # the comparison's row
    assert _unescaped(row[0]) == task and row[1] == "dev" and _unescaped(row[2]) == subset, row


@SETTINGS
@given(models=PAIRS, task=NAMES)
def test_consistency_markdown(models: tuple[str, str], task: str) -> None:
    scores = {name: (ModelScore(models[0], 0.5, None, None), ModelScore(models[1], 0.4, None, None))
              for name in (GENERATED, HUMAN)}
    metric = MetricConsistency("ndcg_at_10", {GENERATED: "ndcg_at_10", HUMAN: "ndcg_at_10"}, scores,
                               {GENERATED: 3, HUMAN: 3}, ())
    report = ConsistencyReport(QuerySet(task), QuerySet("human-task"), None, models, (metric,),
                               Resampling(method="percentile", n_resamples=99), 30, 2)
    markdown = report.to_markdown()
    rows = [row for row in table_cells(markdown, "") if len(row) == 3 and row[0] != "model"]
    assert [_unescaped(row[0]) for row in rows] == list(models), rows
    listed = next(line for line in markdown.splitlines() if line.startswith(f"- {GENERATED}: "))
    assert _unescaped(listed.removeprefix(f"- {GENERATED}: ")).startswith(task) and "\n" not in listed


@SETTINGS
@given(models=PAIRS)
def test_compare_markdown(models: tuple[str, str]) -> None:
    a, b = models
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    runs = {a: {"q1": {"d1": 0.9, "d2": 0.1}, "q2": {"d2": 0.8}}, b: {"q1": {"d2": 0.9, "d1": 0.1}, "q2": {"d1": 0.8}}}
    table = matrix_markdown(compare_runs(runs, qrels, depth=2), "ssci", markdown_text)
    cells = table_cells(table, "")  # the header, then a row per model
    assert [len(row) for row in cells] == [3, 3, 3], cells
    assert [_unescaped(row[0]) for row in cells[1:]] == [a, b]
    assert [_unescaped(cell) for cell in cells[0][1:]] == [a, b]
