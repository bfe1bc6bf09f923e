"""A metric key of the plugin's scores as a value (after ir_measures' ``Measure``: a name with its parameters).

Every per-cut-off key the plugin writes into MTEB's results has one shape::

    [<delta>_]<measure>_at_<k>[_<source>][_tie_neutral][_ties_to_<favoured>][_<stat>]

``ndcg_at_10``, ``share_at_5_human``, ``relative_delta_ndcg_at_1_llm_tie_neutral``, ``ndcg_at_10_tie_neutral_ci_low``,
``relative_delta_map_at_3_llm_ties_to_human``, ``delta_ndsr_at_5_llm_p_value``. :class:`MetricKey` writes one
(``str(key)``) and reads one back (:meth:`MetricKey.parse`), so no module builds or matches these strings by hand.
A key is read from its end (its statistic, the favoured source, the tie-neutral mark), so a source name may hold
underscores, but not end in one of those parts: such a name is refused where the key is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DELTAS = ("relative_delta", "delta")  # co*cktail's Relative Δ, ΔNDSR's difference
STATS = ("ci_low", "ci_high", "p_value", "ci_method")  # what is said of a value: its interval, test, interval method
TIE_NEUTRAL = "tie_neutral"
_TIES_TO = "_ties_to_"
_MEASURE = re.compile(r"[a-z][a-z0-9_]*")
_HEAD = re.compile(rf"(?:(?P<delta>{'|'.join(DELTAS)})_)?(?P<measure>[a-z][a-z0-9_]*?)_at_(?P<k>[1-9][0-9]*)"
                   r"(?:_(?P<source>.+))?", re.DOTALL)


@dataclass(frozen=True)
class MetricKey:
    """One key: a ``measure`` at cut-off ``k``, optionally of one ``source``, as a ``delta`` against the reference,
    in its tie-neutral form, with every tie broken toward ``ties_to``, or one ``stat`` of such a value."""

    measure: str  # "ndcg", "map", "share", "ndsr", "tie_decided_queries", ...
    k: int
    source: str | None = None
    delta: str | None = None  # one of DELTAS
    tie_neutral: bool = False
    ties_to: str | None = None  # the source every tie between sources goes to
    stat: str | None = None  # one of STATS

    def __post_init__(self) -> None:
        if not _MEASURE.fullmatch(self.measure) or re.search(r"_at_[0-9]", self.measure) \
                or self.measure.startswith(tuple(f"{delta}_" for delta in DELTAS)):
            raise ValueError(f"not a measure name of a metric key: {self.measure!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"a metric key's cut-off is a positive integer, got {self.k!r}")
        if self.delta is not None and self.delta not in DELTAS:
            raise ValueError(f"unknown delta {self.delta!r}: one of {DELTAS}")
        if self.stat is not None and self.stat not in STATS:
            raise ValueError(f"unknown statistic {self.stat!r}: one of {STATS}")
        for name in (self.source, self.ties_to):
            if name is not None and not _readable_name(name):
                raise ValueError(f"source name {name!r} cannot be read back from a metric key: it is empty, holds "
                                 f"{_TIES_TO!r} or ends in a key's own part ({TIE_NEUTRAL}, ties_to, {', '.join(STATS)})")

    def __str__(self) -> str:
        parts = [*([self.delta] if self.delta else []), self.measure, "at", str(self.k)]
        parts += [name for name in (self.source, TIE_NEUTRAL if self.tie_neutral else None) if name]
        parts += ["ties_to", self.ties_to] if self.ties_to is not None else []
        return "_".join([*parts, *([self.stat] if self.stat else [])])

    @classmethod
    def parse(cls, key: str) -> MetricKey | None:
        """The key ``key`` writes, or None for a key of another shape (``ci_level``, ``tie_checked_queries``)."""
        rest, stat = _strip_suffix(key, STATS)
        rest, ties_to = (rest.rpartition(_TIES_TO)[0], rest.rpartition(_TIES_TO)[2]) if _TIES_TO in rest else (rest, None)
        rest, neutral = _strip_suffix(rest, (TIE_NEUTRAL,))
        match = _HEAD.fullmatch(rest)
        if match is None:
            return None
        try:
            parsed = cls(match["measure"], int(match["k"]), match["source"], match["delta"], neutral is not None,
                         ties_to, stat)
        except ValueError:
            return None
        return parsed if str(parsed) == key else None


def _strip_suffix(key: str, suffixes: tuple[str, ...]) -> tuple[str, str | None]:
    """``key`` without its ``_<suffix>`` and the suffix, or ``key`` and None."""
    for suffix in suffixes:
        if key.endswith(f"_{suffix}"):
            return key.removesuffix(f"_{suffix}"), suffix
    return key, None


def _readable_name(name: str) -> bool:
    return bool(name) and _TIES_TO not in f"_{name}" and not any(
        name == part or name.endswith(f"_{part}") for part in (TIE_NEUTRAL, "ties_to", *STATS))
