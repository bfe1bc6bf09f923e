"""Which splits and subsets of a task a command evaluates or exports: only ones the task has."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from airbench_mteb.data.errors import OptionError

if TYPE_CHECKING:
    from mteb import AbsTask


def check_selection(task: AbsTask, splits: Sequence[str] | None, subsets: Sequence[str] | None, *,
                    splits_option: str = "--eval-splits", subsets_option: str = "--subsets") -> None:
    """Every requested split and subset is one ``task`` has: an unknown one would be skipped in silence (or
    fail deep inside mteb), so it is refused before any data is read.

    Raises:
        OptionError: naming the option, the unknown names and the task's own.
    """
    for option, wanted, own in ((splits_option, splits, task.metadata.eval_splits),
                                (subsets_option, subsets, task.metadata.hf_subsets)):
        unknown = [name for name in wanted or () if name not in own]
        if unknown:
            raise OptionError(f"{option} {' '.join(unknown)}: not in {task.metadata.name}, whose choices are "
                              f"{', '.join(own)}")
