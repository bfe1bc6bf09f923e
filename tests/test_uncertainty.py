"""Confidence intervals, paired tests and corrections (issue 19) against independent scipy.stats computations.

Tolerances are Monte-Carlo errors derived from the number of resamples, not guesses:

- a bootstrap bound is a quantile of B resampled statistics. With the bootstrap distribution close
  to normal with standard deviation ``se`` (scipy's ``standard_error``), the quantile at level ``q``
  has standard error ``se * sqrt(q (1 - q) / B) / phi(z_q)``; BCa adds the noise of its bias
  correction ``z0`` (standard error ``sqrt(0.25 / B) / phi(0)``), which moves a bound by about
  ``2 se`` per unit of ``z0``. Our bound and scipy's are independent estimates, so their difference
  has sqrt(2) times that standard error; we allow 5 of them.
- a randomization p-value from N draws: ours is (c + 1) / (N + 1) with c ~ Binomial(N, p); scipy's
  two-sided Monte-Carlo p is 2 (c' + 1) / (N + 1) with c' ~ Binomial(N, p / 2). Their difference
  has variance (p (1 - p) + p (2 - p)) / N and mean 1 / (N + 1); we allow 5 standard deviations
  plus that offset.
"""

from __future__ import annotations

import itertools
import math
import pickle
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import ndtri

from airbench_mteb.metrics import (
    adjust_p_values,
    benchmark_paired_test,
    bootstrap_ci,
    bootstrap_cis,
    effect_size,
    paired_bootstrap_ci,
    paired_randomization_test,
    paired_t_test_p,
    rank_intervals,
    rcci_ci,
    rcci_test,
    relative_delta_ci,
    relative_delta_difference_ci,
    relative_delta_difference_test,
    ssci_ci,
    stratified_bootstrap_mean_of_means,
    wins_ties_losses,
)
from airbench_mteb.metrics.bootstrap import bootstrap_statistic_ci, resampled_means
from airbench_mteb.metrics.pairwise import first_hit_positions, rcci, ssci
from airbench_mteb.metrics.source_bias import relative_delta

B = 9999
SIGMAS = 5


def ndcg_like(rng: np.random.Generator, n: int, zeros: float = 0.3) -> np.ndarray:
    """Per-query values shaped like nDCG@10: a share of misses (0), the rest skewed towards 1."""
    return np.where(rng.random(n) < zeros, 0.0, rng.beta(2, 1, n))


def bound_tolerance(standard_error: float, level: float, method: str, n_resamples: int = B) -> float:
    q = (1 - level) / 2
    quantile_se = math.sqrt(q * (1 - q) / n_resamples) / stats.norm.pdf(ndtri(q))
    z0_se = math.sqrt(0.25 / n_resamples) / stats.norm.pdf(0) if method == "BCa" else 0.0
    return SIGMAS * math.sqrt(2) * standard_error * math.hypot(quantile_se, 2 * z0_se)


def p_tolerance(p_ours: float, p_scipy: float, n_resamples: int = B) -> float:
    p = max(p_ours, p_scipy)
    half = min(p, 0.5)
    return SIGMAS * math.sqrt((half * (1 - half) + p * (2 - p)) / n_resamples) + 1 / (n_resamples + 1)


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def scipy_randomization_p(a: np.ndarray, b: np.ndarray, **kwargs) -> float:
    return float(stats.permutation_test((a, b), mean_difference, permutation_type="samples", **kwargs).pvalue)


def delta(human: np.ndarray, llm: np.ndarray) -> np.ndarray:
    return (human - llm) / ((human + llm) / 2) * 100


def assert_ci_matches(ours, theirs, level: float = 0.95) -> None:
    tolerance = bound_tolerance(float(theirs.standard_error), level, ours.method)
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=tolerance)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=tolerance)


