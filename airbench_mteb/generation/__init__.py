"""Benchmark generation: the three families' pipelines and what they share.

- ``airbench``: the AIR-Bench pipeline (LLM queries, hard negatives, quality control);
- ``cocktail``: co*cktail-style mixed-source corpora from a BEIR corpus, and their quality report;
- ``irsc``: the IRSC benchmark from paired source data;
- ``llm``: the LLM backends behind one interface and the client that adds limits, retries, cache and account;
- shared: the journal every finished unit of work is written to (``store``), the encoders and rerankers several
  generators use (``shared_models``), the option checks (``checks``), a run's summary (``summary``) and the
  error family (``errors``, :class:`GenerationError`).
"""

from airbench_mteb.generation.errors import GenerationError

__all__ = ["GenerationError"]
