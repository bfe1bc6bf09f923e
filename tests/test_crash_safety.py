"""Crash safety, the fast subset of ``benchmarks/bench_faults.py``: a few seeded SIGKILLs per command,
each followed by a re-run compared with an uninterrupted run, and shared, full, read-only and
corrupted storage once each."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.fault_scenarios import (
    Figures,
    Suite,
    cache_disk_full,
    corrupted_shard,
    mirror_for,
    read_only_storage,
    results_disk_full,
    shared_storage,
)
from tests.faults import mount_refused, preload

TRIALS = 2
# each trial kills a command and runs it again, in processes of their own
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    preload()
    root = tmp_path_factory.mktemp("faults")
    with ExitStack() as stack:
        yield Suite(mirror_for(root / "mirror"), root, stack)


def check(figures: Figures, kills: int) -> None:
    assert figures.notes == []
    assert (figures.kill_trials, figures.lost_items, figures.repeated_calls, figures.score_mismatches,
            figures.half_written) == (kills, 0, 0, 0, 0)


@pytest.mark.parametrize("scenario", ["run", "irsc", "unpack", "package"])
def test_killed_commands_resume_to_the_uninterrupted_result(suite: Suite, scenario: str, tmp_path: Path) -> None:
    figures = getattr(suite, scenario)(tmp_path, TRIALS, random.Random(f"test-{scenario}"))
    check(figures, TRIALS)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python[server]")
def test_killed_generation_repeats_no_answered_call(suite: Suite, tmp_path: Path) -> None:
    # `generate airbench` has the same journal and cache; its 30 kills are in the benchmark (minutes)
    check(suite.generate_cocktail(tmp_path, TRIALS, random.Random("test-cocktail")), TRIALS)


def test_shared_and_corrupted_storage(suite: Suite, tmp_path: Path) -> None:
    figures = Figures()
    shared_storage(suite.reference, tmp_path / "shared", figures)
    corrupted_shard(suite.reference, tmp_path / "corrupted", figures)
    check(figures, 0)


@pytest.fixture()
def mounting(tmp_path: Path) -> None:
    refused = mount_refused(tmp_path / "probe")
    if refused:
        pytest.skip(refused)


@pytest.mark.usefixtures("mounting")
def test_full_cache_disk_and_read_only_folders(suite: Suite, tmp_path: Path) -> None:
    figures = Figures()
    cache_disk_full(suite.reference, tmp_path / "cache-full", figures)
    read_only_storage(suite.reference, tmp_path / "read-only", figures)
    check(figures, 0)


@pytest.mark.usefixtures("mounting")
def test_full_results_disk(suite: Suite, tmp_path: Path) -> None:
    figures = Figures()
    results_disk_full(suite.reference, tmp_path, figures)
    check(figures, 0)