# --- agreement with scipy.stats ---------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy's own call on a constant shift
def test_paired_t_test_p_is_scipys_exactly_and_one_for_identical_runs():
    rng = np.random.default_rng(1)
    for n in (2, 5, 300):
        a, b = ndcg_like(rng, n), ndcg_like(rng, n)
        assert paired_t_test_p(a, b) == stats.ttest_rel(a, b).pvalue
    a = ndcg_like(rng, 50)
    assert paired_t_test_p(a, a) == 1.0  # scipy: NaN (0 / 0)
    dyadic = rng.integers(0, 8, 50) / 8
    assert paired_t_test_p(dyadic + 0.5, dyadic) == stats.ttest_rel(dyadic + 0.5, dyadic).pvalue == 0.0


@pytest.mark.parametrize("n", [2, 7, 13])
def test_exact_randomization_p_is_scipys_exact_p(n):
    rng = np.random.default_rng(n)
    continuous = (rng.random(n), rng.random(n))
    dyadic = (rng.integers(0, 5, n) / 4, rng.integers(0, 5, n) / 4)  # many exact ties of |t*| and |t|
    for a, b in (continuous, dyadic):
        ours = paired_randomization_test(a, b)
        assert ours.exact and ours.n_resamples == 2 ** np.count_nonzero(a != b)  # tied queries are not flipped
        assert ours.p_value == scipy_randomization_p(a, b, n_resamples=B)


def test_monte_carlo_randomization_p_agrees_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(2)
    for n, shift in ((60, 0.05), (300, 0.02), (300, 0.0)):
        a = ndcg_like(rng, n)
        b = np.clip(a + rng.normal(shift, 0.25, n), 0, 1)
        ours = paired_randomization_test(a, b, seed=0)
        theirs = scipy_randomization_p(a, b, n_resamples=B, rng=np.random.default_rng(7))
        assert not ours.exact
        assert ours.p_value == pytest.approx(theirs, abs=p_tolerance(ours.p_value, theirs))


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_bootstrap_ci_of_a_mean_agrees_with_scipy(method):
    values = ndcg_like(np.random.default_rng(3), 300)
    ours = bootstrap_ci(values, method=method)
    theirs = stats.bootstrap((values,), np.mean, method=method, n_resamples=B, rng=np.random.default_rng(11))
    assert ours.method == method and ours.estimate == pytest.approx(values.mean())
    assert_ci_matches(ours, theirs)


# case -> (sample sizes, paired, statistic of the strata's column means, the same statistic for scipy)
BCA_CASES = {
    "mean": ((15,), False, lambda means: means[0][..., 0], lambda x, axis: x.mean(axis)),
    "relative delta": ((20, 20), True, lambda means: delta(means[0][..., 0], means[0][..., 1]),
                       lambda human, llm, axis: delta(human.mean(axis), llm.mean(axis))),
    "mean over tasks": ((12, 30, 8), False, lambda means: sum(m[..., 0] for m in means) / 3,
                        lambda *xs, axis: sum(x.mean(axis) for x in xs) / 3),
}


@pytest.mark.parametrize("case", list(BCA_CASES))
def test_bca_bounds_are_scipys_on_the_same_bootstrap_distribution(case):
    """Given our resampled statistics, scipy's BCa (its own bias correction, jackknife acceleration and
    quantiles) gives our bounds to rounding: the BCa arithmetic is checked exactly, not within Monte-Carlo error."""
    sizes, paired, means_statistic, scipy_statistic = BCA_CASES[case]
    rng = np.random.default_rng(20)
    samples = [rng.lognormal(0, 1.2, n) for n in sizes]  # small and skewed: BCa moves far from the percentile bounds
    strata = [np.column_stack(samples)] if paired else [x[:, None] for x in samples]
    ours = bootstrap_statistic_ci(strata, means_statistic, n_resamples=B, seed=3)
    percentile = bootstrap_statistic_ci(strata, means_statistic, method="percentile", n_resamples=B, seed=3)
    distribution = means_statistic(resampled_means(strata, B, 3))
    theirs = stats.bootstrap(samples, scipy_statistic, paired=paired, method="BCa", n_resamples=0,
                             bootstrap_result=SimpleNamespace(bootstrap_distribution=distribution))
    assert ours.method == "BCa"
    assert (ours.low, ours.high) == pytest.approx(tuple(theirs.confidence_interval), rel=1e-9)
    # the check has teeth: BCa's correction moves the bounds a million times further than the agreement allows
    assert min(abs(ours.low - percentile.low), abs(ours.high - percentile.high)) > 1e-3 * abs(ours.high)


