"""Any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, hosted APIs) via ``openai``."""

from __future__ import annotations

from typing import Any

from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import (
    Completion,
    LLMParams,
    Messages,
    TransientLLMError,
)
from airbench_mteb.generation.llm.credentials import api_key_from_env, refuse_credentials

# how each server family takes a JSON schema; "none" relies on the prompt and the parser alone
STRUCTURED_OUTPUT_MODES = ("json_object_schema", "json_schema", "guided_json", "none")


class OpenAICompatibleBackend:
    """Chat completions through ``openai.AsyncOpenAI``; the API key comes from the environment only.

    ``structured_output`` says how the server takes a JSON schema: ``json_object_schema``
    (llama.cpp server), ``json_schema`` (OpenAI, vLLM), ``guided_json`` (older vLLM) or ``none``.
    """

    kind = "openai"

    def __init__(self, model: str, base_url: str | None = None, *, timeout: float = 120.0,
                 structured_output: str = "json_object_schema") -> None:
        import openai

        if structured_output not in STRUCTURED_OUTPUT_MODES:
            raise GenerationError(f"structured_output must be one of {STRUCTURED_OUTPUT_MODES}, got {structured_output!r}")
        self.model = model
        self.structured_output = structured_output
        self._openai = openai
        # retries belong to the LLMClient (counted there), not to the openai package
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key_from_env(), timeout=timeout,
                                          max_retries=0)
        # the endpoint actually used (the openai package falls back to OPENAI_BASE_URL, then its default)
        self.endpoint = str(self._client.base_url).rstrip("/")
        refuse_credentials(self.endpoint)
        self.identity = {"kind": self.kind, "endpoint": self.endpoint, "model": model}

    def _schema_arguments(self, schema: dict[str, Any] | None) -> dict[str, Any]:
        if schema is None or self.structured_output == "none":
            return {}
        if self.structured_output == "json_object_schema":
            return {"response_format": {"type": "json_object", "schema": schema}}
        if self.structured_output == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": "output", "schema": schema}}}
        return {"extra_body": {"guided_json": schema}}

    async def complete(self, messages: Messages, params: LLMParams) -> Completion:
        openai = self._openai
        extra: dict[str, Any] = self._schema_arguments(params.json_schema)
        if params.top_logprobs:
            extra.update(logprobs=True, top_logprobs=params.top_logprobs)
        try:
            response = await self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=params.temperature,
                max_tokens=params.max_tokens, seed=params.seed, **extra)
        except openai.RateLimitError:
            raise TransientLLMError("http_429") from None
        except openai.APITimeoutError:
            raise TransientLLMError("timeout") from None
        except openai.APIConnectionError:
            raise TransientLLMError("connection") from None
        except openai.APIStatusError as error:
            if error.status_code >= 500:
                raise TransientLLMError(f"http_{error.status_code}") from None
            raise GenerationError(f"{self.endpoint} rejected the request with HTTP "
                                  f"{error.status_code} (model {self.model})") from None
        if not response.choices:
            raise TransientLLMError("empty_response")
        choice = response.choices[0]
        top: dict[str, float] = {}
        if params.top_logprobs and choice.logprobs and choice.logprobs.content:
            top = {alt.token: alt.logprob for alt in choice.logprobs.content[0].top_logprobs}
        usage = response.usage
        return Completion(text=choice.message.content or "", tokens_in=usage.prompt_tokens if usage else 0,
                          tokens_out=usage.completion_tokens if usage else 0, top_logprobs=top)

    async def aclose(self) -> None:
        await self._client.close()
