"""IRSC (Lin et al., 2024, arXiv 2409.15763): five RAG retrieval tasks over one unified corpus per language.

One MTEB task per query type -- ``IRSCQueryRetrieval``, ``IRSCTitleRetrieval``,
``IRSCPartRetrieval``, ``IRSCKeywordRetrieval``, ``IRSCSummaryRetrieval`` -- each with the
subsets ``en``, ``zh``, ``mixed`` (both languages' queries over both corpora), ``c2e`` (Chinese
queries, English corpus) and ``e2c`` (English queries, Chinese corpus). Every task of a setting
reads the same corpus file, so the embedding cache encodes it once for all five.

Data: ``<data dir>/irsc`` as written by ``airbench-mteb generate irsc`` (layout in
``airbench_mteb.generation.irsc``); a build registered with ``register-dataset`` gets five tasks of
its own, named ``<task>_<suffix>``. A task evaluates the subsets that were built; the others
(e.g. the LLM-made ones of an offline build) are left out with a log line saying why.
"""

from __future__ import annotations

import logging
from functools import cache, partial
from pathlib import Path
from typing import Any

from mteb import Benchmark

from airbench_mteb.catalog import irsc_catalog, user_catalog
from airbench_mteb.catalog.irsc import (
    CROSS_SETTINGS,
    IRSC_BENCHMARK,
    LLM_TASKS,
    SETTINGS,
    IRSCTaskEntry,
    corpus_languages,
    query_languages,
    read_irsc_manifest,
)
from airbench_mteb.catalog.user import IRSC_MANIFEST, IRSCBuildEntry
from airbench_mteb.data import DATA_DIR_ENV, data_dir
from airbench_mteb.data.arrow_corpus import corpus_from_jsonl
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.fingerprint import file_digest, files_fingerprint
from airbench_mteb.data.languages import eval_language
from airbench_mteb.data.qrels import read_qrels_tsv
from airbench_mteb.data.retrieval_data import RetrievalData, read_queries_jsonl
from airbench_mteb.tasks.base import PluginRetrievalTask
from airbench_mteb.tasks.factory import build_task_class, expose
from airbench_mteb.tasks.statistics import SHIPPED_STATS, split_of_subsets, subset_sizes

log = logging.getLogger(__name__)

# One line per field, as MTEB's citation test wants (bibtexparser 1.x form); a trailing \ joins long ones.
IRSC_CITATION = """
@article{lin2024irsc,
  author = {Lin, Hai and Zhan, Shaoxiong and Su, Junyou and Zheng, Haitao and Wang, Hui},
  journal = {arXiv preprint arXiv:2409.15763},
  title = {{IRSC}: A Zero-shot Evaluation Benchmark for Information Retrieval through Semantic Comprehension \
in Retrieval-Augmented Generation Scenarios},
  year = {2024},
}
"""
# MTEB's languages of a subset: its queries' language(s), then its corpus's (e.g. c2e: cmn-Hans, eng-Latn)
EVAL_LANGS = {setting: list(dict.fromkeys(eval_language(lang)
                                          for lang in (*query_languages(setting), *corpus_languages(setting))))
              for setting in SETTINGS}
EVAL_SPLIT = "test"  # a build's one split (qrels/test.tsv)
BUILD_HINT = f"run `airbench-mteb generate irsc --out DIR` and point --data-dir (or ${DATA_DIR_ENV}) at DIR"
# Query and summary queries and the C2E/E2C translations are written by an LLM: without --llm the same command
# builds the same data again, without them.
LLM_BUILD_HINT = (f"run `airbench-mteb generate irsc --out DIR --llm` (the bundled SmolLM2-135M; --model FILE.gguf, or "
                  f"--backend openai --base-url URL --model NAME, for a stronger LLM; it resumes a build in DIR) and "
                  f"point --data-dir (or ${DATA_DIR_ENV}) at DIR")


def build_hint(setting: str, query_type: str) -> str:
    """How to build one IRSC subset (``setting``) of one query type: with ``--llm`` where an LLM writes it."""
    return LLM_BUILD_HINT if query_type in LLM_TASKS or setting in CROSS_SETTINGS else BUILD_HINT


