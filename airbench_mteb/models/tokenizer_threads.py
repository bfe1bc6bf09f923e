"""A Hugging Face fast tokenizer's threads while the plugin encodes.

``mteb run`` sets ``TOKENIZERS_PARALLELISM=false`` for the whole process, whatever the user set, so each
batch is tokenized on one core while a GPU waits for it (on an H100, 50,000 passages at batch 32: 8.4 s of
tokenizing on one core against 1.3 s with the tokenizer's threads). The setting guards against a deadlock:
a process forked after the tokenizer's thread pool ran inherits the pool without its threads, and hangs
the first time it tokenizes in parallel. So the threads are given back only for the length of an encode
call (nothing forks during one: mteb's loaders run in-process), the variable is put back afterwards, and
never in a forked child of the process that registered the plugin (its parent may have used the pool). A
value the user set before mteb started is kept as it is: :func:`keep_user_setting` reads it when the plugin
registers with mteb (:func:`airbench_mteb.register_all`), before mteb's ``run`` replaces it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

VARIABLE = "TOKENIZERS_PARALLELISM"
USER_SETTING: str | None = None  # the user's value, read by keep_user_setting
_READ_BY: int | None = None  # the process that read it: a forked child keeps this value, so it can tell it is one


def keep_user_setting() -> None:
    """Read the user's value once, before mteb's ``run`` sets the variable for the whole process."""
    global USER_SETTING, _READ_BY
    if _READ_BY is None:
        USER_SETTING, _READ_BY = os.environ.get(VARIABLE), os.getpid()


@contextmanager
def tokenizer_threads() -> Iterator[None]:
    """Fast tokenizers may use their threads inside this block (unless the user set the variable, or this
    process is not the one that read the user's setting: a fork of it, or one that never registered the plugin)."""
    if USER_SETTING is not None or os.getpid() != _READ_BY:
        yield
        return
    before = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = "true"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before
