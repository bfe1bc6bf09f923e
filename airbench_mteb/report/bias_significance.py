"""Two models' source bias compared: the ``source_bias`` section of ``airbench-mteb significance``.

A co*cktail ``mixed`` subset keeps, per model, each query's score against every source's copies
(:class:`~airbench_mteb.data.per_query.QueryScores` ``by_source``). For every pair of models, every
source compared with the reference and every compared metric the vectors hold (NDCG@k, MAP@k, each also in
its tie-neutral form where kept: :mod:`airbench_mteb.metrics.tie_neutral`),
:func:`~airbench_mteb.metrics.bias_uncertainty.compare_source_bias` gives Δ_A - Δ_B with its
paired bootstrap interval and permutation test. These comparisons are their own family of tests:
their p-values are adjusted among themselves, not with the models' score comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from airbench_mteb.data.per_query import QueryScores
from airbench_mteb.metrics.bias_uncertainty import SourceVectors, compare_source_bias
from airbench_mteb.metrics.keys import MetricKey
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import Correction, adjust_p_values
from airbench_mteb.report.text_format import correction_text, markdown_text, p_text, tex

BIAS_FAMILY = "every source-bias comparison in this report: task x split x subset x metric x source x model pair"
TIE_NEUTRAL_FAMILY = "the same comparisons of the tie-neutral Relative Δs, adjusted among themselves"


@dataclass(frozen=True)
class BiasComparison:
    """Model A's Relative Δ against model B's on one task, split, subset, metric and compared source.

    ``metric`` is the key of the Δ in the results' ``source_bias`` block (``relative_delta_ndcg_at_1_llm``, or
    ``relative_delta_ndcg_at_1_llm_tie_neutral`` for the Δ expected over every order of exactly tied scores);
    ``delta_*`` are in percent (> 0: the reference's copies ranked higher); ``difference`` = ``delta_a`` - ``delta_b``.
    """

    task: str
    split: str
    subset: str
    metric: str
    reference: str
    source: str
    model_a: str
    model_b: str
    n_queries: int
    delta_a: float
    delta_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    exact: bool
    ci_method: str

    @property
    def tie_neutral(self) -> bool:
        key = MetricKey.parse(self.metric)
        return key is not None and key.tie_neutral

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BiasScores:
    """One model's per-source vectors on one scored split and subset of a source-bias task."""

    task: str
    split: str
    subset: str
    reference: str
    metrics: tuple[str, ...]  # the metrics compared there
    by_model: Mapping[str, Mapping[str, QueryScores]]  # model -> source -> per-query scores


def compare_biases(scored: Sequence[BiasScores], resampling: Resampling,
                   correction: Correction) -> tuple[BiasComparison, ...]:
    """Every model pair's Δ_A - Δ_B on every entry of ``scored``, p-values adjusted over all of them; the
    tie-neutral Δs' comparisons form a family of their own, so the conventional ones are adjusted as before."""
    comparisons = [comparison for entry in scored for comparison in _entry_comparisons(entry, resampling)]
    adjusted: dict[int, float] = {}
    for tie_neutral in (False, True):
        family = [i for i, c in enumerate(comparisons) if c.tie_neutral is tie_neutral]
        if family:
            p_values = adjust_p_values([comparisons[i].p_value for i in family], correction)
            adjusted.update(zip(family, map(float, p_values), strict=True))
    return tuple(replace(c, p_adjusted=adjusted[i]) for i, c in enumerate(comparisons))


def _entry_comparisons(entry: BiasScores, resampling: Resampling) -> list[BiasComparison]:
    vectors = {model: _vectors(by_source) for model, by_source in entry.by_model.items()}
    sources = [source for source in next(iter(entry.by_model.values())) if source != entry.reference]
    models = list(vectors)
    comparisons = []
    for metric, tie_neutral in ((metric, tie_neutral) for metric in entry.metrics for tie_neutral in (False, True)):
        key = MetricKey.parse(metric)
        if key is None:
            continue  # not a measure at a cut-off: no source bias is computed for it
        held = str(replace(key, tie_neutral=tie_neutral))
        if not all(held in scores.metrics for by_source in entry.by_model.values() for scores in by_source.values()):
            continue  # a metric source bias is not computed for (recall, MRR), or kept before tie-neutral ones were
        for source in sources:
            for i, model_a in enumerate(models):
                for model_b in models[i + 1:]:
                    found = compare_source_bias(vectors[model_a], vectors[model_b], reference=entry.reference,
                                                compared=source, measure=key.measure, k=key.k,
                                                resampling=resampling, tie_neutral=tie_neutral)
                    delta = replace(key, source=source, delta="relative_delta", tie_neutral=tie_neutral)
                    comparisons.append(BiasComparison(
                        entry.task, entry.split, entry.subset, str(delta), entry.reference,
                        source, model_a, model_b, found.n_queries, found.delta_a, found.delta_b, found.difference,
                        found.ci_low, found.ci_high, found.p_value, found.p_value, found.exact,
                        found.resampling.method))
    return comparisons


def _vectors(by_source: Mapping[str, QueryScores]) -> SourceVectors:
    return {source: (scores.query_ids, scores.metrics) for source, scores in by_source.items()}


def bias_json(comparisons: Sequence[BiasComparison]) -> dict[str, Any]:
    neutral = sum(c.tie_neutral for c in comparisons)
    return {"family": BIAS_FAMILY, "family_size": len(comparisons) - neutral,
            "tie_neutral_family": TIE_NEUTRAL_FAMILY, "tie_neutral_family_size": neutral,
            "comparisons": [comparison.to_json() for comparison in comparisons]}


def bias_markdown(comparisons: Sequence[BiasComparison], letters: Mapping[str, str]) -> list[str]:
    """The section's Markdown lines (none without comparisons); models by their letters in the report."""
    if not comparisons:
        return []
    lines = ["## Source bias: Relative Δ of model A minus model B", "",
             f"Δ in percent (> 0: the reference's copies ranked higher). Paired bootstrap interval and two-sided "
             f"paired permutation test (each draw swaps the two models' scores of a query); {BIAS_FAMILY}: "
             f"{len(comparisons)} comparisons.", "",
             "| task | split | subset | Δ of | A | B | Δ A | Δ B | Δ A - Δ B | CI | p | p adjusted |",
             "|---" * 12 + "|"]
    for c in comparisons:
        lines.append(f"| {markdown_text(c.task)} | {markdown_text(c.split)} | {markdown_text(c.subset)} | "
                     f"{c.metric} | {letters[c.model_a]} | "
                     f"{letters[c.model_b]} | {c.delta_a:+.2f} | {c.delta_b:+.2f} | {c.difference:+.2f} | "
                     f"[{c.ci_low:+.2f}, {c.ci_high:+.2f}] | {p_text(c.p_value)} | {p_text(c.p_adjusted)} |")
    return [*lines, ""]


def bias_latex(comparisons: Sequence[BiasComparison], correction: Correction, resampling: Resampling) -> str:
    """A booktabs table of the comparisons (empty without any), its caption read off the report's record."""
    if not comparisons:
        return ""
    rows = [f"{tex(c.task)} & {tex(c.metric)} & {tex(c.model_a)} & {tex(c.model_b)} & {c.delta_a:+.2f} & "
            f"{c.delta_b:+.2f} & {c.difference:+.2f} [{c.ci_low:+.2f}, {c.ci_high:+.2f}] & {p_text(c.p_adjusted)} \\\\"
            for c in comparisons]
    caption = (f"Source bias: Relative $\\Delta$ (\\%) of model A minus model B, with a paired bootstrap interval; "
               f"adjusted p of a two-sided paired permutation test, {resampling.n_resamples:,} permutations, "
               f"{correction_text(correction)} over {len(comparisons)} comparisons.")
    return "\n".join([r"\begin{table}[t]", r"\centering", f"\\caption{{{caption}}}", r"\begin{tabular}{llllrrrr}",
                      r"\toprule", r"Task & $\Delta$ of & A & B & $\Delta_A$ & $\Delta_B$ & $\Delta_A - \Delta_B$ & "
                      r"$p_\mathrm{adj}$ \\", r"\midrule", *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}"])


def bias_csv_rows(comparisons: Sequence[BiasComparison]) -> list[dict[str, Any]]:
    """The comparisons as rows of the report's CSV (level ``source_bias``; ``mean_a``/``mean_b`` hold the Δs)."""
    return [{"level": "source_bias", "task": c.task, "split": c.split, "subset": c.subset, "metric": c.metric,
             "model_a": c.model_a, "model_b": c.model_b, "n_queries": c.n_queries, "mean_a": c.delta_a,
             "mean_b": c.delta_b, "difference": c.difference, "ci_low": c.ci_low, "ci_high": c.ci_high,
             "p_value": c.p_value, "p_adjusted": c.p_adjusted, "exact": c.exact, "ci_method": c.ci_method}
            for c in comparisons]
