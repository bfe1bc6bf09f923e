"""Rank agreement of generated and human-labelled benchmarks (AIR-Bench section 4.1), checked against scipy and
against a straightforward recomputation of the bootstrap with the same draws."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr, ndtri
from scipy.stats import kendalltau, spearmanr

from airbench_mteb.metrics.consistency import (
    EXACT_MAX_MODELS,
    agreement_intervals,
    kendall_tau_b,
    rank_agreement,
    spearman_rho,
    subset_agreement,
    tied_resamples,
)

# seed 002's MS MARCO table: 17 models, human (raw) and generated scores
RAW = [48, 45.232, 45.119, 44.13, 44.122, 43.787, 43.104, 43.056, 42.553, 42.388, 42.253, 41.675, 39.887, 39.565,
       36.57, 33.637, 26.211]
GENERATED = [59.625, 55.26, 54.431, 52.581, 55.513, 59.015, 51.456, 51.438, 51.528, 54.292, 47.989, 48.102,
             51.112, 54.404, 47.127, 42.107, 34.155]


def test_reproduces_the_seed_ms_marco_consistency_and_equals_scipy() -> None:
    result = rank_agreement(GENERATED, RAW)
    assert result.spearman_rho == pytest.approx(0.8210784313725491)
    assert result.spearman_p == pytest.approx(5.346351701144889e-05, rel=1e-6)
    assert (result.spearman_rho, result.spearman_p) == tuple(spearmanr(GENERATED, RAW))
    assert (result.kendall_tau, result.kendall_p) == tuple(kendalltau(GENERATED, RAW))
    assert result.models == 17 and result.p_method == "scipy"


def _average_ranks(values: list[int]) -> list[Fraction]:
    """1-based ranks, ties sharing the mean of the positions they span, in exact arithmetic."""
    ordered = sorted(values)
    return [Fraction(ordered.index(v) + 1 + ordered.index(v) + ordered.count(v), 2) for v in values]


def _spearman_numerator(x: list[int], y: list[int]) -> Fraction:
    rx, ry = _average_ranks(x), _average_ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    return sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _kendall_numerator(x: list[int], y: list[int]) -> int:
    """Concordant minus discordant pairs."""
    return sum(_sign(x[i] - x[j]) * _sign(y[i] - y[j]) for i, j in itertools.combinations(range(len(x)), 2))


def oracle_p(x: list[int], y: list[int], numerator) -> Fraction:
    """Exact two-sided permutation p: every ordering of ``y``; the coefficients' denominators depend on the ties of
    each column only, which an ordering keeps, so "at least as far from 0" compares the numerators exactly."""
    observed = abs(numerator(x, y))
    orderings = list(itertools.permutations(y))
    return Fraction(sum(abs(numerator(x, list(o))) >= observed for o in orderings), len(orderings))


@pytest.mark.parametrize(("models", "expected"), [(3, Fraction(1, 3)), (4, Fraction(1, 12)), (5, Fraction(1, 60))])
def test_a_perfect_agreement_of_a_small_panel_has_its_exact_p(models: int, expected: Fraction) -> None:
    """Issue 43: scipy's t approximation said p = 0 for 3 or 4 models in perfect agreement."""
    scores = [0.1 * i for i in range(models)]
    result = rank_agreement(scores, [2 * s for s in scores])
    assert result.p_method == "exact" and result.spearman_rho == pytest.approx(1.0)
    assert (result.spearman_p, result.kendall_p) == pytest.approx((float(expected), float(expected)))
    assert float(oracle_p(list(range(models)), list(range(models)), _spearman_numerator)) == pytest.approx(
        float(expected))


@pytest.mark.filterwarnings("ignore:An input array is constant")
@settings(max_examples=60, deadline=None)
@given(st.integers(3, 6).flatmap(lambda n: st.tuples(st.lists(st.integers(0, 4), min_size=n, max_size=n),
                                                     st.lists(st.integers(0, 4), min_size=n, max_size=n))))
def test_exact_p_values_equal_an_enumeration_of_every_ordering(columns: tuple[list[int], list[int]]) -> None:
    x, y = columns
    result = rank_agreement([float(v) for v in x], [float(v) for v in y])
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert np.isnan(result.spearman_p) and np.isnan(result.kendall_p)
        return
    assert result.p_method == "exact"
    assert result.spearman_p == pytest.approx(float(oracle_p(x, y, _spearman_numerator)), abs=1e-12)
    assert result.kendall_p == pytest.approx(float(oracle_p(x, y, _kendall_numerator)), abs=1e-12)


def test_a_panel_too_large_to_enumerate_gets_scipys_p() -> None:
    x, y = GENERATED[:EXACT_MAX_MODELS + 1], RAW[:EXACT_MAX_MODELS + 1]
    result = rank_agreement(x, y)
    assert result.p_method == "scipy"
    assert (result.spearman_p, result.kendall_p) == (spearmanr(x, y).pvalue, kendalltau(x, y).pvalue)
    assert rank_agreement(x[:-1], y[:-1]).p_method == "exact"


def test_vectorised_coefficients_equal_scipy_row_by_row_ties_included() -> None:
    rng = np.random.default_rng(3)
    first = rng.integers(0, 4, size=(50, 6)).astype(float)  # small integers: many ties
    second = rng.integers(0, 4, size=(50, 6)).astype(float)
    keep = [r for r in range(50) if np.ptp(first[r]) and np.ptp(second[r])]
    rho, tau = spearman_rho(first, second), kendall_tau_b(first, second)
    for r in keep:
        assert rho[r] == pytest.approx(spearmanr(first[r], second[r]).statistic, abs=1e-12)
        assert tau[r] == pytest.approx(kendalltau(first[r], second[r]).statistic, abs=1e-12)
    assert np.isnan(spearman_rho(np.ones(4), np.arange(4.0)))  # a constant column: undefined, as scipy says


