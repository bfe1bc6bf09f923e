"""One name rule for a generated AIR-Bench dataset: `generate airbench` refuses, before any work, exactly what
`register-dataset` would refuse once the dataset is made."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from airbench_mteb.catalog.airbench import AirBenchEntry, packaged_airbench_entries
from airbench_mteb.catalog.user import airbench_naming_problem, register_user_entry
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.generation.airbench import AirBenchConfig
from airbench_mteb.generation.errors import GenerationError

NAMES = {"version": "custom", "task_type": "qa", "domain": "law", "language": "en", "dataset": "default"}


def _registration_problem(names: dict[str, str]) -> str:
    """What registering an entry of these names says (an entry otherwise like a packaged one)."""
    fields = {**next(iter(packaged_airbench_entries())).model_dump(), **names, "data_dir": "/nowhere"}
    try:
        register_user_entry(AirBenchEntry(**fields))
    except (ValidationError, DatasetError) as error:
        return str(error)
    raise AssertionError(f"registration accepted {names}")


@pytest.mark.parametrize(("field", "value"), [("domain", "a/b"), ("domain", ""), ("dataset", "x/y"),
                                              ("version", ""), ("version", "AIR-Bench_24.05"),
                                              ("dataset", "d" * 200)])
def test_generate_refuses_what_registration_refuses_with_the_same_reason(field: str, value: str) -> None:
    names = {**NAMES, field: value}
    problem = airbench_naming_problem(**names)
    assert problem is not None and problem in _registration_problem(names)
    with pytest.raises(GenerationError, match=re.escape(problem)):
        AirBenchConfig(corpus="corpus.jsonl", **{k: v for k, v in names.items() if k != "task_type"})


def test_usable_names_pass_both() -> None:
    assert airbench_naming_problem(**NAMES) is None
    assert airbench_naming_problem(**{**NAMES, "dataset": "lex_files_300K-400K", "domain": "my-domain"}) is None