def test_a_tasks_metrics_at_once_equal_each_metric_alone():
    rng = np.random.default_rng(21)
    ndcg = ndcg_like(rng, 120)
    vectors = {"ndcg_at_10": ndcg, "recall_at_10": (ndcg > 0.5).astype(float), "all_hit": np.ones(120)}
    together = bootstrap_cis(vectors, n_resamples=999, seed=4)
    for name, values in vectors.items():
        alone = bootstrap_ci(values, n_resamples=999, seed=4)
        assert together[name].method == alone.method
        assert (together[name].low, together[name].high) == pytest.approx((alone.low, alone.high), rel=1e-12)
    assert together["all_hit"].method == "percentile" and together["all_hit"].low == together["all_hit"].high == 1.0
    with pytest.raises(ValueError, match="same queries: 120 vs 119"):
        bootstrap_cis({"ndcg_at_10": ndcg, "map_at_10": ndcg[1:]})


def test_paired_difference_ci_agrees_with_scipys_paired_bootstrap():
    rng = np.random.default_rng(4)
    a = ndcg_like(rng, 200)
    b = np.clip(a + rng.normal(-0.03, 0.2, 200), 0, 1)
    ours = paired_bootstrap_ci(a, b, level=0.9)
    theirs = stats.bootstrap((a, b), lambda x, y, axis: x.mean(axis) - y.mean(axis), paired=True, method="BCa",
                             confidence_level=0.9, n_resamples=B, rng=np.random.default_rng(12))
    assert_ci_matches(ours, theirs, level=0.9)


def test_relative_delta_ci_agrees_with_scipy_on_the_ratio_statistic():
    rng = np.random.default_rng(5)
    human = ndcg_like(rng, 250)
    llm = np.clip(human + rng.normal(0.04, 0.2, 250), 0, 1)
    ours = relative_delta_ci(human, llm)
    theirs = stats.bootstrap((human, llm), BCA_CASES["relative delta"][3], paired=True, method="BCa", n_resamples=B,
                             rng=np.random.default_rng(13))
    assert ours.estimate == pytest.approx(relative_delta(human.mean(), llm.mean()))
    assert_ci_matches(ours, theirs)


def test_two_models_relative_delta_difference_agrees_with_scipy():
    rng = np.random.default_rng(6)
    vectors = [ndcg_like(rng, 150) for _ in range(4)]
    ours = relative_delta_difference_ci(*vectors)
    theirs = stats.bootstrap(vectors, lambda ha, la, hb, lb, axis: delta(ha.mean(axis), la.mean(axis))
                             - delta(hb.mean(axis), lb.mean(axis)), paired=True, method="BCa", n_resamples=B,
                             rng=np.random.default_rng(14))
    assert_ci_matches(ours, theirs)


def test_two_models_relative_delta_difference_test_is_scipys_exact_permutation_test():
    rng = np.random.default_rng(7)
    human_a, llm_a, human_b, llm_b = (rng.random(9) for _ in range(4))
    human, llm = np.concatenate([human_a, human_b]), np.concatenate([llm_a, llm_b])

    def statistic(x, y, axis):  # x, y: indices into the pooled vectors, swapped query by query by scipy
        x, y = x.astype(int), y.astype(int)
        return delta(human[x].mean(axis), llm[x].mean(axis)) - delta(human[y].mean(axis), llm[y].mean(axis))

    theirs = stats.permutation_test((np.arange(9), np.arange(9, 18)), statistic, permutation_type="samples",
                                    n_resamples=B)
    ours = relative_delta_difference_test(human_a, llm_a, human_b, llm_b)
    assert ours.exact and ours.p_value == theirs.pvalue
    assert ours.statistic == pytest.approx(theirs.statistic)


