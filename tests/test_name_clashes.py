"""Issue 14, finding 4: a registered dataset may not take a task's name, and a broken one never stops the others."""

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

BUILT_IN = "AIR-Bench_24.05_qa_news_en"


def _entry(version: str) -> dict:
    source = next(e for e in airbench_entries() if e.task_name == BUILT_IN)
    entry = source.model_dump(mode="json", exclude={"data_dir"})
    entry.update(version=version, revision="local")
    return entry


def _generated_folder(root: Path, version: str) -> Path:
    root.mkdir(parents=True)
    (root / "catalog_entry.json").write_text(json.dumps(_entry(version)))
    return root


@pytest.fixture()
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "catalog.json"
    monkeypatch.setenv("AIRBENCH_MTEB_CATALOG", str(path))
    return path


def test_register_dataset_refuses_the_name_of_a_built_in_task(catalog: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    folder = _generated_folder(tmp_path / "bench", "AIR-Bench_24.05")
    assert cli.main(["register-dataset", str(folder)]) == 2
    assert f"'{BUILT_IN}' is the name of a built-in AIR-Bench task" in capsys.readouterr().err
    assert not catalog.exists()
    assert len(airbench_entries()) == 97


def test_a_name_registered_for_another_folder_needs_replace(catalog: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    first = _generated_folder(tmp_path / "a" / "bench", "custom")
    second = _generated_folder(tmp_path / "b" / "bench", "custom")
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
    clashing = dict(_entry("AIR-Bench_24.05"), data_dir=str(good_dir))
    good = dict(_entry("custom"), data_dir=str(good_dir))
    path.write_text(json.dumps({"datasets": [malformed, clashing, good]}))


def test_broken_user_entries_are_skipped_with_a_warning_naming_them(catalog: Path, tmp_path: Path) -> None:
    _broken_catalog(catalog, tmp_path)
    with pytest.warns(UserWarning) as caught:
        names = [e.task_name for e in airbench_entries()]
    messages = [str(w.message) for w in caught]
    assert any("entry 1 (broken_qa_news_en) is malformed" in m and str(catalog) in m and "splits" in m
               for m in messages), messages
    assert any(f"entry 2 of {catalog}" in m and f"{BUILT_IN!r} is already taken" in m for m in messages), messages
    assert len(names) == 98 and names[-1] == "custom_qa_news_en" and names.count(BUILT_IN) == 1
    built_in = next(e for e in airbench_entries() if e.task_name == BUILT_IN)
    assert built_in.data_dir is None  # the packaged entry, not the user's


@pytest.mark.parametrize("catalog_text", ["{not json", '{"datasets": 3}', '{"entries": []}', "\udcff"])
def test_an_unreadable_user_catalog_leaves_the_packaged_tasks_with_a_warning(catalog: Path, catalog_text: str) -> None:
    catalog.write_text(catalog_text, errors="surrogateescape")
    with pytest.warns(UserWarning, match=rf"none of the datasets in the user catalog is registered: .*{catalog.name}"):
        assert len(airbench_entries()) == 97


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
    # 97 AIR-Bench + 16 co*cktail + 5 IRSC built-in tasks, plus the user's one good entry
    assert int(count) == 119 and data_dir == "None"
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
