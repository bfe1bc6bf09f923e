"""Build a backend, or a whole client, from command-line style settings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from airbench_mteb.generation import checks
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.account import Account
from airbench_mteb.generation.llm.base import Backend
from airbench_mteb.generation.llm.cache import ResponseCache
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.generation.llm.credentials import refuse_credentials
from airbench_mteb.generation.llm.openai_backend import STRUCTURED_OUTPUT_MODES
from airbench_mteb.settings import LLM_API_KEY_ENV, llm_api_keys

BACKENDS = ("llamacpp", "openai")


def make_backend(name: str, *, model: str | None = None, base_url: str | None = None, timeout: float = 120.0,
                 structured_output: str = "json_object_schema", n_threads: int = 1) -> Backend:
    """``llamacpp``: ``model`` is a GGUF path (default: the bundled SmolLM2). ``openai``: ``model`` is the
    served model name and ``base_url`` the endpoint (default: api.openai.com)."""
    if name == "llamacpp":
        from airbench_mteb.generation.llm.llamacpp_backend import LlamaCppBackend

        return LlamaCppBackend(model, n_threads=n_threads)
    if name == "openai":
        from airbench_mteb.generation.llm.openai_backend import OpenAICompatibleBackend

        if not model:
            raise GenerationError("the openai backend needs --model (the name the server serves)")
        return OpenAICompatibleBackend(model, base_url, timeout=timeout, structured_output=structured_output)
    raise GenerationError(f"unknown backend {name!r}; choose one of {BACKENDS}")


@dataclass(frozen=True)
class LLMOptions:
    """The LLM options every generator shares, checked when built: a bad value is refused before any
    model is loaded or any call is made."""

    backend: str = "llamacpp"
    model: str | None = None  # GGUF path (llamacpp) or served model name (openai)
    base_url: str | None = None
    structured_output: str = "json_object_schema"
    concurrency: int = 4
    timeout: float = 120.0  # seconds per call
    max_retries: int = 6
    price_in: float = 0.0  # per million prompt tokens
    price_out: float = 0.0  # per million completion tokens
    threads: int = 1  # llama.cpp threads

    def __post_init__(self) -> None:
        checks.one_of("--backend", self.backend, BACKENDS)
        checks.one_of("--structured-output", self.structured_output, STRUCTURED_OUTPUT_MODES)
        if self.backend == "openai" and not self.model:
            raise GenerationError("the openai backend needs --model (the name the server serves)")
        if self.base_url:
            check_base_url(self.base_url)
        check_default_endpoint(self.backend, self.base_url)
        checks.whole_number("--concurrency", self.concurrency, 1)
        checks.number("--timeout", self.timeout, 0, above=True)
        checks.whole_number("--max-retries", self.max_retries, 0)
        checks.number("--price-in", self.price_in, 0)
        checks.number("--price-out", self.price_out, 0)
        checks.whole_number("--threads", self.threads, 1)

    def backend_instance(self) -> Backend:
        """The backend (a llamacpp model is loaded here)."""
        return make_backend(self.backend, model=self.model, base_url=self.base_url, timeout=self.timeout,
                            structured_output=self.structured_output, n_threads=self.threads)

    def client(self, cache: Path | None) -> LLMClient:
        """A client over a new backend, answers kept in the ``cache`` file (opened first: a bad cache path
        fails before a model is loaded)."""
        responses = ResponseCache(cache) if cache is not None else None
        return LLMClient(self.backend_instance(), responses, concurrency=self.concurrency,
                         max_retries=self.max_retries, account=Account(price_in=self.price_in, price_out=self.price_out))


def check_default_endpoint(backend: str, base_url: str | None) -> None:
    """The openai backend without a base URL calls api.openai.com (the openai package's default, unless
    $OPENAI_BASE_URL names another), which answers nothing without a key: refused at once, not after every
    call has failed its retries."""
    if backend == "openai" and not base_url and not os.environ.get("OPENAI_BASE_URL") and not llm_api_keys():
        raise GenerationError(f"the openai backend without --base-url (base-url= in an --llm spec) calls "
                              f"api.openai.com, which needs an API key in {LLM_API_KEY_ENV} or OPENAI_API_KEY; "
                              "for a local server give its URL, e.g. http://127.0.0.1:8000/v1")


def check_base_url(url: str, option: str = "--base-url") -> None:
    """An http(s) URL with a host and without a credential (the endpoint is journaled and published)."""
    try:
        urlsplit(url).port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:  # the URL is not repeated: it may hold a key
        raise GenerationError(f"{option} is not a URL ({error})") from None
    refuse_credentials(url)  # before the message below repeats the URL
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GenerationError(f"{option} {url!r} must be an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1")