def _scores(seed: int, queries: int, strengths: list[float], noise: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(np.array(strengths) + rng.normal(0, noise, size=(queries, len(strengths))), 0, 1)


def _bca(estimate: float, distribution: np.ndarray, jackknife: list[np.ndarray], level: float) -> list[float]:
    """Efron & Tibshirani's BCa interval, written out (eq. 14.14-14.15, one jackknife per stratum)."""
    below = np.mean(distribution < estimate) + np.mean(distribution == estimate) / 2
    z0 = ndtri(below)
    num = sum(np.sum(((len(j) - 1) * (j.mean() - j)) ** 3) / len(j) ** 3 for j in jackknife)
    den = sum(np.sum(((len(j) - 1) * (j.mean() - j)) ** 2) / len(j) ** 2 for j in jackknife)
    a = num / (6 * den ** 1.5)
    alpha = (1 - level) / 2
    levels = [ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (ndtri(alpha), ndtri(1 - alpha))]
    return list(np.quantile(distribution, levels))


def test_bootstrap_intervals_equal_a_straightforward_recomputation_with_the_same_draws() -> None:
    generated = _scores(1, 40, [0.30, 0.32, 0.36, 0.40, 0.41], 0.15)
    human = _scores(2, 25, [0.28, 0.35, 0.33, 0.42, 0.40], 0.15)
    seed, resamples = 7, 500
    # the documented draws: one generator, the generated set's resamples first, then the human set's
    rng = np.random.default_rng(seed)
    g_rows = rng.integers(0, len(generated), size=(resamples, len(generated)))
    h_rows = rng.integers(0, len(human), size=(resamples, len(human)))
    for name, scipy_statistic in (("spearman", spearmanr), ("kendall", kendalltau)):
        draws = np.array([scipy_statistic(generated[g].mean(axis=0), human[h].mean(axis=0)).statistic
                          for g, h in zip(g_rows, h_rows, strict=True)])
        percentile = agreement_intervals(generated, human, method="percentile", n_resamples=resamples, seed=seed)
        estimate = scipy_statistic(generated.mean(axis=0), human.mean(axis=0)).statistic
        assert percentile[name].estimate == pytest.approx(estimate, abs=1e-12)
        assert [percentile[name].low, percentile[name].high] == pytest.approx(
            list(np.quantile(draws, [0.025, 0.975])), abs=1e-12)
        jackknife = [np.array([scipy_statistic(np.delete(generated, i, axis=0).mean(axis=0), human.mean(axis=0))
                               .statistic for i in range(len(generated))]),
                     np.array([scipy_statistic(generated.mean(axis=0), np.delete(human, i, axis=0).mean(axis=0))
                               .statistic for i in range(len(human))])]
        bca = agreement_intervals(generated, human, n_resamples=resamples, seed=seed)[name]
        assert bca.method == "BCa"
        assert [bca.low, bca.high] == pytest.approx(_bca(estimate, draws, jackknife, 0.95), abs=1e-12)


def test_draws_that_tie_every_model_are_counted_and_left_out_of_the_interval() -> None:
    # three models that differ on 2 of 12 generated queries only: a draw that misses both ties them all
    generated = np.tile([[0.5, 0.5, 0.5]], (12, 1))
    generated[0] = [0.9, 0.6, 0.1]
    generated[1] = [0.8, 0.2, 0.4]
    human = _scores(5, 30, [0.5, 0.4, 0.3], 0.2)
    seed, resamples = 3, 400
    rng = np.random.default_rng(seed)
    g_rows = rng.integers(0, 12, size=(resamples, 12))
    h_rows = rng.integers(0, 30, size=(resamples, 30))
    draws = np.array([spearmanr(generated[g].mean(axis=0), human[h].mean(axis=0)).statistic
                      if np.ptp(generated[g].mean(axis=0)) else np.nan for g, h in zip(g_rows, h_rows, strict=True)])
    undefined = int(np.isnan(draws).sum())
    assert undefined > 0
    assert tied_resamples(generated, human, n_resamples=resamples, seed=seed) == undefined
    interval = agreement_intervals(generated, human, method="percentile", n_resamples=resamples, seed=seed)["spearman"]
    assert [interval.low, interval.high] == pytest.approx(list(np.quantile(draws[~np.isnan(draws)], [0.025, 0.975])))


def test_subset_agreement_draws_documented_subsets_and_keeps_a_clear_ranking() -> None:
    strengths = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    generated = _scores(4, 500, strengths, 0.1)
    robust = subset_agreement(generated, strengths, sample_size=200, resamples=30, seed=1)
    assert len(robust.rhos) == 30 and robust.sample_size == 200 and robust.mean > 0.95
    rng = np.random.default_rng(1)
    expected = [spearmanr(generated[rng.choice(500, 200, replace=False)].mean(axis=0), strengths).statistic
                for _ in range(30)]
    assert robust.rhos == pytest.approx(expected, abs=1e-12)
    assert robust.std == pytest.approx(np.std(expected), abs=1e-12)
    reversed_ranking = subset_agreement(generated, strengths[::-1], sample_size=10_000, resamples=3)
    assert reversed_ranking.sample_size == 500 and reversed_ranking.mean == pytest.approx(-1.0)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: rank_agreement([1, 2, 3], [1, 2]), "same models"),
    (lambda: rank_agreement([1, 2], [1, 2]), "at least 3 models"),
    (lambda: agreement_intervals(np.ones((4, 3)), np.ones((4, 4))), "same models"),
    (lambda: subset_agreement(np.ones((4, 3)), [1, 2, 3], sample_size=0), "sample_size"),
])
def test_bad_inputs_are_named(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
