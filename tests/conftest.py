"""Shared fixtures: offline settings and a small AIR-Bench mirror in the hub layout."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from airbench_mteb import settings

pytest_plugins = ["tests.minilm_nq_utd"]  # a fixture of two modules

# The suite gives the same results on any machine: the user's own plugin settings (a data folder, CIs off, a
# cache) and hub access are not read; every test that wants a setting sets it.
for _variable in (settings.DATA_DIR_ENV, settings.CACHE_ENV, settings.EMBEDDING_CACHE_ENV, settings.BM25_INDEX_ENV,
                  settings.USER_CATALOG_ENV, settings.KEEP_TITLES_ENV, settings.CI_ENV, settings.CI_RESAMPLES_ENV,
                  *settings.API_KEY_VARIABLES):
    os.environ.pop(_variable, None)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Threads per worker: the cores shared among the workers of `-n N` (the README's test command). More threads than
# cores make torch's and e5's kernels wait on each other: two copies of an encode-heavy test side by side took 125 s
# each with two threads apiece on two cores, 94 s with one.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _CORES // _WORKERS)))
# Ray reads its authentication mode once per process: every test that reaches Ray (a bad-input case of
# `encode`, the cluster tests) must see the same token mode and token, set before anything imports ray.
os.environ.setdefault("RAY_AUTH_MODE", "token")
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

# Property tests draw the same cases on every run by default (the README's `python -m pytest -q tests`): a seed
# from each test's own code, no example database read or written, no time limit (a slow shared machine is no
# failure). `HYPOTHESIS_PROFILE=deep` (or `--hypothesis-profile=deep`) draws fresh random cases, more of them
# where a test follows the profile's count; every failing case it finds is pinned in its test with @example.
hypothesis_settings.register_profile("default", derandomize=True, database=None, deadline=None, max_examples=100,
                                     print_blob=False)
hypothesis_settings.register_profile("deep", derandomize=False, database=None, deadline=None, max_examples=5000,
                                     print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _sample_data() -> Path:
    """The real co*cktail data the package ships, written once per session into a temporary folder and made
    read-only (as a published mirror is: a test that writes into it fails), removed at exit."""
    from airbench_mteb.data.sample_data import write_sample_data

    root = Path(tempfile.mkdtemp(prefix="airbench-mteb-sample-"))
    write_sample_data(root)
    for path in sorted(root.rglob("*"), reverse=True):
        path.chmod(0o555 if path.is_dir() else 0o444)

    def remove() -> None:
        for path in root.rglob("*"):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)

    atexit.register(remove)
    return root


SAMPLE_DATA = _sample_data()
# Tasks written into the test mirror: several domains, languages, versions, dev and test.
MIRROR_TASKS = {
    "AIR-Bench_24.05_qa_news_en": "en",
    "AIR-Bench_24.05_qa_news_zh": "zh",
    "AIR-Bench_24.05_qa_healthcare_en": "en",
    "AIR-Bench_24.04_qa_finance_zh": "zh",
    "AIR-Bench_24.05_long-doc_arxiv_en_llama2": "en",
}


@pytest.fixture(scope="session", autouse=True)
def _isolated_caches(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep mteb's and the plugin's caches out of the user's home during tests."""
    root = tmp_path_factory.mktemp("caches")
    os.environ["MTEB_CACHE"] = str(root / "mteb")
    os.environ["AIRBENCH_MTEB_CACHE"] = str(root / "airbench_mteb")
    os.environ["AIRBENCH_MTEB_EMBEDDING_CACHE"] = str(root / "embeddings")
    os.environ["AIRBENCH_MTEB_CATALOG"] = str(root / "user_catalog.json")


@pytest.fixture(autouse=True)
def _own_bm25_indexes(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's BM25 indexes in a store of its own: a test that counts index builds sees only its own."""
    monkeypatch.setenv(settings.BM25_INDEX_ENV, str(tmp_path_factory.mktemp("bm25")))


@pytest.fixture(autouse=True)
def _settings_from_environment() -> Iterator[None]:
    """A command run in-process (``cli.main([... "--data-dir", D])``) configures settings for the process;
    the next test reads its own environment again."""
    yield
    settings._configured = None


@pytest.fixture(scope="session")
def airbench_mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from airbench_mteb.catalog import airbench_entries
    from tests.airbench_mirror import chinese_documents, english_documents, write_entry

    root = tmp_path_factory.mktemp("mirror")
    texts = {"en": english_documents(), "zh": chinese_documents()}
    by_name = {e.task_name: e for e in airbench_entries()}
    for name, language in MIRROR_TASKS.items():
        write_entry(root, by_name[name], texts[language])
    return root


@pytest.fixture()
def use_mirror(airbench_mirror: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AIRBENCH_MTEB_DATA_DIR", str(airbench_mirror))
    return airbench_mirror



# Measured (`--durations`) as the modules that take longest: they start first, so that both workers of the README's
# test command end together rather than one finishing a long module alone. Only the order changes.
LONGEST_FIRST = ("test_docs.py", "test_reranking.py", "test_consistency.py", "test_generation_llm.py",
                 "test_generation_cocktail.py", "test_irsc.py", "test_ray_encode.py", "test_registration.py",
                 "test_bm25.py", "test_cocktail_tasks.py", "test_significance.py")
# Modules whose tests share no module fixture and are long each (every docs page runs its own commands): their
# tests are spread over the workers one by one, where every other module runs whole on one worker.
SPREAD_MODULES = ("tests/test_docs.py",)
# Modules run on the worker of another: test_significance's MiniLM run reads NQ-UTD's vectors from the embedding
# cache of the fixture minilm_nq_utd, which test_cocktail_tasks starts (tests/minilm_nq_utd.py), for encoding them.
SAME_WORKER = {"tests/test_significance.py": "tests/test_cocktail_tasks.py"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within a module is kept


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadfile`` (pyproject.toml) as xdist has it, each module whole on one worker so its module fixtures
    (a model's encode, an LLM server) are paid once, except :data:`SPREAD_MODULES`, spread test by test, and
    :data:`SAME_WORKER`, run with the module it names. (xdist's
    own ``loadgroup`` would do this with marks, but it renames node ids in a way pytest 9 no longer reads.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ModulesWholeDocsSpread(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return nodeid if module in SPREAD_MODULES else SAME_WORKER.get(module, module)

    return ModulesWholeDocsSpread(config, log)
