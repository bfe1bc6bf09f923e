"""The files of a co*cktail quality report: ``report.json``, ``report.md`` and the plots' input ``plot_data.json``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airbench_mteb.data.files import atomic_write, make_folder
from airbench_mteb.generation.cocktail.answers import REWRITTEN
from airbench_mteb.generation.cocktail.config import HUMAN
from airbench_mteb.generation.cocktail.quality import K_VALUES, NDCG_KEYS, QualityResult

PLOT_DATA = "plot_data.json"  # read by report/cocktail_quality.py, which this layer may not import


def write_plot_data(out: str | Path, result: QualityResult) -> Path:
    """``plot_data.json`` in ``out``: the per-document values the ``cocktail-quality`` plot draws."""
    make_folder(Path(out))
    path = Path(out) / PLOT_DATA
    with atomic_write(path) as handle:
        json.dump(result.plot_data(), handle, indent=1)
    return path


def write_report(out: str | Path, result: QualityResult, plots: Sequence[Path]) -> dict[str, Any]:
    """``report.json`` and ``report.md`` in ``out``, naming the ``plots`` drawn beside them; return the figures."""
    figures = {**result.figures, "plots": [p.name for p in plots]}
    with atomic_write(Path(out) / "report.json") as handle:
        json.dump(figures, handle, indent=1)
    with atomic_write(Path(out) / "report.md") as handle:
        handle.write(render_markdown(figures, result.manifest))
    return figures


def plus_minus(stats: dict[str, float] | None) -> str:
    return f"{stats['mean']:.3f} ± {stats['std']:.3f}" if stats else "n/a"


def render_markdown(figures: dict[str, Any], manifest: dict[str, Any]) -> str:
    llms = list(figures["sources"])
    lines = [f"# Quality report: {figures['folder']}", "",
             f"{figures['documents']} documents; sources {', '.join(llms)} against {HUMAN} "
             "(after co*cktail, Appendix A.3).", "",
             "## Rewrite outcomes", "",
             "| source | backend:model | temperature | rewritten | other outcomes |", "|---|---|---|---|---|"]
    for source in llms:
        spec, entry = manifest["sources"][source], figures["sources"][source]
        other = ", ".join(f"{k} {v}" for k, v in entry["outcomes"].items() if k != REWRITTEN) or "none"
        lines.append(f"| {source} | {spec['backend']}:{spec['model']} | {spec['temperature']} | "
                     f"{entry['rewritten']} | {other} |")
    lines += ["", "## Text length (words; Figure 5)", "", "| source | mean | median | std |", "|---|---|---|---|",
              *(f"| {s} | {v['mean']:.1f} | {v['median']:.0f} | {v['std']:.1f} |"
                for s, v in figures["lengths"].items()),
              "", "![lengths](lengths.png)", "",
              f"## Terms and semantics of rewritten documents (Figure 6, Figure 7, Table 9; embedder "
              f"{figures['embedder']})", "",
              "| source | Jaccard | overlap | cosine, matching pairs | cosine, random pairs | matching ≥ 0.9 | "
              "identical to human |", "|---|---|---|---|---|---|---|"]
    for source in llms:
        e = figures["sources"][source]
        lines.append(f"| {source} | {plus_minus(e.get('jaccard'))} | {plus_minus(e.get('overlap'))} | "
                     f"{plus_minus(e.get('cosine_matching'))} | {plus_minus(e.get('cosine_random'))} | "
                     f"{e.get('cosine_matching_at_least_0_9', 'n/a')} | {e.get('identical_to_human', 'n/a')} |")
    if "term_similarity.png" in figures["plots"]:
        lines += ["", "![term similarity](term_similarity.png)", "", "![cosine](cosine.png)"]
    lines += ["", "## Each corpus alone (Table 8; NDCG × 100)", "",
              "| model | split | corpus | " + " | ".join(f"@{k}" for k in K_VALUES) + " |",
              "|---|---|---|" + "---|" * len(K_VALUES)]
    for model, splits in figures["sole_corpus"].items():
        for split, settings in splits.items():
            for setting, scores in settings.items():
                lines.append(f"| {model} | {split} | {setting} | "
                             + " | ".join(f"{100 * scores[NDCG_KEYS[k]]:.1f}" for k in K_VALUES) + " |")
    lines += ["", "![sole corpus](sole_corpus.png)", ""]
    return "\n".join(lines)
