"""The conventions MTEB's own test suite holds its tasks, benchmarks and models to, applied to the plugin's.

Checked here: task metadata validation and completeness, no remote code, a simplified task type,
prompts, canonical BibTeX (bibtexparser 1.x, 2-space indent, trailing commas: the form MTEB's
citation test expects), unique names, and one BibTeX id per paper across the plugin and MTEB.
Descriptive statistics and ``n_samples`` (also asked for by MTEB's metadata test) are checked for every
task, without a download or a build: computed ones where the package ships them, else the sizes its
catalog or paper gives (tests/test_listing_and_statistics.py checks where each comes from).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator

import bibtexparser
import mteb
import pytest
from bibtexparser.bparser import BibTexParser
from bibtexparser.bwriter import BibTexWriter
from mteb import AbsTask
from mteb.abstasks import AbsTaskRetrieval

from airbench_mteb.catalog import cocktail_entries, irsc_catalog
from airbench_mteb.catalog.airbench import packaged_airbench_entries
from airbench_mteb.models import bundled_model_metas
from airbench_mteb.registry import register_all
from airbench_mteb.tasks import all_benchmarks, all_task_classes
from tests.catalog_counts import PACKAGED_TASKS

register_all()
TASKS = all_task_classes()
BENCHMARKS = all_benchmarks()
MODELS = bundled_model_metas()
# MTEB flags two different titles this similar as one paper written two ways.
SAME_PAPER_RATIO = 0.9


def canonical_bibtex(text: str) -> str:
    """``text`` as bibtexparser 1.x writes it back: 2-space indent, trailing commas, fields sorted."""
    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False, interpolate_strings=False)
    database = bibtexparser.loads(text, parser)
    assert database.entries, f"no BibTeX entry in {text!r}"
    writer = BibTexWriter()
    writer.indent = "  "
    writer.comma_first = False
    writer.add_trailing_comma = True
    return writer.write(database).strip()


@pytest.mark.parametrize("task_class", TASKS, ids=lambda c: c.metadata.name)
def test_task_metadata_is_valid_and_filled(task_class: type[AbsTask]) -> None:
    metadata = task_class.metadata
    metadata._validate_metadata()
    assert metadata.is_filled(), [name for name, value in metadata if value is None]
    assert metadata.dataset.get("trust_remote_code", False) is False
    assert isinstance(metadata.simplified_task_type, str)
    assert not isinstance(metadata.prompt, dict) or issubclass(task_class, AbsTaskRetrieval)
    assert metadata.superseded_by is None or metadata.superseded_by in _registered_task_names()


def test_every_catalog_entry_is_a_task_checked_here() -> None:
    packaged = {*(e.task_name for e in packaged_airbench_entries()), *(e.task_name for e in cocktail_entries()),
                *(t.name for t in irsc_catalog().tasks)}
    assert len(packaged) == PACKAGED_TASKS  # the catalog files' entries, none dropped or merged
    assert packaged <= {c.metadata.name for c in TASKS}


@pytest.mark.parametrize("task_class", TASKS, ids=lambda c: c.metadata.name)
def test_descriptive_statistics_give_n_samples_per_eval_split(task_class: type[AbsTask]) -> None:
    metadata = task_class.metadata
    assert metadata.descriptive_stats is not None
    assert set(metadata.n_samples) == set(metadata.eval_splits)
    assert all(count > 0 for count in metadata.n_samples.values())


def _registered_task_names() -> set[str]:
    return {t.metadata.name for t in mteb.get_tasks(exclude_superseded=False, exclude_private=False)}


def _task_and_benchmark_citations() -> list[tuple[str, str]]:
    return [*((f"task {c.metadata.name}", c.metadata.bibtex_citation or "") for c in TASKS),
            *((f"benchmark {b.name}", b.citation or "") for b in BENCHMARKS)]


def _citations() -> list[tuple[str, str]]:
    """(owner, BibTeX) of every plugin task, benchmark and bundled model."""
    return [*_task_and_benchmark_citations(), *((f"model {m.name}", m.citation or "") for m in MODELS)]


# MTEB checks the form of task and benchmark citations (a bundled model alias keeps MTEB's own text).
@pytest.mark.parametrize(("owner", "bibtex"), _task_and_benchmark_citations(), ids=lambda x: x[:60])
def test_bibtex_is_in_canonical_form(owner: str, bibtex: str) -> None:
    assert bibtex.strip(), f"{owner} cites no paper"
    assert canonical_bibtex(bibtex) == bibtex.strip(), owner


def test_task_and_benchmark_names_are_unique_among_mtebs() -> None:
    registry = __import__("mteb.get_tasks", fromlist=["_TASKS_REGISTRY"])._TASKS_REGISTRY
    assert all(registry[c.metadata.name] is c for c in TASKS)
    names = [b.name for b in mteb.get_benchmarks()]
    assert len(names) == len(set(names))
    assert {b.name for b in BENCHMARKS} <= set(names)


_ENTRY_START = re.compile(r"@\w+\s*\{\s*([^,\s]+)\s*,")
_TITLE_FIELD = re.compile(r"(?<![\w-])title\s*=\s*", re.IGNORECASE)


def _braced(text: str, start: int) -> str:
    """The content of the brace group opening at ``text[start]``."""
    depth = 0
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[start + 1:end]
    return text[start + 1:]


def cited_papers(bibtex: str) -> list[tuple[str, str]]:
    """(BibTeX id, title as MTEB compares titles: lower case, spaces collapsed) of each entry."""
    starts = list(_ENTRY_START.finditer(bibtex))
    papers = []
    for number, here in enumerate(starts, start=1):
        body = bibtex[here.end():starts[number].start() if number < len(starts) else len(bibtex)]
        title = _TITLE_FIELD.search(body)
        if title and body[title.end():title.end() + 1] == "{":
            papers.append((here.group(1), " ".join(_braced(body, title.end()).lower().split())))
    return papers


def _all_citations_known_to_mteb() -> Iterator[tuple[str, str]]:
    for task in mteb.get_tasks(exclude_superseded=False, exclude_private=False):
        yield f"task {task.metadata.name}", task.metadata.bibtex_citation or ""
    for meta in mteb.get_model_metas():
        yield f"model {meta.name}", meta.citation or ""
    for benchmark in mteb.get_benchmarks():
        yield f"benchmark {benchmark.name}", benchmark.citation or ""


def test_no_paper_under_two_ids_across_the_plugin_and_mteb() -> None:
    ours = {(key, title) for _, bibtex in _citations() for key, title in cited_papers(bibtex)}
    assert ours, "the plugin cites no paper"
    ids_of_title: dict[str, dict[str, str]] = {}
    for owner, bibtex in _all_citations_known_to_mteb():
        for key, title in cited_papers(bibtex):
            ids_of_title.setdefault(title, {}).setdefault(key, owner)
    problems = []
    for key, title in sorted(ours):
        others = {k: owner for k, owner in ids_of_title.get(title, {}).items() if k != key}
        if others:
            problems.append(f"{title!r}: cited as {key!r} by the plugin and as {others} elsewhere")
        near = difflib.get_close_matches(title, [t for t in ids_of_title if t != title], n=3, cutoff=SAME_PAPER_RATIO)
        problems += [f"{title!r} ({key!r}) and {t!r} ({ids_of_title[t]}) look like one paper" for t in near]
    assert not problems, "\n".join(problems)


def test_the_paper_matcher_sees_mtebs_own_bm25s_citation() -> None:
    # Guards the test above against a parser that finds nothing: MTEB cites BM25S as `bm25s`.
    papers = {p for _, bibtex in _all_citations_known_to_mteb() for p in cited_papers(bibtex)}
    assert ("bm25s", "bm25s: orders of magnitude faster lexical search via eager sparse scoring") in papers
