"""LLM answers are keyed by what decides them, endpoint URLs never carry keys into files, and no answer is
bought twice (issue 14, finding 1 and the --base-url / repeated-call notes). Real backends: the bundled
SmolLM2 GGUF in process, and OpenAI-compatible clients (built without contacting any server)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from airbench_mteb.cli import main
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm import LLMClient, LLMParams, ResponseCache
from airbench_mteb.generation.llm.cache import cache_key
from airbench_mteb.generation.llm.llamacpp_backend import LlamaCppBackend, default_model_path, model_file_sha256
from airbench_mteb.generation.llm.openai_backend import OpenAICompatibleBackend
from tests.conftest import SAMPLE_DATA

SECRET = "sk-url-DO-NOT-STORE-41c7"
MESSAGES = [{"role": "user", "content": "Name one colour."}]
PARAMS = LLMParams(temperature=0.0, max_tokens=6, seed=1)


def test_same_model_name_on_two_endpoints_gives_two_cache_keys() -> None:
    a = OpenAICompatibleBackend("smollm2", "http://127.0.0.1:8001/v1")
    b = OpenAICompatibleBackend("smollm2", "http://127.0.0.1:8002/v1")
    same_as_a = OpenAICompatibleBackend("smollm2", "http://127.0.0.1:8001/v1/")
    assert a.identity == {"kind": "openai", "endpoint": "http://127.0.0.1:8001/v1", "model": "smollm2"}
    assert cache_key(a.identity, MESSAGES, PARAMS) != cache_key(b.identity, MESSAGES, PARAMS)
    assert cache_key(a.identity, MESSAGES, PARAMS) == cache_key(same_as_a.identity, MESSAGES, PARAMS)
    for other in (LLMParams(temperature=0.0, max_tokens=6, seed=2), LLMParams(temperature=0.5, max_tokens=6, seed=1)):
        assert cache_key(a.identity, MESSAGES, PARAMS) != cache_key(a.identity, MESSAGES, other)


def test_two_gguf_files_with_one_name_are_two_llms(tmp_path: Path) -> None:
    """Two folders each holding a ``model.gguf`` (the second one's bytes differ): the second is really called."""
    first, second = tmp_path / "a" / "model.gguf", tmp_path / "b" / "model.gguf"
    for path in (first, second):
        path.parent.mkdir()
        shutil.copyfile(default_model_path(), path)
    from gguf import GGUFReader

    last = max(GGUFReader(second).tensors, key=lambda tensor: tensor.data_offset)
    with second.open("r+b") as handle:  # one weight's bits changed: a whole GGUF file, and another file
        handle.seek(last.data_offset + last.n_bytes - 1)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 1]))
    assert model_file_sha256(first) != model_file_sha256(second)
    cache_path = tmp_path / "cache.sqlite"

    async def ask(path: Path) -> LLMClient:
        client = LLMClient(LlamaCppBackend(path), ResponseCache(cache_path))
        await client.complete(MESSAGES, PARAMS)
        await client.aclose()
        return client

    assert asyncio.run(ask(first)).account.calls == 1
    again = asyncio.run(ask(second))
    assert (again.account.calls, again.account.cache_hits) == (1, 0)
    assert asyncio.run(ask(first)).account.cache_hits == 1


def test_model_file_hash_is_memoised_by_path_size_and_time(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF one")
    assert model_file_sha256(path) == hashlib.sha256(b"GGUF one").hexdigest()
    path.write_bytes(b"GGUF two, longer")
    assert model_file_sha256(path) == hashlib.sha256(b"GGUF two, longer").hexdigest()


def test_identical_calls_in_flight_are_bought_once(tmp_path: Path) -> None:
    async def run() -> tuple[LLMClient, list[str]]:
        client = LLMClient(LlamaCppBackend(), ResponseCache(tmp_path / "cache.sqlite"), concurrency=2)
        answers = await asyncio.gather(*(client.complete(MESSAGES, PARAMS) for _ in range(3)))
        await client.aclose()
        return client, [a.text for a in answers]

    client, texts = asyncio.run(run())
    assert (client.account.calls, client.account.cache_hits) == (1, 2)
    assert len(set(texts)) == 1


def test_a_call_sent_by_a_killed_run_is_counted_as_repeated(tmp_path: Path) -> None:
    """The killed run marked the call as sent and died before its answer arrived: the next run buys it
    (it has to) and says so; a call whose answer was stored is never bought again."""
    backend = LlamaCppBackend()
    killed = ResponseCache(tmp_path / "cache.sqlite")
    assert killed.mark_sent(cache_key(backend.identity, MESSAGES, PARAMS), backend.identity) is False
    killed.close()

    async def run() -> LLMClient:
        client = LLMClient(backend, ResponseCache(tmp_path / "cache.sqlite"))
        await client.complete(MESSAGES, PARAMS)
        await client.complete(MESSAGES, PARAMS)
        return client

    client = asyncio.run(run())
    assert (client.account.calls, client.account.repeated, client.account.cache_hits) == (1, 1, 1)
    assert client.account.as_dict()["repeated"] == 1 and "1 repeating unanswered" in client.account.summary()
    assert client.cache is not None and client.cache.unanswered() == 0 and len(client.cache) == 1
    asyncio.run(client.aclose())


@pytest.mark.parametrize("url", [f"http://user:{SECRET}@127.0.0.1:9/v1", f"http://127.0.0.1:9/v1?api_key={SECRET}",
                                 f"http://127.0.0.1:9/v1?api-version=1&access_token={SECRET}"])
def test_an_endpoint_with_a_key_inside_is_refused_before_anything_is_written(url: str, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture) -> None:
    corpus = SAMPLE_DATA / "cocktail" / "nq-utd"
    out = tmp_path / "out"
    assert main(["generate", "cocktail", "--corpus", str(corpus), "--out", str(out),
                 "--llm", "remote", "openai", "model=smollm2", f"base-url={url}"]) == 2
    assert main(["generate", "cocktail", "--corpus", str(corpus), "--out", str(out), "--backend", "openai",
                 "--model", "smollm2", "--base-url", url, "--llm", "remote"]) == 2
    lee = Path(__import__("gensim").__file__).parent / "test" / "test_data" / "lee_background.cor"
    assert main(["generate", "airbench", "--corpus", str(lee), "--domain", "news", "--language", "en",
                 "--out", str(out), "--backend", "openai", "--model", "smollm2", "--base-url", url]) == 2
    printed = capsys.readouterr()
    assert "AIRBENCH_MTEB_LLM_API_KEY" in printed.err and "127.0.0.1:9/v1" in printed.err
    assert SECRET not in printed.out + printed.err
    assert not out.exists()
    with pytest.raises(GenerationError, match="credential"):
        OpenAICompatibleBackend("smollm2", url)
