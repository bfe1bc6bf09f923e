"""Spearman consistency of generated vs human-labelled rankings (AIR-Bench section 4.1)."""

from __future__ import annotations

import random

import pytest

from airbench_mteb.generation.consistency import rank_consistency, resampled_consistency

# seed 002's MS MARCO table: 17 models, human (raw) and generated scores
RAW = [48, 45.232, 45.119, 44.13, 44.122, 43.787, 43.104, 43.056, 42.553, 42.388, 42.253, 41.675, 39.887, 39.565,
       36.57, 33.637, 26.211]
GENERATED = [59.625, 55.26, 54.431, 52.581, 55.513, 59.015, 51.456, 51.438, 51.528, 54.292, 47.989, 48.102,
             51.112, 54.404, 47.127, 42.107, 34.155]


def test_reproduces_the_seed_ms_marco_consistency() -> None:
    models = [f"m{i}" for i in range(17)]
    result = rank_consistency(dict(zip(models, RAW, strict=True)), dict(zip(models, GENERATED, strict=True)))
    assert result.rho == pytest.approx(0.8210784313725491)
    assert result.p_value == pytest.approx(5.346351701144889e-05, rel=1e-6)


def test_resampling_keeps_the_ranking_when_per_query_scores_agree_with_it() -> None:
    rng = random.Random(0)
    human = {f"m{i}": float(10 - i) for i in range(6)}
    # model i scores ~ (10 - i) on every query, with noise: the ranking survives every resample
    per_query = {m: {f"q{j}": score + rng.gauss(0, 0.5) for j in range(500)} for m, score in human.items()}
    robust = resampled_consistency(human, per_query, sample_size=200, resamples=30, seed=1)
    assert len(robust.rhos) == 30 and robust.sample_size == 200
    assert robust.mean > 0.95
    shuffled = resampled_consistency(human, {m: per_query[f"m{5 - int(m[1:])}"] for m in human},
                                     sample_size=200, resamples=5)
    assert shuffled.mean < -0.95  # reversed model scores: reversed ranking


def test_mismatched_models_are_an_error() -> None:
    with pytest.raises(ValueError, match="different models"):
        rank_consistency({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "d": 3})
