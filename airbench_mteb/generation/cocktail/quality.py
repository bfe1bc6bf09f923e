"""Quality report of a generated co*cktail-style folder, after the co*cktail paper (arXiv 2405.16546), Appendix A.3.

For every LLM source against the human corpus: length distributions (Figure 5, Table 1's average
lengths), term Jaccard and overlap of each rewrite with its original (Figure 6), embedding cosine
of matching vs random <human, LLM> pairs (Figure 7, Table 9) and the retrieval quality of models on
each source's corpus alone (Table 8, through the source-bias task). Term and embedding figures use
the documents each LLM actually rewrote: refused, unparsed and failed rows hold the human text and
would only inflate them. Output: ``report.md``, ``report.json`` and PNG plots.
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.catalog.user import COCKTAIL_MANIFEST
from airbench_mteb.data.cocktail_source import read_source_corpora
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, make_folder, read_jsonl
from airbench_mteb.generation.cocktail.answers import REWRITTEN
from airbench_mteb.generation.cocktail.config import HUMAN
from airbench_mteb.generation.cocktail.sampling import word_count
from airbench_mteb.generation.errors import GenerationError

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "airbench-mteb/all-MiniLM-L6-v2"
K_VALUES = (1, 3, 5, 10)
_TERM = re.compile(r"\w+")


def terms(text: str) -> set[str]:
    return set(_TERM.findall(text.lower()))


def jaccard(generated: set[str], human: set[str]) -> float:
    r""":math:`|d^G \cap d^H| / |d^G \cup d^H|` (the co*cktail paper, arXiv 2405.16546, A.3)."""
    union = generated | human
    return len(generated & human) / len(union) if union else 1.0


def overlap(generated: set[str], human: set[str]) -> float:
    r""":math:`|d^G \cap d^H| / |d^H|`: the share of the original's terms the rewrite keeps (the co*cktail paper, arXiv 2405.16546, A.3)."""
    return len(generated & human) / len(human) if human else 1.0


def random_partners(n: int, seed: int) -> list[int]:
    """For each i, a random j != i: the <human i, LLM j> pairs Table 9 compares matching pairs with."""
    if n < 2:
        raise GenerationError("random pairs need at least two rewritten documents")
    rng = random.Random(f"cocktail-random-pairs:{seed}")
    return [(i + rng.randrange(1, n)) % n for i in range(n)]


def read_folder(folder: Path) -> tuple[dict[str, Any], dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(manifest, ``{source: {id: text}}`` with human first, ``{LLM source: {id: rewrite outcome}}``)."""
    manifest_path = folder / COCKTAIL_MANIFEST
    if not manifest_path.is_file():
        raise DatasetError(f"not a folder made by `generate cocktail` (no {COCKTAIL_MANIFEST})", path=manifest_path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    sources = read_source_corpora(folder, {source: source for source in [HUMAN, *manifest["sources"]]})
    texts = {source: dict(zip(corpus["id"], corpus["text"], strict=True)) for source, corpus in sources.corpora.items()}
    outcomes = {source: rewrite_outcomes(sources.paths[source]) for source in manifest["sources"]}
    return manifest, texts, outcomes


def rewrite_outcomes(path: Path) -> dict[str, str]:
    """``{id: metadata.rewrite}`` of a generated source corpus: the generator's flag, which corpus readers drop."""
    return {row["_id"]: (row.get("metadata") or {}).get("rewrite", "") for _, row in read_jsonl(path)}


def sole_corpus_scores(folder: Path, sources: Sequence[str], models: Sequence[str]) -> dict[str, Any]:
    """Table 8: ``{model: {split: {setting: {ndcg_at_k: value}}}}`` with each source's corpus alone."""
    import mteb

    from airbench_mteb.registry import resolve_model
    from airbench_mteb.tasks.cocktail import make_source_bias_task

    task = make_source_bias_task(folder, list(sources), name=f"CocktailGenerated_{folder.name}",
                                 settings=list(sources))
    table: dict[str, Any] = {}
    for name in models:
        logger.info("scoring %s on each corpus alone", name)
        model = mteb.get_model(resolve_model(name))
        result = mteb.evaluate(model, task, cache=None, show_progress_bar=False).task_results[0]
        table[name] = {split: {s["hf_subset"]: {f"ndcg_at_{k}": s[f"ndcg_at_{k}"] for k in K_VALUES}
                               for s in subsets}
                       for split, subsets in result.scores.items()}
    return table


def _stats(values: Sequence[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=float)
    return {"mean": round(float(array.mean()), 4), "std": round(float(array.std()), 4),
            "median": round(float(np.median(array)), 4), "n": int(array.size)}


def _histograms(path: Path, panels: dict[str, dict[str, Sequence[float]]], xlabel: dict[str, str],
                bins: int = 30) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 3.8), squeeze=False)
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
    with atomic_write(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)
    return path