def test_stratified_benchmark_ci_agrees_with_scipys_multi_sample_bootstrap():
    rng = np.random.default_rng(8)
    tasks = [ndcg_like(rng, 40), ndcg_like(rng, 120, zeros=0.6), ndcg_like(rng, 25)]
    ours = stratified_bootstrap_mean_of_means(tasks)
    theirs = stats.bootstrap(tasks, lambda *xs, axis: sum(x.mean(axis) for x in xs) / len(xs), method="BCa",
                             n_resamples=B, rng=np.random.default_rng(15))
    assert ours.estimate == pytest.approx(np.mean([t.mean() for t in tasks]))
    assert_ci_matches(ours, theirs)


def mean_of_task_differences(sizes: tuple[int, ...]):
    """scipy statistic: the mean over tasks of the mean difference, over vectors pooling the tasks in order."""
    bounds = list(itertools.pairwise(np.cumsum((0, *sizes))))

    def statistic(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return sum(np.mean(x[..., lo:hi] - y[..., lo:hi], axis=axis) for lo, hi in bounds) / len(bounds)
    return statistic


def test_benchmark_paired_test_is_scipys_sign_flip_test_of_the_mean_of_task_means():
    rng = np.random.default_rng(9)
    sizes = (3, 4, 5)  # 2^12 sign vectors: exact
    tasks_a = [ndcg_like(rng, n) for n in sizes]
    tasks_b = [ndcg_like(rng, n) for n in sizes]
    ours = benchmark_paired_test(tasks_a, tasks_b)
    exact = stats.permutation_test((np.concatenate(tasks_a), np.concatenate(tasks_b)), mean_of_task_differences(sizes),
                                   permutation_type="samples", n_resamples=B)
    assert ours.exact and ours.p_value == exact.pvalue
    assert ours.statistic == pytest.approx(np.mean([a.mean() - b.mean() for a, b in zip(tasks_a, tasks_b, strict=True)]))

    sizes = (30, 50)
    tasks_a = [ndcg_like(rng, n) for n in sizes]
    tasks_b = [np.clip(a + rng.normal(0.03, 0.2, a.size), 0, 1) for a in tasks_a]
    ours = benchmark_paired_test(tasks_a, tasks_b)
    theirs = float(stats.permutation_test((np.concatenate(tasks_a), np.concatenate(tasks_b)),
                                          mean_of_task_differences(sizes), permutation_type="samples", n_resamples=B,
                                          rng=np.random.default_rng(16)).pvalue)
    assert not ours.exact and ours.p_value == pytest.approx(theirs, abs=p_tolerance(ours.p_value, theirs))


def test_ssci_and_rcci_intervals_and_rcci_test_follow_the_per_query_indices():
    rng = np.random.default_rng(10)
    r1 = (rng.random((120, 11)) < 0.15).astype(int)
    r2 = (rng.random((120, 11)) < 0.10).astype(int)
    m1, m2 = first_hit_positions(r1), first_hit_positions(r2)
    ours_ssci, ours_rcci = ssci_ci(r1, r2), rcci_ci(r1, r2)
    assert ours_ssci.estimate == pytest.approx(ssci(r1, r2))
    assert ours_rcci.estimate == pytest.approx(rcci(r1, r2))
    for ours, per_query in ((ours_ssci, np.abs(m1 - m2) / 10), (ours_rcci, (m1 - m2) / 10)):
        assert_ci_matches(ours, stats.bootstrap((per_query,), np.mean, n_resamples=B, rng=np.random.default_rng(17)))
    small1, small2 = r1[:12], r2[:12]
    assert rcci_test(small1, small2).p_value == scipy_randomization_p(
        first_hit_positions(small1) / 10, first_hit_positions(small2) / 10, n_resamples=B)
    with pytest.raises(ValueError, match="binary"):
        rcci_ci(r1 * 2, r2)


def test_adjusted_p_values_match_the_definitions_and_scipys_bh():
    p = np.array([0.04, 0.01, 0.03, 0.5, 0.02, 0.04])
    m = p.size
    order = np.argsort(p)
    holm = np.empty(m)
    for i, index in enumerate(order):  # step-down: the running maximum of (m - i) p_(i)
        holm[index] = min(1.0, max((m - j) * p[order[j]] for j in range(i + 1)))
    np.testing.assert_allclose(adjust_p_values(p, "holm"), holm)
    np.testing.assert_allclose(adjust_p_values(p, "bonferroni"), np.minimum(1, m * p))
    np.testing.assert_allclose(adjust_p_values(p, "bh"), stats.false_discovery_control(p, method="bh"))
    np.testing.assert_array_equal(adjust_p_values(p, "none"), p)
    # R: p.adjust(c(.01, .02, .03, .04, .05), "holm") and "BH"
    np.testing.assert_allclose(adjust_p_values([0.01, 0.02, 0.03, 0.04, 0.05]), [0.05, 0.08, 0.09, 0.09, 0.09])
    np.testing.assert_allclose(adjust_p_values([0.01, 0.02, 0.03, 0.04, 0.05], "bh"), [0.05] * 5)


# --- degenerate and bad input -----------------------------------------------------------------------------

def test_a_sample_where_every_query_scores_the_same_gives_x_x_by_the_percentile_method():
    for value in (0.0, 0.1, 0.7272):
        interval = bootstrap_ci([value] * 40)
        assert (interval.estimate, interval.low, interval.high, interval.method) == (value, value, value, "percentile")
    same = relative_delta_ci([0.3] * 10, [0.2] * 10)
    assert same.low == same.high == same.estimate == pytest.approx(40.0) and same.method == "percentile"


def test_bca_falls_back_to_percentile_when_its_bias_correction_is_infinite():
    values = np.random.default_rng(11).random(50)
    centre = values.mean()
    # the estimate is the statistic's maximum, so every resample lies below it: z0 = -inf
    interval = bootstrap_statistic_ci([values], lambda means: -((means[0][..., 0] - centre) ** 2), n_resamples=999)
    assert interval.method == "percentile" and interval.high <= 0


def test_effect_size_and_wins_ties_losses():
    a, b = np.array([0.5, 0.2, 0.9, 0.4]), np.array([0.25, 0.2, 1.0, 0.1])
    d = a - b
    assert effect_size(a, b) == pytest.approx(d.mean() / d.std(ddof=1))
    assert wins_ties_losses(a, b) == (2, 1, 1)
    assert effect_size(a, a) == 0.0
    dyadic = np.array([0.5, 0.25, 0.125, 0.0])  # + 0.5 shifts every query by exactly 0.5
    assert effect_size(dyadic + 0.5, dyadic) == math.inf and effect_size(dyadic, dyadic + 0.5) == -math.inf


@pytest.mark.parametrize(("call", "message"), [
    (lambda: bootstrap_ci([0.5]), "at least 2 queries"),
    (lambda: bootstrap_ci([0.5, float("nan"), 0.1]), r"values\[1\] is nan"),
    (lambda: bootstrap_ci([[0.5, 0.1]]), "vector"),
    (lambda: bootstrap_ci([0.5, 0.1], method="bca"), "unknown interval method 'bca'"),
    (lambda: bootstrap_ci([0.5, 0.1], level=95), "level must be in"),
    (lambda: bootstrap_ci([0.5, 0.1], n_resamples=0), "n_resamples"),
    (lambda: paired_randomization_test([0.5, 0.1], [0.5, 0.1, 0.2]), "same queries: 2 vs 3"),
    (lambda: adjust_p_values([0.1, 1.5]), "p-value 1 is 1.5"),
    (lambda: adjust_p_values([0.1], "fdr"), "unknown correction 'fdr'"),
    (lambda: benchmark_paired_test([[0.1, 0.2]], [[0.1, 0.2], [0.3, 0.4]]), "same tasks: 1 vs 2"),
    (lambda: rank_intervals({"a": [[0.1, 0.2]]}), "at least 2 models"),
    (lambda: rank_intervals({"a": [[0.1, 0.2]], "b": [[0.1, 0.2, 0.3]]}), "'b' task 0"),
])
def test_bad_input_names_the_culprit(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_rank_intervals_separate_clear_winners_and_overlap_for_near_ties():
    rng = np.random.default_rng(12)
    tasks = [ndcg_like(rng, 200), ndcg_like(rng, 150)]
    models = {
        "strong": [np.clip(t + 0.3, 0, 1) for t in tasks],
        "base": tasks,
        # the same scores on other queries, a hair better on average: a near tie that resampling cannot order
        "base-shuffled": [np.roll(t, 1) + 1e-6 for t in tasks],
        "weak": [t * 0.2 for t in tasks],
    }
    ranks = rank_intervals(models, n_resamples=999)
    expected = {"strong": (1, 1, 1), "base-shuffled": (2, 2, 3), "base": (3, 2, 3), "weak": (4, 4, 4)}
    assert {name: (r.rank, r.low, r.high) for name, r in ranks.items()} == expected


# --- properties -------------------------------------------------------------------------------------------

unit = st.floats(0, 1, allow_nan=False)
scores = st.lists(unit, min_size=2, max_size=40)
pairs = st.integers(2, 40).flatmap(lambda n: st.tuples(st.lists(unit, min_size=n, max_size=n),
                                                       st.lists(unit, min_size=n, max_size=n)))
FAST = settings(max_examples=40, deadline=None)


@FAST
@given(scores, st.sampled_from(["BCa", "percentile"]))
def test_property_the_interval_contains_the_estimate(values, method):
    interval = bootstrap_ci(values, method=method, n_resamples=199)
    assert interval.low <= interval.estimate <= interval.high


@FAST
@given(scores)
def test_property_identical_runs_differ_by_zero_with_p_one(values):
    interval = paired_bootstrap_ci(values, values, n_resamples=99)
    assert (interval.estimate, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert paired_randomization_test(values, values, n_resamples=99).p_value == 1.0
    assert paired_t_test_p(values, values) == 1.0
    assert wins_ties_losses(values, values) == (0, len(values), 0)


@FAST
@given(pairs)
def test_property_swapping_a_and_b_negates_the_difference_and_keeps_p(pair):
    a, b = pair
    forward, backward = paired_randomization_test(a, b, n_resamples=199), paired_randomization_test(b, a, n_resamples=199)
    assert backward.statistic == -forward.statistic and backward.p_value == forward.p_value
    assert paired_t_test_p(b, a) == paired_t_test_p(a, b) or math.isnan(paired_t_test_p(a, b))
    assert effect_size(b, a) == -effect_size(a, b)
    interval, swapped = paired_bootstrap_ci(a, b, n_resamples=99), paired_bootstrap_ci(b, a, n_resamples=99)
    assert swapped.estimate == pytest.approx(-interval.estimate, abs=1e-12)
    assert (swapped.low, swapped.high) == pytest.approx((-interval.high, -interval.low), abs=1e-9)


@FAST
@given(st.lists(unit, min_size=1, max_size=30), st.sampled_from(["holm", "bonferroni", "bh"]))
def test_property_adjusted_p_values_are_at_least_raw_and_keep_their_order(p, method):
    raw = np.array(p)
    adjusted = adjust_p_values(raw, method)
    assert (adjusted >= raw).all() and (adjusted <= 1).all()
    order = np.argsort(raw, kind="stable")
    assert (np.diff(adjusted[order]) >= 0).all()  # Holm (and the others) monotone in the raw p-value


@FAST
@given(pairs, st.integers(0, 2**32 - 1))
def test_property_the_same_seed_gives_byte_identical_outputs(pair, seed):
    a, b = pair
    for run in (lambda: paired_bootstrap_ci(a, b, n_resamples=99, seed=seed),
                lambda: paired_randomization_test(a, b, n_resamples=99, seed=seed),
                lambda: relative_delta_ci(a, b, n_resamples=99, seed=seed)):
        assert pickle.dumps(run()) == pickle.dumps(run())


@FAST
@given(st.integers(10, 60).flatmap(lambda n: st.tuples(st.lists(unit, min_size=n, max_size=n),
                                                       st.lists(unit, min_size=n, max_size=n))))
def test_property_another_seed_moves_p_only_within_monte_carlo_error(pair):
    a, b = pair
    draws = 999
    first = paired_randomization_test(a, b, n_resamples=draws, seed=0).p_value
    second = paired_randomization_test(a, b, n_resamples=draws, seed=1).p_value
    p = (first + second) / 2
    assert abs(first - second) <= SIGMAS * math.sqrt(2 * p * (1 - p) / draws) + 2 / (draws + 1)
