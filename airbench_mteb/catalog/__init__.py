"""Declarative catalogs: which datasets exist, for all three families. Task classes are generated from them.

* ``airbench``: ``airbench.json``, one AIR-Bench dataset per entry;
* ``cocktail``: ``cocktail.json``, the 16 co*cktail datasets;
* ``irsc``: IRSC's schema (query types, languages, settings) and ``irsc.json`` (tasks, hub sources);
* ``user``: the user's own datasets of every family (``register-dataset``);
* ``packaged``: the names the packaged catalogs and the benchmarks hold (no user's task may take one);
* ``combined``: the AIR-Bench entries tasks are made of (packaged, then the user's);
* ``entries``: what they share (validated, frozen entries; errors naming file, entry and field).
"""

from __future__ import annotations

from airbench_mteb.catalog.airbench import AirBenchEntry
from airbench_mteb.catalog.cocktail import CocktailEntry, cocktail_entries
from airbench_mteb.catalog.combined import airbench_entries
from airbench_mteb.catalog.irsc import IRSCCatalog, irsc_catalog
from airbench_mteb.catalog.user import user_catalog

__all__ = ["AirBenchEntry", "CocktailEntry", "IRSCCatalog", "airbench_entries", "cocktail_entries", "irsc_catalog",
           "user_catalog"]
