"""Cocktail's 16 mixed-source datasets as MTEB tasks, and source-bias tasks for any multi-source folder.

A source-bias task's subsets are evaluation settings (co*cktail paper, arXiv 2405.16546,
section 4, and the authors' tool), each on ``eng-Latn`` data unless told otherwise:

* one per source, e.g. ``human`` and ``llm``: that source's corpus alone;
* ``mixed``: every source's corpus in one index (ids ``<id>-<corpus file stem>``), ranked once.
  MTEB's scores count every copy of a relevant document as relevant, so ``ndcg_at_1`` (the main
  score) is the paper's ranking performance (Tables 2, 13, 15: at k = 1 it is
  NDCG_Human@1 + NDCG_LLM@1). The same ranking is scored again per source, under
  ``source_bias``: ``ndcg_at_<k>_<source>``, ``map_at_<k>_<source>``, the paper's Relative Δ
  ``relative_delta_{ndcg,map}_at_<k>_<source>`` (reference source vs ``source``; Tables 3, 14,
  16) and ``share_at_<k>_<source>``, the source's share of the top k; each Relative Δ with its
  bootstrap CI and "no bias" p-value (``<Δ key>_ci_low``/``_ci_high``/``_p_value``) unless CIs are off.
  Beside every one of these keys its tie-neutral form (``<key>_tie_neutral``: expected over every order of
  exactly tied scores, which trec_eval orders by document id), the conventional Δ with every tie between
  sources broken toward the reference and toward ``source`` (``<Δ key>_ties_to_<source>``), and the
  queries whose top k such a tie decides (``tie_decided_queries_at_<k>``, ``tie_decided_share_at_<k>``);
  see :mod:`airbench_mteb.metrics.tie_neutral`;
  Under ``source_bias`` too, the qrels-free source exposure of the same ranking (Huang et al., arXiv 2604.06163):
  ``ndsr_at_<k>_<source>``, ``delta_ndsr_at_<k>_<source>`` with its one-sample t-test ``<key>_p_value``, each
  also ``_tie_neutral``; ties ranked by document id ascending as in that paper (``ndsr_tie_order``), not as
  trec_eval; see :mod:`airbench_mteb.metrics.ndsr`;
* ``mixed-all-relevant``: the same corpus and scores as ``mixed`` without the per-source
  scoring (the paper's "human+llama2" run).

A folder without qrels (a user's own mixed corpus, :func:`make_source_bias_task`) is measured in the ``mixed``
setting only, by source exposure: every query of ``queries.jsonl`` is searched and ``source_bias`` holds the
ΔNDSR keys alone; the main score is NaN, as for any split without qrels.

Pick settings with ``mteb.get_task(name, hf_subsets=[...])`` or ``airbench-mteb bias --settings``.
Titles are dropped, as in the paper, unless the task's ``keep_titles`` is true (constructor
argument, or ``AIRBENCH_MTEB_KEEP_TITLES=1``). A document has the same id and text in every
setting, so the embedding cache encodes it once for all four.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache, partial
from pathlib import Path
from typing import Any

from mteb import Benchmark

from airbench_mteb.catalog import CocktailEntry, cocktail_entries, user_catalog
from airbench_mteb.catalog.cocktail import COCKTAIL_BENCHMARK, check_sources
from airbench_mteb.catalog.entries import LOCAL_REVISION, task_name_part, warn_if_unpinned
from airbench_mteb.catalog.user import CocktailFolderEntry
from airbench_mteb.data import data_dir
from airbench_mteb.data.cocktail_source import (
    MIXED,
    MultiSourceData,
    SourceCorpora,
    corpus_ids,
    doc_sources,
    hub_folder,
    mirror_folder,
    multi_source_files,
    read_multi_source_split,
    read_source_corpora,
    setting_data,
    settings_of,
)
from airbench_mteb.data.errors import OptionError
from airbench_mteb.data.fingerprint import files_fingerprint
from airbench_mteb.data.per_query import QueryScores
from airbench_mteb.data.retrieval_data import RetrievalData
from airbench_mteb.metrics.bias_uncertainty import with_uncertainty
from airbench_mteb.metrics.ndsr import exposure_scores, ndsr_vectors, source_exposure_scores
from airbench_mteb.metrics.per_query import per_source_query_scores
from airbench_mteb.metrics.resampling import configured_resampling
from airbench_mteb.metrics.source_bias import flatten, source_bias
from airbench_mteb.settings import current_settings
from airbench_mteb.tasks.base import PluginRetrievalTask
from airbench_mteb.tasks.closed_book import CLOSED_BOOK, search_split
from airbench_mteb.tasks.factory import build_task_class, expose
from airbench_mteb.tasks.selection import check_selection
from airbench_mteb.tasks.statistics import split_of_subsets, subset_sizes

COCKTAIL_REFERENCE = "https://aclanthology.org/2024.findings-acl.421"
SOURCES_TASK_PREFIX = "SourceBias_"  # the default name of a task `bias --sources` makes (never registered)
# One line per field, as MTEB's citation test wants (bibtexparser 1.x form); a trailing \ joins long ones.
COCKTAIL_CITATION = """
@inproceedings{dai2024cocktail,
  author = {Dai, Sunhao and Liu, Weihao and Zhou, Yuqi and Pang, Liang and Ruan, Rongju and Wang, Gang \
and Dong, Zhenhua and Xu, Jun and Wen, Ji-Rong},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2024},
  pages = {7052--7074},
  publisher = {Association for Computational Linguistics},
  title = {Cocktail: A Comprehensive Information Retrieval Benchmark with {LLM}-Generated Documents Integration},
  url = {https://aclanthology.org/2024.findings-acl.421},
  year = {2024},
}
"""


class SourceBiasTask(PluginRetrievalTask):
    """Base of the source-bias tasks: a multi-source folder evaluated in every setting.

    Subclasses set ``sources`` (``(label, corpus file stem)`` pairs, the reference source
    first) and implement :meth:`dataset_folder`.
    """

    sources: tuple[tuple[str, str], ...]
    labelled: bool = True  # False: a folder without qrels, measured by source exposure (ΔNDSR) only
    # Cocktail reports k = 1, 3, 5; its scripts also evaluate 10 and 100. Retrieval keeps the top 100.
    k_values = (1, 3, 5, 10, 100)

    def __init__(self, *args: Any, keep_titles: bool | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keep_titles = current_settings().keep_titles if keep_titles is None else keep_titles
        self._corpora: SourceCorpora | None = None
        self._splits: dict[str, MultiSourceData] = {}
        self._doc_sources: dict[str, str] = {}

    def dataset_folder(self) -> Path:
        raise NotImplementedError

    @property
    def stems(self) -> dict[str, str]:
        return dict(self.sources)

    def data_revision(self) -> str:
        """``files-<fingerprint>`` of the content of every file the task's splits read, of keep-titles and of
        which label stands for which corpus file (the reference first): the same files under swapped labels
        are other subsets, so their results must never be taken for each other's."""
        files = multi_source_files(self.dataset_folder(), list(self.stems.values()), self.metadata.eval_splits)
        return "files-" + files_fingerprint(files, keep_titles=self.keep_titles, sources=self.sources)

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        if self._corpora is None:
            self._corpora = read_source_corpora(self.dataset_folder(), self.stems, keep_titles=self.keep_titles)
            reference = next(iter(self._corpora.corpora.values()))
            self._doc_sources = doc_sources(self.stems, corpus_ids(reference).to_pylist())
        if split not in self._splits:
            self._splits[split] = read_multi_source_split(self._corpora, split, labelled=self.labelled)
        return setting_data(self._splits[split], self.stems, hf_subset)

    def query_scores(self, scores: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                     results: Mapping[str, Mapping[str, float]], hf_subset: str) -> QueryScores:
        """The kept per-query values; in the mixed setting also each source's NDCG@k and MAP@k per query.

        Each source is scored over the queries pytrec_eval scores against that source's copies (judged on them,
        relevance 0 only included), as MTEB would score a task of those qrels and co*cktail computes NDCG_Human
        and NDCG_LLM; every judged document has a copy in each source with the same label, so that set is the
        mixed subset's own (``per_source_query_scores``), and each Relative Δ pairs a query's scores of one ranking.
        """
        kept = super().query_scores(scores, qrels, results, hf_subset)
        if hf_subset != MIXED:
            return kept
        by_source = per_source_query_scores(qrels, results, self._doc_sources, [label for label, _ in self.sources],
                                            self.k_values)
        return replace(kept, by_source={source: QueryScores(ids, vectors) for source, (ids, vectors) in by_source.items()})

    def scores_from(self, kept: QueryScores, qrels: Mapping[str, Mapping[str, int]],
                    results: Mapping[str, Mapping[str, float]], hf_split: str, hf_subset: str) -> dict[str, Any]:
        """The base's scores; in the mixed setting also ``source_bias``, each Relative Δ's uncertainty from the
        per-source vectors of ``kept`` (:meth:`query_scores`)."""
        intervals = super().scores_from(kept, qrels, results, hf_split, hf_subset)
        if hf_subset != MIXED:
            return intervals
        labels = [label for label, _ in self.sources]
        bias = source_bias(qrels, results, self._doc_sources, labels, self.k_values)
        resampling = configured_resampling()
        if resampling is not None:
            by_source = {source: (scores.query_ids, scores.metrics) for source, scores in kept.by_source.items()}
            bias = with_uncertainty(bias, by_source, resampling)
        exposure = source_exposure_scores(results, self._doc_sources, labels, self.k_values)
        return {**intervals, "source_bias": {**flatten(bias), **exposure}}

    def evaluate_closed_book(self, model: Any, data_split: Any, *, hf_split: str, hf_subset: str, encode_kwargs: Any,
                             prediction_folder: Path | None = None, num_proc: int | None = None) -> dict[str, Any]:
        """The ``mixed`` setting of a split without qrels: every query searched, its source exposure (ΔNDSR, per
        query kept for the results file) under ``source_bias``, the main score NaN; other settings as the base's."""
        if hf_subset != MIXED:
            return super().evaluate_closed_book(model, data_split, hf_split=hf_split, hf_subset=hf_subset,
                                                encode_kwargs=encode_kwargs, prediction_folder=prediction_folder,
                                                num_proc=num_proc)
        results = search_split(self, model, data_split, hf_split=hf_split, hf_subset=hf_subset,
                               encode_kwargs=encode_kwargs, num_proc=num_proc)
        if prediction_folder is not None:
            self.save_predictions(results, model, prediction_folder, hf_subset=hf_subset, hf_split=hf_split)
        labels = [label for label, _ in self.sources]
        query_ids = tuple(sorted(results))
        vectors = ndsr_vectors(results, self._doc_sources, labels, self.k_values, query_ids)
        book = {"reason": "no qrels: source exposure (delta_ndsr) only", "queries": len(query_ids),
                "top_k": max((len(docs) for docs in results.values()), default=0),
                "predictions": None if prediction_folder is None else str(self.predictions_path(prediction_folder)),
                "next": "add qrels/<split>.tsv to the folder for ranking performance and Relative Δ"}
        return {self.metadata.main_score: float("nan"), "source_bias": exposure_scores(vectors, labels, self.k_values),
                CLOSED_BOOK: book, **self.keep_query_scores(hf_split, hf_subset, QueryScores(query_ids, vectors))}


