"""mteb's private API is reached through airbench_mteb.mteb_compat only, and only plugin tasks feel it."""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import mteb
import pytest
from mteb.mocks.mock_tasks.retrieval import MockRetrievalTask
from mteb.results.task_result import TaskResult

from airbench_mteb import mteb_compat
from airbench_mteb.tasks.base import PluginRetrievalTask

PACKAGE = Path(mteb_compat.__file__).parent
PLUGIN_TASK = "CocktailNFCorpus"

# One evaluation of mteb's own mock retrieval task, run twice: first with stock mteb, then from its
# cached result. mteb's own cache check and writer are wrapped first by a spy recording what they
# are called with; with --plugin the plugin is installed after the spies (as the start-up hook does
# right after `import mteb`), so any plugin code between mteb and its own functions shows in the log.
_EVALUATE_MOCK = """
import functools, importlib, json, sys
import mteb
from mteb.mocks.mock_tasks.retrieval import MockRetrievalTask
from mteb.results.task_result import TaskResult

root, log = sys.argv[1], []
evaluate = importlib.import_module("mteb.evaluate")  # the module: mteb.evaluate is also a function
check_cache, to_disk = evaluate._check_cache, TaskResult.to_disk

@functools.wraps(check_cache)
def spy_check_cache(task, meta, cache, overwrite_strategy):
    existing, missing = check_cache(task, meta, cache, overwrite_strategy)
    log.append(["check_cache", type(task).__name__, existing is None, missing])
    return existing, missing

def spy_to_disk(self, path):
    log.append(["to_disk", str(path).removeprefix(root)])
    to_disk(self, path)

evaluate._check_cache, TaskResult.to_disk = spy_check_cache, spy_to_disk
if "--plugin" in sys.argv:
    import airbench_mteb
model = mteb.get_model("mteb/baseline-random-encoder")
for _ in range(2):
    mteb.evaluate(model, MockRetrievalTask(), cache=mteb.ResultCache(root), co2_tracker=False)
print(json.dumps(log))
"""
_TIMING = re.compile(r'("(?:evaluation_time|date|start|end)": )[-0-9.e+]+')


def test_every_private_name_the_compat_module_relies_on_exists() -> None:
    missing = mteb_compat.missing_private_names(MockRetrievalTask())
    assert not missing, (f"mteb {mteb.__version__} no longer has {', '.join(missing)}: adapt "
                         "airbench_mteb/mteb_compat.py (and the mteb range in setup.cfg)")


def test_a_private_name_that_disappears_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from mteb.cli import build_cli

    monkeypatch.delattr(build_cli, "_add_run_parser")
    task = MockRetrievalTask()
    del task._top_k
    assert mteb_compat.missing_private_names(task) == ["mteb.abstasks.retrieval.AbsTaskRetrieval._top_k",
                                                        "mteb.cli.build_cli._add_run_parser"]


def _private_mteb_names() -> set[str]:
    """Private attributes of the mteb classes the plugin builds on, and every name the compat module declares."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.models import ModelMeta
    from mteb.models.abs_encoder import AbsEncoder

    names = {name.attribute.rsplit(".", 1)[-1] for name in mteb_compat.PRIVATE_NAMES}
    for cls in (AbsTaskRetrieval, AbsEncoder, mteb.TaskMetadata, ModelMeta, TaskResult, mteb.ResultCache,
                mteb.Benchmark):
        names |= set(dir(cls))
    return {name for name in names if name.startswith("_") and not name.startswith("__")} - {"_abc_impl"}


def _private_uses(path: Path, private: set[str]) -> list[str]:
    """Where ``path`` imports from a private mteb module, reads a private mteb name or overrides a private method."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mteb"):
            parts = [*node.module.split("."), *(alias.name for alias in node.names)]
            if any(part.startswith("_") for part in parts):
                found.append(f"{path.name}:{node.lineno} imports from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in private:
            found.append(f"{path.name}:{node.lineno} reads {node.attr}")
        elif isinstance(node, ast.ClassDef):
            found += [f"{path.name}:{item.lineno} overrides {item.name}" for item in node.body
                      if isinstance(item, ast.FunctionDef) and item.name in private]
    return found


def test_only_the_compat_module_touches_mteb_internals() -> None:
    private = _private_mteb_names()
    found = [use for path in sorted(PACKAGE.rglob("*.py")) if path.name != "mteb_compat.py"
             for use in _private_uses(path, private)]
    assert not found, "mteb internals outside airbench_mteb/mteb_compat.py: " + "; ".join(found)


def _evaluate_mock(root: Path, *flags: str) -> subprocess.Popen[str]:
    env = {**os.environ, "AIRBENCH_MTEB_NO_HOOK": "1"}
    return subprocess.Popen([sys.executable, "-c", _EVALUATE_MOCK, f"{root}/", *flags], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _outcome(process: subprocess.Popen[str], root: Path) -> tuple[Any, dict[str, tuple[str, int]]]:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-3000:]
    files = {str(path.relative_to(root)): (_TIMING.sub(r"\g<1>0", path.read_text()), path.stat().st_mode)
             for path in sorted(root.rglob("*")) if path.is_file()}
    return json.loads(out.splitlines()[-1]), files


@pytest.mark.slow
def test_mteb_own_task_behaves_as_with_stock_mteb(tmp_path: Path) -> None:
    stock_root, plugin_root = tmp_path / "stock", tmp_path / "plugin"
    stock, plugin = _evaluate_mock(stock_root), _evaluate_mock(plugin_root, "--plugin")
    stock_log, stock_files = _outcome(stock, stock_root)
    plugin_log, plugin_files = _outcome(plugin, plugin_root)
    assert any(name.endswith("MockRetrievalTask.json") for name in stock_files)
    # the same calls of mteb's own check and writer, with the same paths (no scratch file, no per-query file)
    assert plugin_log == stock_log
    assert stock_log[-1] == ["check_cache", "MockRetrievalTask", False, {}]  # the second run: from the cache
    assert {entry[0] for entry in stock_log[1:-1]} == {"to_disk"}
    assert plugin_files == stock_files


def test_plugin_tasks_reach_their_hooks_and_mteb_tasks_do_not(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    evaluate = importlib.import_module("mteb.evaluate")
    calls: list[str] = []

    def write_result(cls: type, result: TaskResult, path: Path, stock_write: Any) -> None:
        calls.append(f"write {result.task_name}")
        stock_write(path)

    def check_cached_results(self: PluginRetrievalTask, model_name: str, look_up: Any) -> Any:
        calls.append(f"check {self.metadata.name}")
        return look_up()

    monkeypatch.setattr(PluginRetrievalTask, "write_result", classmethod(write_result))
    monkeypatch.setattr(PluginRetrievalTask, "check_cached_results", check_cached_results)
    meta = mteb.get_model_meta("mteb/baseline-random-encoder")
    for task in (mteb.get_task(PLUGIN_TASK), MockRetrievalTask()):
        evaluate._check_cache(task, meta, mteb.ResultCache(tmp_path), evaluate.OverwriteStrategy.ONLY_MISSING)
        TaskResult(dataset_revision="r", task_name=task.metadata.name, mteb_version="2", scores={},
                   evaluation_time=1.0).to_disk(tmp_path / f"{task.metadata.name}.json")
    assert calls == [f"check {PLUGIN_TASK}", f"write {PLUGIN_TASK}"]
    assert (tmp_path / "MockRetrievalTask.json").exists()

