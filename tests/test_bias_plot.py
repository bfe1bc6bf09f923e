"""`report --plot bias` draws what its CSV holds: each dataset's conventional Relative Δ and, beside it, the
tie-neutral Δ, each with its interval (read back from the drawn figure's data, not its pixels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from airbench_mteb.report.bias import CONVENTIONAL, TIE_NEUTRAL, BiasPoint, bias_marks, draw

pytest.importorskip("matplotlib")

WITH_TIES = BiasPoint("m", "CocktailNFCorpus", "test", "llm", ndcg=40.0, relative_delta=10.0, reference_share=0.5,
                      delta_ci_low=-5.0, delta_ci_high=25.0, delta_p_value=0.2, tie_neutral_delta=3.0,
                      tie_neutral_ci_low=-12.0, tie_neutral_ci_high=18.0, tie_neutral_p_value=0.6)
WITHOUT_TIES = BiasPoint("m", "CocktailNQUTD", "test", "llm", ndcg=60.0, relative_delta=-4.0, reference_share=0.4)


def test_each_point_gives_its_conventional_and_tie_neutral_marks() -> None:
    marks = bias_marks([WITH_TIES, WITHOUT_TIES])
    assert [(m.task, m.kind, m.delta, m.ndcg, m.ci_low, m.ci_high) for m in marks] == [
        ("CocktailNFCorpus", CONVENTIONAL, 10.0, 40.0, -5.0, 25.0),
        ("CocktailNFCorpus", TIE_NEUTRAL, 3.0, 40.0, -12.0, 18.0),
        ("CocktailNQUTD", CONVENTIONAL, -4.0, 60.0, None, None),  # a result written without the tie-neutral Δ
    ]


def test_the_figure_draws_both_deltas_with_their_intervals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, PathCollection

    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)
    draw([WITH_TIES, WITHOUT_TIES], tmp_path / "bias.png")
    (figure,) = drawn
    axes = figure.axes[0]
    xs = sorted(float(x) for collection in axes.collections if isinstance(collection, PathCollection)
                for x, _ in np.asarray(collection.get_offsets()))
    # the two conventional Δs, the tie-neutral Δ, the model's mean (3.0) of the conventional ones
    assert xs == pytest.approx(sorted([10.0, -4.0, 3.0, 3.0]))
    bars = sorted(tuple(sorted(float(x) for x in segment[:, 0])) for collection in axes.collections
                  if isinstance(collection, LineCollection) for segment in collection.get_segments())
    assert bars == [(-12.0, 18.0), (-5.0, 25.0)]
    low, high = axes.get_xlim()
    assert low <= -12.0 and high >= 25.0  # the tie-neutral interval, drawn a few points lower, is in view
    plt.close(figure)
