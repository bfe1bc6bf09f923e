"""airbench-mteb: AIR-Bench, co*cktail and IRSC as MTEB tasks, and LLM-built benchmarks of that kind.

Importing this package registers every task, benchmark and bundled model with ``mteb``;
after ``pip install`` the start-up hook does the same whenever ``mteb`` is imported.
"""

from __future__ import annotations

import gc

# Importing mteb and registering the tasks makes objects that live as long as the process; the cyclic collector,
# run again and again while they pile up, took about a quarter of that time.
_collecting = gc.isenabled()
gc.disable()
try:
    from airbench_mteb.data.errors import DatasetError, OptionError
    from airbench_mteb.registry import register_all

    register_all()
finally:
    if _collecting:
        gc.enable()

__version__ = "0.1.0"

__all__ = ["DatasetError", "OptionError", "__version__", "register_all"]
