"""AIR-Bench QA and Long-Doc tasks, one class per entry of ``catalog/airbench.json``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from pathlib import Path
from typing import Any

from mteb import Benchmark

from airbench_mteb.catalog import AirBenchEntry, airbench_entries
from airbench_mteb.catalog.airbench import packaged_airbench_entries
from airbench_mteb.catalog.entries import warn_if_unpinned
from airbench_mteb.data import data_dir
from airbench_mteb.data.airbench_source import load_corpus, load_split, qrels_available, split_files
from airbench_mteb.data.fingerprint import files_fingerprint
from airbench_mteb.data.hub_revision import hub_fingerprint
from airbench_mteb.data.retrieval_data import RetrievalData
from airbench_mteb.tasks.base import PluginRetrievalTask
from airbench_mteb.tasks.factory import build_task_class, expose
from airbench_mteb.tasks.statistics import SHIPPED_STATS, sizes_only

# One line per field, as MTEB's citation test wants (bibtexparser 1.x form); a trailing \ joins long ones.
AIRBENCH_CITATION = """
@article{chen2024airbench,
  author = {Chen, Jianlyu and Wang, Nan and Li, Chaofan and Wang, Bo and Xiao, Shitao and Xiao, Han \
and Liao, Hao and Lian, Defu and Liu, Zheng},
  journal = {arXiv preprint arXiv:2412.13102},
  title = {{AIR-Bench}: Automated Heterogeneous Information Retrieval Benchmark},
  year = {2024},
}
"""
MAIN_SCORES = {"qa": "ndcg_at_10", "long-doc": "recall_at_10"}
TYPE_LABELS = {"qa": "QA", "long-doc": "Long-Doc"}


class AirBenchTask(PluginRetrievalTask):
    """Base of the generated AIR-Bench tasks: loads one catalog entry, reusing its corpus across splits."""

    entry: AirBenchEntry
    # The official evaluator reports these cut-offs (k=50 in addition to MTEB's defaults).
    k_values = (1, 3, 5, 10, 50, 100, 1000)

    def _mirror(self) -> Path | None:
        return mirror_root(self.entry)

    def data_revision(self) -> str:
        """What this task reads: ``mirror-<fingerprint of the content of every split's files>``, or
        ``hub-<fingerprint of the commits of the hub repositories read>``.

        Every split of the task counts, not only those evaluated now, so results of a dev run and a later
        dev+test run on the same data share one revision (MTEB keeps one per results file).
        """
        return self._fingerprint(self.metadata.eval_splits)

    def split_data_revision(self, split: str) -> str:
        """What one split's scores rest on: :meth:`data_revision` of the corpus and that split's queries and qrels
        alone, so a table of that split compares runs on its own data (a mirror holding the gated test qrels or
        not has other data, but the same dev split)."""
        return self._fingerprint([split])

    def _fingerprint(self, splits: Sequence[str]) -> str:
        root = self._mirror()
        if root is None:
            repos = [self.entry.corpus_location()[0],
                     *(self.entry.qrels_location(s)[0] for s in splits if qrels_available(self.entry, s, None))]
            return hub_fingerprint(repos, self.entry.revision)
        return "mirror-" + files_fingerprint(split_files(self.entry, splits, root))

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        root = self._mirror()
        if root is None:
            warn_if_unpinned(self.entry.revision, f"AIR-Bench task {self.entry.task_name}")
        if getattr(self, "_corpus", None) is None:
            self._corpus = load_corpus(self.entry, root)  # memory-mapped Arrow, shared by the splits
        return load_split(self.entry, split, root, corpus=self._corpus)


def _description(entry: AirBenchEntry) -> str:
    kind = ("questions answered by passages" if entry.task_type == "qa"
            else "questions about one long document, answered by its chunks")
    return (f"AIR-Bench {entry.version.split('_')[-1]} {TYPE_LABELS[entry.task_type]} ({entry.domain}, "
            f"{entry.language}, dataset {entry.dataset}): LLM-generated {kind}, with LLM-generated hard negatives "
            f"and quality control. Corpus: {entry.source_name} ({entry.source_url}; source license: "
            f"{entry.source_license}). Average length in tokens: {_average_lengths(entry)}.{_gating_note(entry)}")


def _average_lengths(entry: AirBenchEntry) -> str:
    return ", ".join(f"{part} {tokens}" if part == "corpus" else f"{part} queries {tokens}"
                     for part, tokens in entry.avg_tokens.items())


def _gating_note(entry: AirBenchEntry) -> str:
    if not any(entry.is_gated(s) for s in entry.splits):
        return ""
    return (" Corpus, queries and dev qrels are public; the test qrels are gated on the hub: with an HF_TOKEN "
            "that has access the test split is scored here, without one it is searched (closed-book) and its "
            "rankings are packaged for the AIR-Bench leaderboard (airbench-mteb package-submission).")


def mirror_root(entry: AirBenchEntry) -> Path | None:
    """The local folder the entry's data are read from (its own, or the data directory), or None: the hub."""
    return Path(entry.data_dir) if entry.data_dir else data_dir()


