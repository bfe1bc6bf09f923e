"""Issue 14, finding 4 and issue 18, finding 5: official names stay official.

A registered dataset may not take a task's or a benchmark's name nor an official AIR-Bench version,
every family's task names follow one rule, and a broken entry never stops the others.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airbench_mteb import cli
from airbench_mteb.catalog import airbench_entries
from airbench_mteb.catalog.airbench import AirBenchEntry
from airbench_mteb.catalog.packaged import benchmark_names
from airbench_mteb.catalog.user import user_catalog
from airbench_mteb.data.airbench_source import split_files
from tests.catalog_counts import AIRBENCH_DATASETS, PACKAGED_TASKS, airbench_benchmark_sizes
from tests.test_catalogs import cocktail_folder, irsc_build

BUILT_IN = "AIR-Bench_24.05_qa_news_en"
NAME_RULE = "a task name holds ASCII letters, digits, '_', '-' and '.'"


def _entry(version: str, **changes: str) -> dict:
    source = next(e for e in airbench_entries() if e.task_name == BUILT_IN)
    entry = source.model_dump(mode="json", exclude={"data_dir"})
    entry.update(version=version, revision="local", **changes)
    return entry


def generated_airbench_folder(root: Path, version: str, **changes: str) -> Path:
    """What `generate airbench` writes: catalog_entry.json and (here empty) corpus and queries files."""
    root.mkdir(parents=True)
    entry = _entry(version, **changes)
    (root / "catalog_entry.json").write_text(json.dumps(entry))
    for file in split_files(AirBenchEntry.model_construct(**entry), entry["splits"], root):
        file.parent.mkdir(parents=True, exist_ok=True)
        file.touch()
    return root


@pytest.fixture()
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "catalog.json"
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(path))
    return path


@pytest.mark.parametrize("version", ["AIR-Bench_24.05", "AIR-Bench_24.04"])
def test_register_dataset_refuses_an_official_version(version: str, catalog: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    folder = generated_airbench_folder(tmp_path / "bench", version, domain="cooking")
    assert cli.main(["register-dataset", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"version {version!r} is an official AIR-Bench release" in err and "catalog_entry.json" in err
    assert len(err.strip().splitlines()) == 1
    assert not catalog.exists()
    assert len(airbench_entries()) == AIRBENCH_DATASETS


@pytest.mark.slow
def test_official_benchmarks_keep_their_tasks_whatever_the_user_catalog_holds(tmp_path: Path) -> None:
    """A catalog written before the check (or by hand) with official versions: those entries are skipped."""
    catalog = tmp_path / "catalog.json"
    datasets = [dict(_entry(version, domain="cooking"), data_dir=str(tmp_path))
                for version in ("AIR-Bench_24.05", "AIR-Bench_24.04", "custom")]
    catalog.write_text(json.dumps({"datasets": datasets}))
    expected = airbench_benchmark_sizes()  # the packaged entries only
    code = ("import json, mteb; "
            f"names = {sorted(expected)!r}; "
            "print(json.dumps({n: len(mteb.get_benchmark(n).tasks) for n in names})); "
            "print(json.dumps([t.metadata.name for t in mteb.get_tasks(tasks=['custom_qa_cooking_en'])]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AIRBENCH_MTEB_CATALOG": str(catalog)})
    assert done.returncode == 0, done.stderr[-2000:]
    sizes, custom = map(json.loads, done.stdout.splitlines())
    assert sizes == expected
    assert custom == ["custom_qa_cooking_en"]
    for number, version in ((1, "AIR-Bench_24.05"), (2, "AIR-Bench_24.04")):
        assert f"skipped entry {number} of {catalog} ({version}_qa_cooking_en): version {version!r} is an " \
               "official AIR-Bench release" in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("name", ["AIR-Bench_24.05", "AIR-Bench_24.04_long-doc", "IRSC", "Cocktail", "BEIR", "MTEB"])
def test_a_task_may_not_take_a_benchmark_name(name: str, catalog: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    folder = cocktail_folder(tmp_path / "nf")
    assert cli.main(["register-dataset", str(folder), "--name", name]) == 2
    assert f"{name!r} is the name of a benchmark (mteb.get_benchmark({name!r})); pass another --name" \
        in capsys.readouterr().err
    assert not catalog.exists()


def test_the_plugin_benchmarks_are_known_from_the_catalogs() -> None:
    from airbench_mteb.tasks import all_benchmarks

    assert {benchmark.name for benchmark in all_benchmarks()} <= benchmark_names()


@pytest.mark.parametrize("family, name", [
    ("cocktail", "my rewrites"), ("cocktail", "réécritures"), ("cocktail", "a/b"), ("cocktail", "a\\b"),
    ("cocktail", "tab\there"), ("cocktail", "-dash-first"), ("cocktail", "."), ("cocktail", ""),
    ("cocktail", "x" * 201), ("irsc", "v 2"), ("irsc", "ü"), ("irsc", "a/b"), ("irsc", ""),
    ("airbench", "my law"), ("airbench", "recht/de"), ("airbench", "küche"), ("airbench", "line\nbreak"),
])
def test_every_family_checks_task_names_by_one_rule(family: str, name: str, catalog: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    if family == "airbench":
        argv = [str(generated_airbench_folder(tmp_path / "bench", "custom", domain=name))]
    else:
        folder = cocktail_folder(tmp_path / "c") if family == "cocktail" else irsc_build(tmp_path / "b")
        argv = [str(folder), f"--name={name}"]  # "=": a name may start with "-"
    assert cli.main(["register-dataset", *argv]) == 2
    err = capsys.readouterr().err
    assert NAME_RULE in err and len(err.strip().splitlines()) == 1, err
    assert not catalog.exists()


def test_a_catalog_entry_with_an_unusable_name_is_skipped_when_read(catalog: Path, tmp_path: Path) -> None:
    folder = cocktail_folder(tmp_path / "nf")
    cocktail = {"family": "cocktail", "data_dir": str(folder), "sources": {"human": "human", "llm": "llama"},
                "splits": ["test"]}
    catalog.write_text(json.dumps({"datasets": [
        dict(_entry("custom", domain="my law"), data_dir=str(tmp_path)),
        {**cocktail, "task_name": "a/b"},
        {"family": "irsc", "suffix": "v 2", "data_dir": str(irsc_build(tmp_path / "b"))},
        {**cocktail, "task_name": "BEIR"},
        {**cocktail, "task_name": "Fine"},
    ]}))
    with pytest.warns(UserWarning) as caught:
        usable = user_catalog()
    skipped = [str(w.message) for w in caught if "skipped" in str(w.message)]
    assert [entry.task_name for entry in usable.cocktail] == ["Fine"] and not usable.airbench and not usable.irsc
    assert len(skipped) == 4, skipped
    for number, culprit in enumerate(["domain 'my law'", "'a/b'", "'v 2'"], start=1):
        assert any(f"entry {number}" in m and culprit in m and NAME_RULE in m for m in skipped), (number, skipped)
    assert any("entry 4" in m and "'BEIR' is the name of a benchmark" in m for m in skipped), skipped


def test_a_name_registered_for_another_folder_needs_replace(catalog: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    first = generated_airbench_folder(tmp_path / "a" / "bench", "custom")
    second = generated_airbench_folder(tmp_path / "b" / "bench", "custom")
    assert cli.main(["register-dataset", str(first)]) == 0
    assert cli.main(["register-dataset", str(first)]) == 0  # the same folder again: an update
    assert cli.main(["register-dataset", str(second)]) == 2
    err = capsys.readouterr().err
    assert "'custom_qa_news_en' is already registered for" in err and str(first.resolve()) in err and "--replace" in err
    assert [e["data_dir"] for e in json.loads(catalog.read_text())["datasets"]] == [str(first.resolve())]
    assert cli.main(["register-dataset", "--replace", str(second)]) == 0
    assert [e["data_dir"] for e in json.loads(catalog.read_text())["datasets"]] == [str(second.resolve())]


def _broken_catalog(path: Path, good_dir: Path) -> None:
    malformed = {k: v for k, v in _entry("broken").items() if k != "splits"}
    clashing = {"family": "cocktail", "task_name": BUILT_IN, "data_dir": str(good_dir),
                "sources": {"human": "human", "llm": "llama"}, "splits": ["test"]}
    official = dict(_entry("AIR-Bench_24.05"), data_dir=str(good_dir))
    good = dict(_entry("custom"), data_dir=str(good_dir))
    path.write_text(json.dumps({"datasets": [malformed, clashing, official, good]}))


def test_broken_user_entries_are_skipped_with_a_warning_naming_them(catalog: Path, tmp_path: Path) -> None:
    _broken_catalog(catalog, tmp_path)
    with pytest.warns(UserWarning) as caught:
        names = [e.task_name for e in airbench_entries()]
    messages = [str(w.message) for w in caught]
    assert any("entry 1 (broken_qa_news_en) is malformed" in m and str(catalog) in m and "splits" in m
               for m in messages), messages
    assert any(f"entry 2 of {catalog}" in m and f"{BUILT_IN!r} is the name of a built-in AIR-Bench task" in m
               for m in messages), messages
    assert any(f"entry 3 of {catalog}" in m and "official AIR-Bench release" in m for m in messages), messages
    assert len(names) == AIRBENCH_DATASETS + 1 and names[-1] == "custom_qa_news_en" and names.count(BUILT_IN) == 1
    built_in = next(e for e in airbench_entries() if e.task_name == BUILT_IN)
    assert built_in.data_dir is None  # the packaged entry, not the user's
    assert not user_catalog().cocktail


@pytest.mark.parametrize("catalog_text", ["{not json", '{"datasets": 3}', '{"entries": []}', "\udcff"])
def test_an_unreadable_user_catalog_leaves_the_packaged_tasks_with_a_warning(catalog: Path, catalog_text: str) -> None:
    catalog.write_text(catalog_text, errors="surrogateescape")
    with pytest.warns(UserWarning, match=rf"none of the datasets in the user catalog is registered: .*{catalog.name}"):
        assert len(airbench_entries()) == AIRBENCH_DATASETS


@pytest.mark.slow
def test_import_mteb_registers_every_plugin_task_despite_broken_user_entries(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    _broken_catalog(catalog, tmp_path)
    code = ("import mteb; from mteb.get_tasks import _TASKS_REGISTRY as r; "
            "print(sum(c.__module__.startswith('airbench_mteb.') for c in r.values()), "
            "r['AIR-Bench_24.05_qa_news_en'].entry.data_dir)")
    env = {**os.environ, "AIRBENCH_MTEB_CATALOG": str(catalog)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    count, data_dir = done.stdout.split()
    # every packaged task, plus the user's one good entry
    assert int(count) == PACKAGED_TASKS + 1 and data_dir == "None"
    assert str(catalog) in done.stderr


def test_a_task_clashing_with_an_mteb_task_is_left_out_with_a_warning_and_the_rest_registered() -> None:
    tasks_module = importlib.import_module("mteb.get_tasks")  # the module; mteb.get_tasks is the function
    registry = tasks_module._TASKS_REGISTRY

    from airbench_mteb.registry import register_tasks, task_owner
    from airbench_mteb.tasks.airbench import airbench_task_classes

    template = airbench_task_classes()[0]
    clashing = type("Clashing", (template,), {"metadata": template.metadata.model_copy(update={"name": "NFCorpus"})})
    fresh = type("Fresh", (template,), {"metadata": template.metadata.model_copy(update={"name": "FreshTask"})})
    mtebs_own, task_list = registry["NFCorpus"], tasks_module.TASK_LIST
    try:
        with pytest.warns(UserWarning, match=r"task 'NFCorpus' not registered: the name is already used by mteb\."):
            register_tasks([clashing, fresh])
        assert registry["NFCorpus"] is mtebs_own and registry["FreshTask"] is fresh
        assert task_owner("NFCorpus") == f"{mtebs_own.__module__}.{mtebs_own.__qualname__}"
    finally:
        registry.pop("FreshTask", None)
        tasks_module.TASK_LIST = task_list