def _sole_corpus_plot(path: Path, table: dict[str, Any], sources: Sequence[str]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(model, split) for model, splits in table.items() for split in splits]
    figure, axes = plt.subplots(1, len(rows), figsize=(5.5 * len(rows), 3.8), squeeze=False)
    width = 0.8 / len(sources)
    for axis, (model, split) in zip(axes[0], rows, strict=True):
        for i, source in enumerate(sources):
            values = [100 * table[model][split][source][f"ndcg_at_{k}"] for k in K_VALUES]
            axis.bar(np.arange(len(K_VALUES)) + i * width, values, width, label=source)
        axis.set_xticks(np.arange(len(K_VALUES)) + width * (len(sources) - 1) / 2, [f"@{k}" for k in K_VALUES])
        axis.set_ylabel("NDCG")
        axis.set_title(f"{model.split('/')[-1]}, {split}: each corpus alone", fontsize=9)
        axis.set_ylim(0, 125)  # room for the legend above the bars
        axis.legend(fontsize=8, loc="upper center", ncol=len(sources))
    figure.tight_layout()
    with atomic_write(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)
    return path


def quality_report(folder: str | Path, out: str | Path, *, models: Sequence[str] = (DEFAULT_MODEL,),
                   embedder: str = "minilm", seed: int = 0) -> dict[str, Any]:
    """Write ``report.md``, ``report.json`` and the plots into ``out``; return the figures."""
    from airbench_mteb.generation.shared_models import make_encoder

    folder, out = Path(folder).resolve(), Path(out)
    make_folder(out)
    manifest, texts, outcomes = read_folder(folder)
    llms = list(manifest["sources"])
    ids = list(texts[HUMAN])
    encoder = make_encoder(embedder)
    human_vectors = dict(zip(ids, encoder.encode([texts[HUMAN][i] for i in ids], is_query=False), strict=True))
    figures: dict[str, Any] = {"folder": str(folder), "documents": len(ids), "embedder": encoder.name,
                               "lengths": {}, "sources": {}}
    lengths = {source: [word_count(texts[source][i]) for i in ids] for source in texts}
    figures["lengths"] = {source: _stats(values) for source, values in lengths.items()}
    term_panels: dict[str, dict[str, list[float]]] = {"Jaccard similarity": {}, "Overlap": {}}
    cosine_panel: dict[str, list[float]] = {}
    for source in llms:
        rewritten = [i for i in ids if outcomes[source][i] == REWRITTEN]
        outcome_counts = {name: sum(1 for i in ids if outcomes[source][i] == name)
                          for name in sorted(set(outcomes[source].values()))}
        entry: dict[str, Any] = {"outcomes": outcome_counts, "rewritten": len(rewritten)}
        if len(rewritten) >= 2:
            pairs = [(terms(texts[source][i]), terms(texts[HUMAN][i])) for i in rewritten]
            jaccards = [jaccard(g, h) for g, h in pairs]
            overlaps = [overlap(g, h) for g, h in pairs]
            llm_vectors = encoder.encode([texts[source][i] for i in rewritten], is_query=False)
            human = np.stack([human_vectors[i] for i in rewritten])
            matching = np.sum(human * llm_vectors, axis=1)
            partners = random_partners(len(rewritten), seed)
            random_pairs = np.sum(human * llm_vectors[partners], axis=1)
            entry.update(jaccard=_stats(jaccards), overlap=_stats(overlaps),
                         cosine_matching=_stats(matching), cosine_random=_stats(random_pairs),
                         cosine_matching_at_least_0_9=round(float(np.mean(matching >= 0.9)), 4),
                         identical_to_human=sum(texts[source][i] == texts[HUMAN][i] for i in rewritten))
            term_panels["Jaccard similarity"][source] = jaccards
            term_panels["Overlap"][source] = overlaps
            cosine_panel[f"{source}: matching"] = matching.tolist()
            cosine_panel[f"{source}: random"] = random_pairs.tolist()
        figures["sources"][source] = entry
    figures["sole_corpus"] = sole_corpus_scores(folder, [HUMAN, *llms], models)
    plots = [_histograms(out / "lengths.png", {"Text length": lengths}, {"Text length": "words"})]
    if cosine_panel:
        plots.append(_histograms(out / "term_similarity.png", term_panels,
                                 {"Jaccard similarity": "Jaccard", "Overlap": "overlap"}))
        plots.append(_histograms(out / "cosine.png", {"Embedding cosine": cosine_panel},
                                 {"Embedding cosine": f"cosine ({encoder.name})"}))
    plots.append(_sole_corpus_plot(out / "sole_corpus.png", figures["sole_corpus"], [HUMAN, *llms]))
    figures["plots"] = [p.name for p in plots]
    with atomic_write(out / "report.json") as handle:
        json.dump(figures, handle, indent=1)
    with atomic_write(out / "report.md") as handle:
        handle.write(render_markdown(figures, manifest))
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
                             + " | ".join(f"{100 * scores[f'ndcg_at_{k}']:.1f}" for k in K_VALUES) + " |")
    lines += ["", "![sole corpus](sole_corpus.png)", ""]
    return "\n".join(lines)
