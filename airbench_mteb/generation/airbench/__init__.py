"""The AIR-Bench generation pipeline (arXiv 2412.13102, section 2 and Appendix A).

Like every generator: ``config`` holds the settings, ``generate`` the resumable run returning a
:class:`~airbench_mteb.generation.summary.GenerationSummary`.
"""

from airbench_mteb.generation.airbench.config import AirBenchConfig
from airbench_mteb.generation.airbench.generate import AirBenchPipeline, generate, prepare_corpus

__all__ = ["AirBenchConfig", "AirBenchPipeline", "generate", "prepare_corpus"]
