"""The AIR-Bench generation pipeline (arXiv 2412.13102, section 2 and Appendix A)."""

from airbench_mteb.generation.airbench.pipeline import (
    AirBenchConfig,
    AirBenchPipeline,
    generate_airbench,
)

__all__ = ["AirBenchConfig", "AirBenchPipeline", "generate_airbench"]
