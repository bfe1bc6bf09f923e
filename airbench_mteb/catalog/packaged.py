"""The names the packaged catalogs and the benchmarks hold, which a user's dataset may not take.

Read from the catalogs themselves (never from the user's), so the user catalog can be checked against
them before anything is registered with mteb.
"""

from __future__ import annotations

from airbench_mteb.catalog.airbench import packaged_airbench_entries
from airbench_mteb.catalog.cocktail import COCKTAIL_BENCHMARK, cocktail_entries
from airbench_mteb.catalog.irsc import IRSC_BENCHMARK, irsc_catalog


def packaged_task_names() -> dict[str, str]:
    """Every packaged task name -> its family's name (for messages)."""
    return {**{e.task_name: "AIR-Bench" for e in packaged_airbench_entries()},
            **{e.task_name: "co*cktail" for e in cocktail_entries()},
            **{task.name: "IRSC" for task in irsc_catalog().tasks}}


def benchmark_names() -> frozenset[str]:
    """The name and aliases of every benchmark ``mteb.get_benchmark`` knows: mteb's own and the plugin's.

    The plugin's come from its catalogs, so they are known before the plugin adds its benchmarks to mteb.
    """
    import mteb

    known = {name for benchmark in mteb.get_benchmarks() for name in (benchmark.name, *(benchmark.aliases or ()))}
    plugin = {name for entry in packaged_airbench_entries() for name in entry.benchmark_names}
    return frozenset(known | plugin | {COCKTAIL_BENCHMARK, IRSC_BENCHMARK})


def reserved_names() -> dict[str, str]:
    """Every name a user's task may not take -> what holds it: the packaged tasks and every benchmark."""
    return {**{name: f"a benchmark (mteb.get_benchmark({name!r}))" for name in benchmark_names()},
            **{name: f"a built-in {family} task" for name, family in packaged_task_names().items()}}
