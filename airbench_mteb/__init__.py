"""airbench-mteb: AIR-Bench, co*cktail and IRSC as MTEB tasks, and LLM-built benchmarks of that kind.

Importing this package registers every task, benchmark and bundled model with ``mteb``;
after ``pip install`` the start-up hook does the same whenever ``mteb`` is imported.
"""

from __future__ import annotations

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.registry import register_all

__version__ = "0.1.0"

register_all()

__all__ = ["DatasetError", "OptionError", "__version__", "register_all"]
