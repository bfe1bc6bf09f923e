"""How an uncertainty was computed: the one record the source-bias and SSCI/RCCI outputs carry beside their numbers,
and the choices it names (interval methods, p-value corrections). Free of numpy and scipy: the command line's
options read it before anything is computed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from airbench_mteb.settings import current_settings

Method = Literal["BCa", "percentile"]  # bootstrap interval methods (metrics.bootstrap)
METHODS: tuple[Method, ...] = ("BCa", "percentile")
Correction = Literal["holm", "bonferroni", "bh", "none"]  # p-value adjustments (metrics.significance)
CORRECTIONS: tuple[Correction, ...] = ("holm", "bonferroni", "bh", "none")

TEST = "paired-randomization"  # the two-sided sign-flip test of metrics.significance


@dataclass(frozen=True)
class Resampling:
    """Bootstrap intervals at ``level`` by ``method`` and randomization tests, both from ``n_resamples`` seeded draws.

    ``method`` (``BCa`` or ``percentile``) is what is asked for; a record kept with computed intervals
    holds what they used instead (:meth:`common_method`: BCa falls back to percentile where it is
    undefined). The tests enumerate every sign vector when 2^n <= ``n_resamples``.
    """

    method: Method = "BCa"
    n_resamples: int = 9999
    seed: int = 0  # fixed, so a rerun writes the same numbers
    level: float = 0.95
    test: str = TEST

    @classmethod
    def from_setting(cls, setting: str, n_resamples: int) -> Resampling:
        """From ``AIRBENCH_MTEB_CI``'s value (``bca`` or ``percentile``, any case) and its resamples."""
        method = next((name for name in METHODS if name.lower() == setting.lower()), None)
        if method is None:
            raise ValueError(f"unknown interval method {setting!r}; use one of {', '.join(METHODS)}")
        return cls(method=method, n_resamples=n_resamples)

    def draws(self) -> dict[str, int]:
        """The keyword arguments of a seeded test or resampling: ``n_resamples`` and ``seed``."""
        return {"n_resamples": self.n_resamples, "seed": self.seed}

    def interval(self) -> dict[str, Any]:
        """The keyword arguments of a bootstrap interval (:mod:`airbench_mteb.metrics.bootstrap`)."""
        return {"level": self.level, "method": self.method, **self.draws()}

    def common_method(self, used: Iterable[str]) -> str:
        """The method to record once for intervals that used ``used``: the one asked for if any used it
        (the others fell back to percentile where BCa is undefined and say so one by one)."""
        used = list(used)
        return self.method if self.method in used or not used else used[0]


DEFAULT_RESAMPLING = Resampling()  # what a report computes unless told otherwise


# The interval settings a results row was asked for, kept with it so a rerun into the same folder can compare.
CI_SETTINGS = "interval_settings"  # not ci_*: those keys exist only where intervals do


def settings_label(resampling: Resampling | None) -> str:
    """How a results row records the interval settings asked for: ``off``, or method, resamples, level and seed."""
    if resampling is None:
        return "off"
    return f"{resampling.method}, {resampling.n_resamples} resamples, level {resampling.level}, seed {resampling.seed}"


def recorded_settings(row: Mapping[str, Any]) -> str:
    """The interval settings a results row was computed with: its record (every row the plugin writes has one)."""
    return str(row.get(CI_SETTINGS, "unrecorded settings"))


def configured_resampling() -> Resampling | None:
    """What the settings ask for (``AIRBENCH_MTEB_CI``, ``AIRBENCH_MTEB_CI_RESAMPLES``, ``--no-ci``); None: no intervals."""
    settings = current_settings()
    return None if settings.ci is None else Resampling.from_setting(settings.ci, settings.ci_resamples)


def with_interval(value: float, interval: tuple[float, float] | None) -> str:
    """How tables show a number with its uncertainty: ``0.7272 [0.70, 0.75]``, or ``0.7272`` without an interval."""
    return f"{value:.4f}" if interval is None else f"{value:.4f} [{interval[0]:.2f}, {interval[1]:.2f}]"