def irsc_root(build: Path | None = None, hint: str = BUILD_HINT) -> Path:
    """The IRSC data of ``build`` (a folder holding ``irsc/manifest.json``), by default of the data directory;
    ``hint`` says how to build what is missing."""
    root = build if build is not None else data_dir()
    if root is None or not (root / IRSC_MANIFEST).is_file():
        where = f"{root}/irsc" if root is not None else f"no data directory (${DATA_DIR_ENV} is unset)"
        raise DatasetError(f"the IRSC benchmark is not built ({where}); {hint}")
    return root / "irsc"


def read_manifest(root: Path) -> dict:
    """The manifest of the build at ``root``, read once per version of the file (it is consulted at every access)."""
    path = root / "manifest.json"
    return _read_manifest(path, files_fingerprint([path]))


@cache
def _read_manifest(path: Path, fingerprint: str) -> dict:
    return read_irsc_manifest(path)  # the reader register-dataset checks a build with


def load_corpus(root: Path, setting: str) -> Any:
    """The unified corpus of a setting's languages, as memory-mapped Arrow (built once per corpus file)."""
    from datasets import concatenate_datasets

    parts = []
    for lang in corpus_languages(setting):
        path = root / "corpus" / f"{lang}.jsonl"
        if not path.is_file():
            raise DatasetError(f"corpus file missing; {BUILD_HINT}", path=path)
        parts.append(corpus_from_jsonl(path, keep_titles=False))
    return concatenate_datasets(parts) if len(parts) > 1 else parts[0]


class IRSCTask(PluginRetrievalTask):
    """Base of the five IRSC tasks: one query type, one subset per language setting."""

    query_type: str
    build: Path | None = None  # the build folder of a registered build; None: the data directory's
    # MTEB reports nDCG, MAP, Recall, Precision and MRR at each k: 3 and 10 are the paper's cut-offs
    k_values = (1, 3, 5, 10, 20, 100)

    @property
    def hf_subsets(self) -> list[str]:
        """The requested subsets that were built; all requested ones when none was (loading then explains)."""
        requested = self._requested_subsets
        built = self._built_settings()
        available = [s for s in requested if s in built]
        if built and available != requested and not getattr(self, "_announced", False):
            self._announced = True
            log.info("%s: evaluating the subsets built %s; not built: %s", self.metadata.name, available,
                     [s for s in requested if s not in built])
        return available or requested

    @hf_subsets.setter
    def hf_subsets(self, value: list[str]) -> None:
        self._requested_subsets = list(value)

    def _built_settings(self) -> set[str]:
        try:
            root = irsc_root(self.build)
        except DatasetError:
            return set()
        return {s for s, info in read_manifest(root).get("settings", {}).items() if self.query_type in info["tasks"]}

    def data_revision(self) -> str:
        """``files-<fingerprint>`` of the manifest, the corpora and this query type's files in every built setting."""
        try:
            root = irsc_root(self.build)
        except DatasetError:
            return self.metadata.revision  # nothing built: loading says so
        files = [root / "manifest.json", *sorted((root / "corpus").glob("*.jsonl"))]
        for setting in sorted(self._built_settings()):
            folder = root / setting / self.query_type
            files += [folder / "queries.jsonl", *(folder / "qrels" / f"{s}.tsv" for s in self.metadata.eval_splits)]
        return "files-" + files_fingerprint(files)

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        hint = build_hint(hf_subset, self.query_type)
        root = irsc_root(self.build, hint)
        folder = root / hf_subset / self.query_type
        if not folder.is_dir():
            reasons = [s["reason"] for s in read_manifest(root).get("skipped", [])
                       if s["setting"] == hf_subset and s["task"] == self.query_type]
            why = f" ({reasons[0]})" if reasons else ""
            raise DatasetError(f"IRSC {hf_subset}/{self.query_type} was not built{why}; {hint}", path=folder)
        queries_path, qrels_path = folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"
        data = RetrievalData(
            corpus=load_corpus(root, hf_subset),
            queries=read_queries_jsonl(queries_path),
            qrels=read_qrels_tsv(qrels_path),
            origin={"corpus": str(root / "corpus"), "queries": str(queries_path), "qrels": str(qrels_path)},
        )
        return data.validate()


def build_stats_folder(build: Path | None = None) -> Path:
    """Statistics of the current build: ``<build>/descriptive_stats/<manifest hash>``, so a rebuild has its own.

    Without a build, the shipped folder (which holds no IRSC file: statistics are then unknown).
    """
    try:
        root = irsc_root(build)
    except DatasetError:
        return SHIPPED_STATS
    return root / "descriptive_stats" / file_digest(root / "manifest.json")[:16]


