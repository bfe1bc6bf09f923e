"""The plugin's settings: the one module that reads ``AIRBENCH_MTEB_*`` environment variables.

Tasks are instantiated by MTEB (``mteb run``, ``mteb.get_tasks``), so where their data live cannot
be passed as an argument; it comes from here. The environment gives the defaults; a command that
takes ``--data-dir`` (or a script) replaces them for the process with :func:`configure`, so nothing
below the CLI writes ``os.environ``. Library functions take what they need as typed arguments, or
read :func:`current_settings` when MTEB is the caller.

==============================  ==========================================================
variable                        setting
==============================  ==========================================================
``AIRBENCH_MTEB_DATA_DIR``      ``data_dir``: local mirror root (else the hub)
``AIRBENCH_MTEB_CACHE``         ``cache_dir``: hub zips unpacked (``~/.cache/airbench_mteb``)
``AIRBENCH_MTEB_EMBEDDING_CACHE`` ``embedding_cache``: content-keyed vectors; ``off`` disables
``AIRBENCH_MTEB_BM25_INDEX``    ``bm25_index``: content-keyed BM25 indexes (``<cache>/bm25``); ``off``: one per process
``AIRBENCH_MTEB_CATALOG``       ``user_catalog``: datasets added with ``register-dataset``
``AIRBENCH_MTEB_KEEP_TITLES``   ``keep_titles``: keep document titles in co*cktail corpora (``1``/``0``, ...)
``AIRBENCH_MTEB_CI``            ``ci``: confidence intervals in results, ``bca`` (default), ``percentile`` or ``off``
``AIRBENCH_MTEB_CI_RESAMPLES``  ``ci_resamples``: bootstrap resamples of those intervals (9,999)
``AIRBENCH_MTEB_LLM_API_KEY``   the LLM API key (else ``OPENAI_API_KEY``): :func:`llm_api_keys`
==============================  ==========================================================

API keys are not part of :class:`Settings`: they are read at the moment of use and never kept, so
no settings object, log line or journal can carry one.

``AIRBENCH_MTEB_NO_HOOK`` is read by the start-up hook (``_airbench_mteb_hook.py``), which runs
in every interpreter before this package can be imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

DATA_DIR_ENV = "AIRBENCH_MTEB_DATA_DIR"
CACHE_ENV = "AIRBENCH_MTEB_CACHE"
EMBEDDING_CACHE_ENV = "AIRBENCH_MTEB_EMBEDDING_CACHE"
BM25_INDEX_ENV = "AIRBENCH_MTEB_BM25_INDEX"
USER_CATALOG_ENV = "AIRBENCH_MTEB_CATALOG"
KEEP_TITLES_ENV = "AIRBENCH_MTEB_KEEP_TITLES"
LLM_API_KEY_ENV = "AIRBENCH_MTEB_LLM_API_KEY"
CI_ENV = "AIRBENCH_MTEB_CI"
CI_RESAMPLES_ENV = "AIRBENCH_MTEB_CI_RESAMPLES"
CI_METHODS = ("bca", "percentile")  # what AIRBENCH_MTEB_CI may name besides "off"
DEFAULT_CI_RESAMPLES = 9999
CI_RESAMPLES_RANGE = (99, 1_000_000)  # fewer gives no usable 95 % bound; more only costs time


# where an LLM API key is looked for, first set wins (OpenAI's own name as the fallback)
API_KEY_VARIABLES = (LLM_API_KEY_ENV, "OPENAI_API_KEY")

DEFAULT_CACHE_DIR = Path("~/.cache/airbench_mteb").expanduser()
DEFAULT_EMBEDDING_CACHE = DEFAULT_CACHE_DIR / "embeddings"
DEFAULT_USER_CATALOG = Path("~/.config/airbench-mteb/catalog.json").expanduser()
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_OFF = {*_FALSE, "none"}  # what switches a feature off (the embedding cache, the intervals)


def missing_folder_hint(path: Path) -> str:
    """What to try instead of a data folder that is not there: a folder beside it with a name close to its name,
    and the command that writes a small one."""
    import difflib

    try:
        beside = [entry.name for entry in path.parent.iterdir() if entry.is_dir()]
    except OSError:  # no parent folder, or one that cannot be listed
        beside = []
    close = difflib.get_close_matches(path.name, beside, n=1)
    near = f"did you mean {close[0]!r}? " if close else ""
    return f"; {near}`airbench-mteb sample-data --out DIR` writes one"


class SettingsError(Exception):
    """A setting that cannot be used (e.g. a data directory that is not a folder); names the variable.

    Not a ValueError: mteb takes a ValueError raised while a task is built for "no subset matches the
    language filter" and drops the task without a word."""