def mirror_fingerprint(entry: AirBenchEntry, root: Path) -> str:
    """The fingerprint of the content of every split's files of ``entry`` in the mirror at ``root``."""
    return files_fingerprint(split_files(entry, entry.splits, root))


def stats_folder(entry: AirBenchEntry) -> Path:
    """Statistics go with the data they describe: the package's folder for the hub's pinned revisions, else
    ``<mirror>/descriptive_stats/<mirror fingerprint>``, so an edited mirror never shows the old counts."""
    root = mirror_root(entry)
    return SHIPPED_STATS if root is None else root / "descriptive_stats" / mirror_fingerprint(entry, root)


def catalog_statistics(entry: AirBenchEntry) -> dict[str, Any]:
    """What the catalog knows of each split: corpus and query counts, positive labels (MTEB counts relevance > 0)."""
    positives = {split: labels.pos_num for split, labels in entry.labels.items()}
    return sizes_only(entry.size.corpus, dict(entry.size.queries), positives)


def _class_name(entry: AirBenchEntry) -> str:
    return "AIRBench" + "".join(ch if ch.isalnum() else "_" for ch in entry.task_name.removeprefix("AIR-Bench_"))


def make_task_class(entry: AirBenchEntry) -> type[AirBenchTask]:
    """Build the task class of one catalog entry (a real, importable class).

    Every AIR-Bench task is public (``is_public=True``), so MTEB's default filters list it: its
    corpus, queries and dev qrels are open. Gated test qrels do not make the task private; they
    decide whether the test split is scored or closed-book (``data.airbench_source.qrels_available``).
    """
    return build_task_class(
        AirBenchTask, _class_name(entry), module=__name__, attributes={"entry": entry},
        stats_folder=partial(stats_folder, entry), known_stats=partial(catalog_statistics, entry),
        name=entry.task_name,
        description=_description(entry),
        reference="https://github.com/AIR-Bench/AIR-Bench",
        dataset={"path": f"AIR-Bench/{entry.hub_repo}", "revision": entry.revision, "name": entry.version},
        eval_splits=list(entry.splits),
        eval_langs=[entry.eval_lang],
        main_score=MAIN_SCORES[entry.task_type],
        date=("2024-01-01", entry.release_date),
        domains=list(entry.mteb_domains),
        task_subtypes=["Question answering"] if entry.task_type == "qa" else ["Article retrieval"],
        license=entry.license,
        annotations_creators="LM-generated and reviewed",
        sample_creation="LM-generated and verified",
        bibtex_citation=AIRBENCH_CITATION,
        is_public=True,
    )


@cache
def airbench_task_classes() -> tuple[type[AirBenchTask], ...]:
    classes = tuple(make_task_class(e) for e in airbench_entries())
    expose(classes, globals())
    return classes


def airbench_benchmarks() -> list[Benchmark]:
    """One benchmark per version, and per version and task type (e.g. ``AIR-Bench_24.05_qa``).

    They are the official, fixed lists of the packaged datasets: a registered dataset never joins one.
    """
    official = {entry.task_name for entry in packaged_airbench_entries()}
    groups: dict[str, list[type[AirBenchTask]]] = {}
    for cls in (cls for cls in airbench_task_classes() if cls.metadata.name in official):
        for name in cls.entry.benchmark_names:
            groups.setdefault(name, []).append(cls)
    return [
        Benchmark(
            name=name,
            tasks=[cls() for cls in members],
            description=f"{name}: {len(members)} AIR-Bench datasets (main score nDCG@10 for QA, Recall@10 for Long-Doc).",
            reference="https://github.com/AIR-Bench/AIR-Bench",
            citation=AIRBENCH_CITATION,
        )
        for name, members in groups.items()
    ]
