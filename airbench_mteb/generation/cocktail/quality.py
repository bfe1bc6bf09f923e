"""Quality report of a generated co*cktail-style folder, after the co*cktail paper (arXiv 2405.16546), Appendix A.3.

For every LLM source against the human corpus: length distributions (Figure 5, Table 1's average
lengths), term Jaccard and overlap of each rewrite with its original (Figure 6), embedding cosine
of matching vs random <human, LLM> pairs (Figure 7, Table 9) and the retrieval quality of models on
each source's corpus alone (Table 8, through the source-bias task). Term and embedding figures use
the documents each LLM actually rewrote: refused, unparsed and failed rows hold the human text and
would only inflate them. :mod:`.quality_output` writes the figures (``report.json``, ``report.md``) and the
per-document values the plots of ``report/cocktail_quality.py`` draw (``plot_data.json``).
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from airbench_mteb.catalog.user import COCKTAIL_MANIFEST
from airbench_mteb.data.cocktail_source import read_source_corpora
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import read_jsonl
from airbench_mteb.generation.cocktail.answers import REWRITTEN
from airbench_mteb.generation.cocktail.config import HUMAN
from airbench_mteb.generation.cocktail.sampling import word_count
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.metrics.keys import MetricKey

if TYPE_CHECKING:
    from airbench_mteb.generation.shared_models import Encoder

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "airbench-mteb/all-MiniLM-L6-v2"
K_VALUES = (1, 3, 5, 10)
NDCG_KEYS = {k: str(MetricKey("ndcg", k)) for k in K_VALUES}  # MTEB's keys of Table 8's NDCG@k
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
        table[name] = {split: {s["hf_subset"]: {key: s[key] for key in NDCG_KEYS.values()}
                               for s in subsets}
                       for split, subsets in result.scores.items()}
    return table


def _stats(values: Sequence[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=float)
    return {"mean": round(float(array.mean()), 4), "std": round(float(array.std()), 4),
            "median": round(float(np.median(array)), 4), "n": int(array.size)}


@dataclass(frozen=True)
class QualityResult:
    """The figures of ``report.json`` and the per-document values its plots draw."""

    manifest: dict[str, Any]  # the generated folder's manifest (LLM sources and their settings)
    figures: dict[str, Any]  # report.json without its "plots" entry
    lengths: dict[str, list[int]]  # source -> words per document (human first)
    term_panels: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # panel -> source -> values
    cosine_panel: dict[str, list[float]] = field(default_factory=dict)  # "<source>: matching|random" -> values

    def plot_data(self) -> dict[str, Any]:
        """What ``plot_data.json`` holds: everything the quality plots need, nothing they must recompute."""
        return {"embedder": self.figures["embedder"], "sources": list(self.lengths), "k_values": list(K_VALUES),
                "lengths": self.lengths, "term_similarity": self.term_panels, "cosine": self.cosine_panel,
                "sole_corpus": self.figures["sole_corpus"]}


def _source_figures(source: str, ids: Sequence[str], texts: dict[str, dict[str, str]], outcomes: dict[str, str],
                    human_vectors: dict[str, np.ndarray], encoder: Encoder, seed: int
                    ) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """One LLM source's report.json entry and its per-document values (Jaccard, Overlap, cosines)."""
    rewritten = [i for i in ids if outcomes[i] == REWRITTEN]
    outcome_counts = {name: sum(1 for i in ids if outcomes[i] == name) for name in sorted(set(outcomes.values()))}
    entry: dict[str, Any] = {"outcomes": outcome_counts, "rewritten": len(rewritten)}
    if len(rewritten) < 2:
        return entry, {}
    pairs = [(terms(texts[source][i]), terms(texts[HUMAN][i])) for i in rewritten]
    jaccards = [jaccard(g, h) for g, h in pairs]
    overlaps = [overlap(g, h) for g, h in pairs]
    llm_vectors = encoder.encode([texts[source][i] for i in rewritten], is_query=False)
    human = np.stack([human_vectors[i] for i in rewritten])
    matching = np.sum(human * llm_vectors, axis=1)
    random_pairs = np.sum(human * llm_vectors[random_partners(len(rewritten), seed)], axis=1)
    entry.update(jaccard=_stats(jaccards), overlap=_stats(overlaps),
                 cosine_matching=_stats(matching), cosine_random=_stats(random_pairs),
                 cosine_matching_at_least_0_9=round(float(np.mean(matching >= 0.9)), 4),
                 identical_to_human=sum(texts[source][i] == texts[HUMAN][i] for i in rewritten))
    return entry, {"jaccard": jaccards, "overlap": overlaps, "matching": matching.tolist(),
                   "random": random_pairs.tolist()}


def compute_quality(folder: str | Path, *, models: Sequence[str] = (DEFAULT_MODEL,), embedder: str = "minilm",
                    seed: int = 0) -> QualityResult:
    """The quality figures of a generated folder: lengths, term measures, cosines, each corpus alone."""
    from airbench_mteb.generation.shared_models import make_encoder

    folder = Path(folder).resolve()
    manifest, texts, outcomes = read_folder(folder)
    llms = list(manifest["sources"])
    ids = list(texts[HUMAN])
    encoder = make_encoder(embedder)
    human_vectors = dict(zip(ids, encoder.encode([texts[HUMAN][i] for i in ids], is_query=False), strict=True))
    lengths = {source: [word_count(texts[source][i]) for i in ids] for source in texts}
    figures: dict[str, Any] = {"folder": str(folder), "documents": len(ids), "embedder": encoder.name,
                               "lengths": {source: _stats(values) for source, values in lengths.items()},
                               "sources": {}}
    term_panels: dict[str, dict[str, list[float]]] = {"Jaccard similarity": {}, "Overlap": {}}
    cosine_panel: dict[str, list[float]] = {}
    for source in llms:
        figures["sources"][source], values = _source_figures(source, ids, texts, outcomes[source], human_vectors,
                                                             encoder, seed)
        if values:
            term_panels["Jaccard similarity"][source] = values["jaccard"]
            term_panels["Overlap"][source] = values["overlap"]
            cosine_panel[f"{source}: matching"] = values["matching"]
            cosine_panel[f"{source}: random"] = values["random"]
    figures["sole_corpus"] = sole_corpus_scores(folder, [HUMAN, *llms], models)
    return QualityResult(manifest, figures, lengths, term_panels if cosine_panel else {}, cosine_panel)