@dataclass(frozen=True)
class Settings:
    """Everything the plugin reads from its environment, resolved to typed values."""

    data_dir: Path | None = None
    cache_dir: Path = DEFAULT_CACHE_DIR
    embedding_cache: Path | None = DEFAULT_EMBEDDING_CACHE  # None: switched off
    bm25_index: Path | None = DEFAULT_CACHE_DIR / "bm25"  # None: switched off (each process indexes anew)
    user_catalog: Path = DEFAULT_USER_CATALOG
    keep_titles: bool = False
    ci: str | None = CI_METHODS[0]  # the bootstrap method of the results' intervals; None: no intervals
    ci_resamples: int = DEFAULT_CI_RESAMPLES

    def __post_init__(self) -> None:
        self._paths_as_paths()
        if self.ci is not None and self.ci not in CI_METHODS:
            raise SettingsError(f"confidence intervals {self.ci!r} are not one of {', '.join(CI_METHODS)} or off "
                                f"(${CI_ENV})")
        low, high = CI_RESAMPLES_RANGE
        if isinstance(self.ci_resamples, bool) or not isinstance(self.ci_resamples, int) \
                or not low <= self.ci_resamples <= high:
            raise SettingsError(f"{self.ci_resamples!r} bootstrap resamples: give a whole number from {low:,} to "
                                f"{high:,} (${CI_RESAMPLES_ENV})")
        if self.data_dir is not None and not self.data_dir.is_dir():
            raise SettingsError(f"the data directory {self.data_dir} is not a folder (--data-dir or ${DATA_DIR_ENV})"
                                f"{missing_folder_hint(self.data_dir)}")
        if self.cache_dir.exists() and not self.cache_dir.is_dir():
            raise SettingsError(f"the cache {self.cache_dir} is not a folder (${CACHE_ENV})")
        if self.bm25_index is not None and self.bm25_index.exists() and not self.bm25_index.is_dir():
            raise SettingsError(f"the BM25 index cache {self.bm25_index} is not a folder (${BM25_INDEX_ENV})")
        if not isinstance(self.keep_titles, bool):
            raise SettingsError(f"keep_titles must be True or False, got {self.keep_titles!r} (${KEEP_TITLES_ENV})")

    def _paths_as_paths(self) -> None:
        """``configure(data_dir="...")`` from a script: a str or other path-like becomes a Path; anything else is refused."""
        for name in ("data_dir", "cache_dir", "embedding_cache", "bm25_index", "user_catalog"):
            value = getattr(self, name)
            if value is None and name in ("data_dir", "embedding_cache", "bm25_index"):
                continue
            if not isinstance(value, (str, os.PathLike)):
                raise SettingsError(f"{name} must be a path, got {value!r} (${_VARIABLES[name]})")
            object.__setattr__(self, name, Path(value))

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every variable read and checked: the first that cannot be used raises a SettingsError naming it."""
        env = os.environ if environ is None else environ
        embedding_value = env.get(EMBEDDING_CACHE_ENV, "").strip()
        cache_dir = _path(env.get(CACHE_ENV)) or DEFAULT_CACHE_DIR
        bm25_value = env.get(BM25_INDEX_ENV, "").strip()
        return cls(
            data_dir=_path(env.get(DATA_DIR_ENV)),
            cache_dir=cache_dir,
            embedding_cache=None if embedding_value.lower() in _OFF else _path(embedding_value) or DEFAULT_EMBEDDING_CACHE,
            bm25_index=None if bm25_value.lower() in _OFF else _path(bm25_value) or cache_dir / "bm25",
            user_catalog=_user_catalog(env),
            keep_titles=_yes_or_no(env, KEEP_TITLES_ENV, default=False),
            ci=_ci_method(env.get(CI_ENV)),
            ci_resamples=_whole_number(env.get(CI_RESAMPLES_ENV), CI_RESAMPLES_ENV, DEFAULT_CI_RESAMPLES),
        )


def _path(value: str | None) -> Path | None:
    value = (value or "").strip()
    return Path(value).expanduser() if value else None


def _user_catalog(env: Mapping[str, str]) -> Path:
    return _path(env.get(USER_CATALOG_ENV)) or DEFAULT_USER_CATALOG


def _yes_or_no(env: Mapping[str, str], variable: str, *, default: bool) -> bool:
    """A switch: unset or empty gives ``default``; anything but the accepted words is an error (a typo must
    not silently mean "off")."""
    value = env.get(variable, "").strip()
    if not value:
        return default
    if value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise SettingsError(f"${variable}={value!r} is neither yes nor no: use one of {', '.join(_TRUE)} "
                        f"or {', '.join(_FALSE)}")


def _ci_method(value: str | None) -> str | None:
    value = (value or "").strip().lower()
    return None if value in _OFF else value or CI_METHODS[0]


def _whole_number(value: str | None, variable: str, default: int) -> int:
    value = (value or "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise SettingsError(f"${variable}={value!r} is not a whole number") from None


# the variable each setting is read from
_VARIABLES = {"data_dir": DATA_DIR_ENV, "cache_dir": CACHE_ENV, "embedding_cache": EMBEDDING_CACHE_ENV,
              "bm25_index": BM25_INDEX_ENV,
              "user_catalog": USER_CATALOG_ENV, "keep_titles": KEEP_TITLES_ENV, "ci": CI_ENV,
              "ci_resamples": CI_RESAMPLES_ENV}
_configured: Settings | None = None


def current_settings() -> Settings:
    """The settings :func:`configure` set for this process, else those of the environment (read now)."""
    return _configured if _configured is not None else Settings.from_environment()


def current_user_catalog() -> Path:
    """The user catalog's path alone. Registering tasks (when ``mteb`` is imported) reads only this, so a
    bad value of another variable fails the work that uses it, with its message, instead of every import."""
    return _configured.user_catalog if _configured is not None else _user_catalog(os.environ)


def configure(**changes: Any) -> Settings:
    """Replace settings for the rest of the process (the CLI's ``--data-dir``); returns the new settings.

    A variable whose setting is replaced is not read: ``--data-dir`` stands in for a stale
    ``$AIRBENCH_MTEB_DATA_DIR``."""
    global _configured
    if _configured is None:
        replaced = {_VARIABLES.get(name) for name in changes}
        base = Settings.from_environment({k: v for k, v in os.environ.items() if k not in replaced})
    else:
        base = _configured
    _configured = replace(base, **changes)
    return _configured


@contextmanager
def settings_applied(**changes: Any) -> Iterator[Settings]:
    """:func:`configure` for a block only (the demo's data folder, tests)."""
    global _configured
    before = _configured
    try:
        yield configure(**changes)
    finally:
        _configured = before


def llm_api_keys() -> list[str]:
    """The LLM API keys set in the environment, in order of precedence (read now, never kept)."""
    return [os.environ[name] for name in API_KEY_VARIABLES if os.environ.get(name)]
