"""API keys: read from the environment only, and kept out of everything a run writes or prints.

An endpoint URL that carries a credential (``https://user:key@host/v1``, ``...?api_key=KEY``) is
refused before anything is written: the URL is recorded in journals, manifests and cache keys, and
the HTTP stack logs it with every request.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.settings import LLM_API_KEY_ENV, llm_api_keys

# query parameters whose values are credentials (api_key, api-key, key, access_token, sig, ...)
_SECRET_PARAMETER = re.compile(r"key|token|secret|password|passwd|auth|sig", re.IGNORECASE)
_MIN_SECRET = 4  # shorter strings would blank ordinary words in messages


def api_key_from_env() -> str:
    keys = llm_api_keys()
    return keys[0] if keys else "no-key"  # local servers ignore the key, the client insists on one


def _secret_parameters(query: str) -> list[str]:
    return [name for name, _ in parse_qsl(query, keep_blank_values=True) if _SECRET_PARAMETER.search(name)]


def public_url(url: str) -> str:
    """``url`` without user info and without credential query parameters (safe to show in a message)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    query = urlencode([(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True)
                       if not _SECRET_PARAMETER.search(name)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def refuse_credentials(url: str) -> None:
    """Raise a GenerationError (that does not repeat the secret) if ``url`` carries a credential."""
    parts = urlsplit(url)
    where = []
    if parts.username is not None or parts.password is not None:
        where.append("user info (user:key@)")
    where += [f"query parameter {name!r}" for name in _secret_parameters(parts.query)]
    if where:
        variable = LLM_API_KEY_ENV
        raise GenerationError(f"the endpoint {public_url(url)} was given with a credential in its "
                              f"{' and '.join(where)}; URLs are written to journals, manifests and logs, so "
                              f"pass the key in the {variable} environment variable instead")


def redact(text: str) -> str:
    """``text`` with every configured API key blanked."""
    for secret in llm_api_keys():
        if len(secret) >= _MIN_SECRET:
            text = text.replace(secret, "[redacted]")
    return text