def eval_langs(labels: Sequence[str], languages: Sequence[str] = ("eng-Latn",)) -> dict[str, list[str]]:
    """One MTEB subset per evaluation setting, all in ``languages``."""
    return {setting: list(languages) for setting in settings_of(list(labels))}


# --- the Cocktail datasets ---------------------------------------------------------------------

class CocktailTask(SourceBiasTask):
    """Base of the generated Cocktail tasks: one catalog entry, from the local mirror or the hub zip."""

    entry: CocktailEntry

    def dataset_folder(self) -> Path:
        root = data_dir()
        if root is not None:
            return mirror_folder(self.entry, root)
        warn_if_unpinned(self.entry.revision, f"co*cktail task {self.entry.task_name}")
        return hub_folder(self.entry)


def _description(entry: CocktailEntry) -> str:
    return (f"Cocktail {entry.title} ({entry.domain}, {entry.relevance} relevance, {entry.test_queries:,} queries in "
            f"the paper's {entry.paper_split} split): the {entry.title} corpus ({entry.corpus_size:,} human-written "
            f"documents; seed data {entry.source_url}, {entry.source_license}) "
            "mixed with a Llama-2-7b-chat rewrite of every document, both copies carrying the original relevance "
            "labels. Measures ranking performance and source bias (preference for LLM-generated over "
            "human-written text). Subsets are the settings: 'human', 'llm' (one corpus alone), 'mixed' (both; "
            "every copy relevant, plus per-source NDCG/MAP, Relative Δ and top-k shares under 'source_bias'), "
            "'mixed-all-relevant' (both; every copy relevant).")


