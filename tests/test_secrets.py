"""An API key given to a generation run never lands in anything the run writes or logs: journal, LLM
cache, cost account, dataset card, published files, the user catalog, or a DEBUG-level log.

Keys are taken from the environment only; an endpoint given on the command line with a key inside
(the only way a key can come by flag) is refused before anything is written, without echoing the key.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from tests.fault_scenarios import airbench_argv, cocktail_argv, small_cocktail_corpus
from tests.faults import cli, preload, run_forked
from tests.llm_servers import CountingProxy

SECRET = "sk-secret-NEVER-WRITTEN-5b21e0"


@pytest.fixture(scope="module")
def proxy() -> Iterator[CountingProxy]:
    from airbench_mteb.generation.llm.local_server import llama_server

    preload()
    with llama_server() as base, CountingProxy(base) as counting:
        yield counting


def debug_logging() -> None:
    """Everything any library logs, at DEBUG, into the child's stderr (the log file we grep)."""
    logging.basicConfig(level=logging.DEBUG, force=True)


def files_holding(secret: str, *roots: Path) -> list[Path]:
    found = []
    for root in roots:
        paths = [root] if root.is_file() else root.rglob("*") if root.exists() else []
        found += [p for p in paths if p.is_file() and secret.encode() in p.read_bytes()]
    return found


def written_places(tmp_path: Path) -> list[Path]:
    """Every folder and file a run could write to: its own folder, mteb's cache, the user catalog."""
    return [tmp_path, Path(os.environ["MTEB_CACHE"]), Path(os.environ["AIRBENCH_MTEB_CATALOG"])]


@pytest.mark.parametrize("variable", ["AIRBENCH_MTEB_LLM_API_KEY", "OPENAI_API_KEY"])
def test_a_key_from_the_environment_reaches_the_server_and_nothing_written(
        proxy: CountingProxy, tmp_path: Path, variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AIRBENCH_MTEB_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    proxy.reset()
    proxy.authorization.clear()
    out = tmp_path / "cocktail"
    argv = cocktail_argv(small_cocktail_corpus(tmp_path, documents=3), proxy.base_url)(out)
    outcome = run_forked(cli(argv), tmp_path / "cocktail.log", env={variable: SECRET}, setup=debug_logging)
    assert outcome.returncode == 0, outcome.log[-2000:]
    # the run really used the key and really wrote its journal, cache, account and card
    assert proxy.authorization == {f"Bearer {SECRET}"}
    for name in (".work/journal.jsonl", ".work/llm_cache.sqlite", "run_account.json", "cocktail.json"):
        assert (out / name).is_file(), name
    assert "DEBUG" in outcome.log
    assert files_holding(SECRET, *written_places(tmp_path)) == []


@pytest.mark.parametrize("where", ["user info", "query parameter"])
def test_a_key_given_on_the_command_line_is_refused_and_never_echoed(proxy: CountingProxy, tmp_path: Path,
                                                                     where: str) -> None:
    host = proxy.base_url.removeprefix("http://")
    url = f"http://user:{SECRET}@{host}" if where == "user info" else f"{proxy.base_url}?api_key={SECRET}"
    proxy.reset()
    corpus = small_cocktail_corpus(tmp_path / "input", documents=3)
    for name, argv in (("airbench", airbench_argv(url)), ("cocktail", cocktail_argv(corpus, url))):
        outcome = run_forked(cli(argv(tmp_path / name)), tmp_path / f"{name}.log", setup=debug_logging)
        assert outcome.returncode == 2, outcome.log[-2000:]
        assert "credential" in outcome.log and SECRET not in outcome.log
    assert proxy.requests == 0
    assert files_holding(SECRET, *written_places(tmp_path)) == []