def known_statistics(query_type: str, build: Path | None = None) -> dict[str, Any]:
    """Sizes of a task before its statistics are computed, each query with one relevant paragraph.

    Those of the build's manifest (documents of the setting's corpora, queries) for the settings built; with no
    build of this query type, the IRSC paper's (arXiv 2409.15763): queries only, as it gives no corpus size.
    """
    try:
        manifest = read_manifest(irsc_root(build))
    except DatasetError:
        manifest = {}
    built = {setting: info for setting, info in manifest.get("settings", {}).items() if query_type in info["tasks"]}
    if built:
        subsets = {setting: _sizes(sum(manifest["corpus"][lang]["documents"] for lang in info["corpus"]),
                                   info["tasks"][query_type]) for setting, info in built.items()}
    else:
        sizes = irsc_catalog().paper_sizes
        subsets = {setting: _sizes(None, sizes.queries(setting)) for setting in SETTINGS}
    return {EVAL_SPLIT: split_of_subsets(subsets)}


def _sizes(documents: int | None, queries: int) -> dict[str, Any]:
    return subset_sizes(documents, queries, num_relevant=queries)  # one relevant paragraph per query


def make_task_class(entry: IRSCTaskEntry, build: IRSCBuildEntry | None = None) -> type[IRSCTask]:
    """The task class of one query type: over the data directory's build, or a registered ``build``."""
    name = entry.name if build is None else build.task_name(entry.name)
    folder = None if build is None else Path(build.data_dir)
    where = ("Built locally with `airbench-mteb generate irsc` (offline: Wikipedia sample and People's Daily)."
             if build is None else f"Data: the IRSC build in {folder}.")
    catalog = irsc_catalog()
    return build_task_class(
        IRSCTask, name, module=__name__, attributes={"query_type": entry.type, "build": folder},
        stats_folder=partial(build_stats_folder, folder),
        known_stats=partial(known_statistics, entry.type, folder),
        name=name,
        description=(f"IRSC {entry.label} -> paragraph: the query is {entry.description}; every setting "
                     "searches one unified corpus of all paragraphs of its language(s), shared by the five IRSC "
                     f"tasks. Paper datasets: {', '.join(entry.paper_datasets)}. {where}"),
        reference="https://arxiv.org/abs/2409.15763",
        dataset={"path": "airbench-mteb/irsc-local" if build is None else str(folder),
                 "revision": catalog.revision if build is None else build.revision},
        eval_splits=[EVAL_SPLIT],
        eval_langs=EVAL_LANGS,
        main_score="ndcg_at_10",
        date=("1998-01-01", "2024-09-24"),
        domains=["Encyclopaedic", "News", "Written"],
        task_subtypes=["Question answering"] if entry.type == "query" else ["Article retrieval"],
        license=catalog.license if build is None else build.license,
        annotations_creators="derived",
        sample_creation="found",
        bibtex_citation=IRSC_CITATION,
    )


@cache
def irsc_task_classes() -> tuple[type[IRSCTask], ...]:
    classes = tuple(make_task_class(entry) for entry in irsc_catalog().tasks)
    expose(classes, globals())
    return classes


@cache
def user_irsc_task_classes() -> tuple[type[IRSCTask], ...]:
    """The five tasks of every IRSC build registered in the user catalog."""
    classes = tuple(make_task_class(entry, build) for build in user_catalog().irsc for entry in irsc_catalog().tasks)
    expose(classes, globals())
    return classes


def built_irsc_task_names() -> list[str]:
    """Names of the IRSC tasks with at least one subset in the built data (e.g. 3 of 5 offline)."""
    built = set()
    for info in read_manifest(irsc_root()).get("settings", {}).values():
        built.update(info["tasks"])
    return [cls.metadata.name for cls in irsc_task_classes() if cls.query_type in built]


def irsc_benchmarks() -> list[Benchmark]:
    return [Benchmark(
        name=IRSC_BENCHMARK,
        tasks=[cls() for cls in irsc_task_classes()],
        description=("IRSC: query, title, part-of-paragraph, keyword and summary -> paragraph retrieval in English, "
                     f"Chinese, mixed and cross-lingual settings ({', '.join(SETTINGS)}), each over one unified corpus."),
        reference="https://arxiv.org/abs/2409.15763",
        citation=IRSC_CITATION,
    )]
