"""Plots of a co*cktail quality report (`generate cocktail-report`), after the co*cktail paper (arXiv 2405.16546),
Appendix A.3: text lengths (Figure 5), term Jaccard and overlap (Figure 6), embedding cosine of matching vs random
pairs (Figure 7) and NDCG of each corpus alone (Table 8).

They read ``plot_data.json``, which the report's computation (``generation/cocktail/quality.py``) writes into the
report folder, so ``airbench-mteb report --plot cocktail-quality --results REPORT_FOLDER --out O`` redraws them
without encoding anything again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import read_json
from airbench_mteb.report import ReportRequest, register_plot
from airbench_mteb.report.figures import png, pyplot
from airbench_mteb.report.protocol import Extra, write_files

PLOT_DATA = "plot_data.json"  # named also in generation/cocktail/quality_output.py; neither layer imports the other


def histograms(panels: dict[str, dict[str, Sequence[float]]], xlabel: dict[str, str], bins: int = 30) -> Extra:
    """One panel per entry of ``panels``, each overlaying the histograms of its series."""
    figure, axes = pyplot().subplots(1, len(panels), figsize=(5.5 * len(panels), 3.8), squeeze=False)
    for axis, (title, series) in zip(axes[0], panels.items(), strict=True):
        low = min(min(v) for v in series.values())
        high = max(max(v) for v in series.values())
        edges = np.linspace(low, high if high > low else low + 1, bins + 1)
        for label, values in series.items():
            axis.hist(values, bins=edges, alpha=0.55, label=label)
        axis.set_title(title)
        axis.set_xlabel(xlabel[title])
        axis.set_ylabel("documents")
        axis.legend(fontsize=8)
    figure.tight_layout()
    return png(figure, dpi=110)


def sole_corpus_plot(table: dict[str, Any], sources: Sequence[str], k_values: Sequence[int]) -> Extra:
    """NDCG@k bars of each source's corpus alone, one panel per model and split (Table 8)."""
    rows = [(model, split) for model, splits in table.items() for split in splits]
    figure, axes = pyplot().subplots(1, len(rows), figsize=(5.5 * len(rows), 3.8), squeeze=False)
    width = 0.8 / len(sources)
    for axis, (model, split) in zip(axes[0], rows, strict=True):
        for i, source in enumerate(sources):
            values = [100 * table[model][split][source][f"ndcg_at_{k}"] for k in k_values]
            axis.bar(np.arange(len(k_values)) + i * width, values, width, label=source)
        axis.set_xticks(np.arange(len(k_values)) + width * (len(sources) - 1) / 2, [f"@{k}" for k in k_values])
        axis.set_ylabel("NDCG")
        axis.set_title(f"{model.split('/')[-1]}, {split}: each corpus alone", fontsize=9)
        axis.set_ylim(0, 125)  # room for the legend above the bars
        axis.legend(fontsize=8, loc="upper center", ncol=len(sources))
    figure.tight_layout()
    return png(figure, dpi=110)


def draw_quality_plots(data: dict[str, Any], out: Path) -> list[Path]:
    """``lengths.png``, ``term_similarity.png`` and ``cosine.png`` (when some source has rewrites) and
    ``sole_corpus.png`` in ``out``, from the content of ``plot_data.json``."""
    plots = {"lengths.png": histograms({"Text length": data["lengths"]}, {"Text length": "words"})}
    if data["cosine"]:
        plots["term_similarity.png"] = histograms(data["term_similarity"],
                                                  {"Jaccard similarity": "Jaccard", "Overlap": "overlap"})
        plots["cosine.png"] = histograms({"Embedding cosine": data["cosine"]},
                                         {"Embedding cosine": f"cosine ({data['embedder']})"})
    plots["sole_corpus.png"] = sole_corpus_plot(data["sole_corpus"], data["sources"], data["k_values"])
    return write_files(out, plots)


def read_plot_data(folder: Path) -> dict[str, Any]:
    path = folder / PLOT_DATA
    if not path.is_file():
        raise DatasetError(f"not a folder written by `generate cocktail-report` (no {PLOT_DATA})", path=path)
    return read_json(path)  # malformed JSON: a DatasetError naming the file and line


@register_plot("cocktail-quality")
def cocktail_quality_plot(request: ReportRequest) -> list[Path]:
    """Redraw the plots of a `generate cocktail-report` folder (given as ``--results``)."""
    return draw_quality_plots(read_plot_data(request.results_folder("cocktail-quality")), request.out)