def paper_statistics(entry: CocktailEntry) -> dict[str, Any]:
    """Each split's sizes from the co*cktail paper (arXiv 2405.16546, Table 1), per setting.

    A setting searches one source's corpus or, mixed, every source's copy of it, each copy relevant where
    the original is. Known for every split: documents and queries. The paper's split also has its relevant
    documents per query ("Avg. D/Q", given to one decimal); their number is derived from it (average times
    queries, rounded). Text lengths are left out: the paper gives words, MTEB counts characters.
    """
    labels = [label for label, _ in entry.sources]
    copies = {setting: 1 if setting in labels else len(labels) for setting in settings_of(labels)}
    statistics = {}
    for split, queries in entry.split_queries().items():
        per_query = entry.relevant_per_query if split == entry.paper_split else None
        statistics[split] = split_of_subsets({
            setting: subset_sizes(n * entry.corpus_size, queries,
                                  None if per_query is None else n * round(per_query * queries),
                                  None if per_query is None else n * per_query)
            for setting, n in copies.items()})
    return statistics


def make_task_class(entry: CocktailEntry) -> type[CocktailTask]:
    """Build the task class of one catalog entry (a real, importable class).

    Its statistics: computed ones shipped in the package where the data were at hand (the published data
    never change), else the sizes the paper gives (:func:`paper_statistics`).
    """
    return build_task_class(
        CocktailTask, entry.task_name, module=__name__, attributes={"entry": entry, "sources": entry.sources},
        known_stats=partial(paper_statistics, entry),
        name=entry.task_name,
        description=_description(entry),
        reference=COCKTAIL_REFERENCE,
        dataset={"path": entry.hub_repo, "revision": entry.revision},
        eval_splits=list(entry.eval_splits),
        eval_langs=eval_langs([label for label, _ in entry.sources]),
        main_score="ndcg_at_1",
        date=entry.date,
        domains=list(entry.mteb_domains),
        task_subtypes=list(entry.task_subtypes),
        license=entry.license,
        annotations_creators=entry.annotations_creators,
        sample_creation="multiple",  # found human-written text plus its LLM rewrite
        bibtex_citation=COCKTAIL_CITATION,
        adapted_from=list(entry.adapted_from) or None,
    )


