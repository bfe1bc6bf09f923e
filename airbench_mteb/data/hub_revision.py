"""The commit a hub revision (a branch such as ``main``) points at, so results name the data they came from.

A branch moves when its repository is updated; two runs on ``main`` a month apart may have read
different data. Results record the commit SHA instead: asked of the hub, or, offline, read from the
local hub cache (``refs/<branch>``), which holds the commit the files in the cache came from.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

logger = logging.getLogger(__name__)
_SHA = re.compile(r"[0-9a-f]{40}")


@cache
def resolve_revision(repo: str, revision: str) -> str | None:
    """The commit SHA of ``revision`` of the dataset ``repo``, or None when neither the hub nor its cache says."""
    if _SHA.fullmatch(revision):
        return revision
    try:
        from huggingface_hub import HfApi

        return str(HfApi().dataset_info(repo, revision=revision).sha)
    except Exception:  # offline, gated, or unknown: the local cache may still know the commit
        return _cached_commit(repo, revision)


def _cached_commit(repo: str, revision: str) -> str | None:
    from huggingface_hub.constants import HF_HUB_CACHE

    ref = Path(HF_HUB_CACHE) / f"datasets--{repo.replace('/', '--')}" / "refs" / revision
    try:
        sha = ref.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return sha if _SHA.fullmatch(sha) else None


def hub_fingerprint(repos: Iterable[str], revision: str) -> str:
    """``hub-<16 hex>`` over the commits of ``repos`` at ``revision``; a repo whose commit cannot be resolved
    counts by its branch name (logged once), so results stay comparable with runs that could not resolve it either."""
    commits = {}
    for repo in sorted(set(repos)):
        sha = resolve_revision(repo, revision)
        if sha is None:
            _warn_unresolved(repo, revision)
        commits[repo] = sha or f"unresolved:{revision}"
    return "hub-" + hashlib.sha256(json.dumps(commits, sort_keys=True).encode()).hexdigest()[:16]


@cache
def _warn_unresolved(repo: str, revision: str) -> None:
    logger.warning("%s: cannot tell which commit %r is (hub unreachable, not in the local hub cache); results record "
                   "the branch name, which does not change when the data do", repo, revision)
