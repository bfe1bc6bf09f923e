"""The resampling flags every statistics command takes (``--resamples``, ``--seed``, ``--level``; ``--correction``
and ``--alpha`` where it tests a family of comparisons), read and checked in one place: a bad value is an
:class:`~airbench_mteb.data.errors.OptionError`, one line and exit 2 through the CLI's error path. No command reads
the environment for them."""

from __future__ import annotations

import argparse

from airbench_mteb.metrics.resampling import CORRECTIONS, DEFAULT_RESAMPLING, METHODS, Method, Resampling
from airbench_mteb.report.options import check_resampling_options


def add_resampling_flags(parser: argparse.ArgumentParser, *, alpha_help: str | None = None,
                         method: Method | None = None, method_help: str = "") -> None:
    """``--resamples``, ``--seed`` and ``--level``; with ``alpha_help`` (what alpha decides) ``--correction`` and
    ``--alpha``; with ``method`` (its default) ``--ci-method``."""
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLING.n_resamples,
                        help=f"bootstrap resamples and random sign vectors (default {DEFAULT_RESAMPLING.n_resamples})")
    parser.add_argument("--seed", type=int, default=DEFAULT_RESAMPLING.seed,
                        help=f"seed of the resampling (default {DEFAULT_RESAMPLING.seed})")
    parser.add_argument("--level", type=float, default=DEFAULT_RESAMPLING.level,
                        help=f"confidence level of the intervals (default {DEFAULT_RESAMPLING.level})")
    if method is not None:
        parser.add_argument("--ci-method", choices=METHODS, default=method,
                            help=f"bootstrap interval method (default {method}{method_help})")
    if alpha_help is not None:
        parser.add_argument("--correction", choices=CORRECTIONS, default="holm",
                            help="p-value adjustment over the comparisons' family (default holm)")
        parser.add_argument("--alpha", type=float, default=0.05, help=f"{alpha_help} (default 0.05)")


def resampling_from(args: argparse.Namespace) -> Resampling:
    """The :class:`Resampling` the flags ask for, checked (with ``--alpha`` where there is one) before any file is
    read."""
    resampling = Resampling(method=vars(args).get("ci_method", DEFAULT_RESAMPLING.method), n_resamples=args.resamples,
                            seed=args.seed, level=args.level)
    check_resampling_options(resampling, **({"alpha": args.alpha} if "alpha" in vars(args) else {}))
    return resampling