@cache
def cocktail_task_classes() -> tuple[type[CocktailTask], ...]:
    classes = tuple(make_task_class(e) for e in cocktail_entries())
    expose(classes, globals())
    return classes


def cocktail_benchmarks() -> list[Benchmark]:
    return [Benchmark(
        name=COCKTAIL_BENCHMARK,
        tasks=[cls() for cls in cocktail_task_classes()],
        description="Cocktail: 16 retrieval datasets whose corpora mix human-written documents with their "
                    "Llama-2 rewrites; ranking performance (NDCG@1) and source bias (Relative Δ) in four settings.",
        reference=COCKTAIL_REFERENCE,
        citation=COCKTAIL_CITATION,
    )]


# --- any multi-source folder ---------------------------------------------------------------------

class FolderSourceBiasTask(SourceBiasTask):
    """A source-bias task over a user's multi-source folder (see :func:`make_source_bias_task`)."""

    folder: Path

    def dataset_folder(self) -> Path:
        return self.folder


def parse_sources(sources: Sequence[str] | Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``["human", "gpt=gpt-4o-rewrites"]`` or ``{label: stem}`` -> ``((label, stem), ...)``, reference first.

    A bare name is both the label (the setting's name) and the corpus file stem.

    Raises:
        OptionError: fewer than two sources, repeated labels or files, or a label that is not a setting name.
    """
    pairs = list(sources.items()) if isinstance(sources, Mapping) else [
        tuple(item.split("=", 1)) if "=" in item else (item, item) for item in sources]
    try:
        return check_sources(tuple((str(label), str(stem)) for label, stem in pairs))
    except ValueError as error:
        raise OptionError(f"sources (--sources): {error}") from None


def source_bias_task_class(folder: Path, sources: tuple[tuple[str, str], ...], splits: Sequence[str], *, name: str,
                           languages: Sequence[str] = ("eng-Latn",), license: str = "not specified",
                           revision: str = LOCAL_REVISION, labelled: bool = True) -> type[FolderSourceBiasTask]:
    """The class of a source-bias task over ``folder``; its statistics go into ``folder/descriptive_stats``."""
    return build_task_class(
        FolderSourceBiasTask, name, module=__name__,
        attributes={"sources": sources, "folder": folder, "labelled": labelled},
        stats_folder=lambda: folder / "descriptive_stats",
        name=name,
        description=f"Source bias on {folder}: sources {', '.join(f'{label}={stem}' for label, stem in sources)} "
                    f"(reference: {sources[0][0]}).",
        reference=COCKTAIL_REFERENCE,
        dataset={"path": str(folder), "revision": revision},
        eval_splits=list(splits),
        eval_langs=eval_langs([label for label, _ in sources], languages),
        main_score="ndcg_at_1",
        license=license,
        sample_creation="multiple",
        bibtex_citation=COCKTAIL_CITATION,
    )


def make_source_bias_task(folder: str | Path, sources: Sequence[str] | Mapping[str, str], *,
                          name: str | None = None, splits: Sequence[str] | None = None,
                          settings: Sequence[str] | None = None, languages: Sequence[str] = ("eng-Latn",),
                          keep_titles: bool | None = None) -> FolderSourceBiasTask:
    """A task that evaluates ``folder`` (``corpus/<source>.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``).

    A folder without any ``qrels/<split>.tsv`` is measured by source exposure alone (module docstring): its one
    split is named by ``splits`` (default ``test``) and its one setting is ``mixed``.

    The task is not added to mteb's registry: a caller that loads results by name registers its class
    (``airbench_mteb.registry.register_tasks([type(task)])``).

    Args:
        folder: the multi-source folder; every corpus file must hold the same ``_id`` set.
        sources: corpus file stems (or ``label=stem``), the reference source (e.g. human) first.
        name: the MTEB task name (default ``SourceBias_<folder name>``).
        splits: splits to evaluate (default: every ``qrels/*.tsv``; without qrels, the one split's name).
        settings: subsets to evaluate (default: all; see the module docstring).
        languages: language-script codes of the data.
        keep_titles: keep document titles (default: ``AIRBENCH_MTEB_KEEP_TITLES``).
    """
    folder = Path(folder).resolve()
    pairs = parse_sources(sources)
    present = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
    labelled = bool(present)
    if not labelled:
        present, settings = _unlabelled_selection(folder, splits, settings)
    cls = source_bias_task_class(folder, pairs, present, name=name or SOURCES_TASK_PREFIX + task_name_part(folder.name),
                                 languages=languages, labelled=labelled)
    task = cls(keep_titles=keep_titles)
    check_selection(task, splits, settings, subsets_option="--settings")
    if splits:
        task.filter_eval_splits(list(splits))
    if settings:
        task.filter_languages(None, hf_subsets=list(settings))
    return task


def _unlabelled_selection(folder: Path, splits: Sequence[str] | None,
                          settings: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The split and setting of a folder without qrels: one split (``test`` unless named), ``mixed`` only.

    Raises:
        OptionError: more than one split, or a setting other than ``mixed``.
    """
    if splits and len(splits) > 1:
        raise OptionError(f"--eval-splits {' '.join(splits)}: {folder / 'qrels'} holds no <split>.tsv, so the "
                          "folder has one split (its queries.jsonl); name one")
    others = [setting for setting in settings or () if setting != MIXED]
    if others:
        raise OptionError(f"--settings {' '.join(others)}: {folder / 'qrels'} holds no <split>.tsv, so only the "
                          f"{MIXED} setting is measured (source exposure, delta_ndsr)")
    return list(splits or ["test"]), [MIXED]


def user_task_class(entry: CocktailFolderEntry) -> type[FolderSourceBiasTask]:
    """The source-bias task of a co*cktail-style folder registered in the user catalog."""
    return source_bias_task_class(Path(entry.data_dir), entry.sources, entry.splits, name=entry.task_name,
                                  languages=entry.languages, license=entry.license, revision=entry.revision)


@cache
def user_source_bias_task_classes() -> tuple[type[FolderSourceBiasTask], ...]:
    classes = tuple(user_task_class(entry) for entry in user_catalog().cocktail)
    expose(classes, globals())
    return classes
