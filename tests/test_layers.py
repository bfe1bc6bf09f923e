"""The import graph of the package: imports only go down the layers of the project design (LAYERS below), and no module cycle.

Read from the source (every ``import``, also those inside functions), so it is the graph a reader sees.
``from package import module`` is an import of that module, as import-graph tools count it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "airbench_mteb"

# Top-level part of the package -> its floor (higher floors may import lower ones, never the reverse; parts on
# one floor do not import each other). mteb_compat sits at the bottom: tasks/ and distributed/ reach mteb's
# internals through it, so it imports nothing of the plugin.
FLOORS = {
    "cli": 12,
    "commands": 11,
    "errors": 10,  # the user-error families of every layer below, for the CLI and the start-up hook
    "report": 9, "generation": 9, "distributed": 9, "submission": 9,
    "results": 8,  # the one reader of results folders, under every report and command
    "names": 7,  # task, benchmark and model names checked, so libraries raise the error a command prints
    "registry": 6,
    "tasks": 5,
    "catalog": 4, "models": 4,
    "data": 3, "metrics": 3,
    "settings": 2,
    "mteb_compat": 1,
    "ir_types": 0,  # Qrels and Run, the shapes data/, metrics/ and everything above them pass around
    "whole_numbers": 0,  # whole numbers however JSON spells them, for every reader of a count (data/ and metrics/ alike)
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                submodules = [f"{node.module}.{alias.name}" for alias in node.names
                              if f"{node.module}.{alias.name}" in modules]
                targets = submodules if len(submodules) == len(node.names) else [node.module, *submodules]
            else:
                continue
            graph[name] |= {target for target in targets if target in modules and target != name}
    return graph


def _part(module: str) -> str | None:
    """The top-level part a module belongs to (None for the package root, which registers everything)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_part_of_the_package_has_a_floor() -> None:
    parts = {_part(module) for module in _graph()} - {None}
    assert parts <= set(FLOORS), f"parts without a floor: {sorted(parts - set(FLOORS))}"


def test_imports_only_go_down_the_floors() -> None:
    upward = [f"{module} -> {target}" for module, targets in _graph().items() for target in targets
              if _part(module) is not None and _part(target) is not None and _part(module) != _part(target)
              and FLOORS[_part(target)] >= FLOORS[_part(module)]]
    assert not upward, "imports that do not go down:\n" + "\n".join(sorted(upward))


def test_no_module_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)
