"""MTEB's device choice, as the model libraries understand it."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)
_warned: set[str] = set()

Device = str | int | None


def torch_device(device: Device) -> str | None:
    """``device`` for torch: ``mteb run --device N`` passes a bare accelerator index; None lets the library choose."""
    if isinstance(device, int) and not isinstance(device, bool):
        import torch

        return str(torch.device(device))
    return device


def warn_cpu_only(engine: str, device: Device) -> None:
    """Say once per process that ``engine`` ignores a requested accelerator (it has no GPU code)."""
    wanted = torch_device(device)
    if wanted is None or wanted.split(":")[0] == "cpu" or engine in _warned:
        return
    _warned.add(engine)
    logger.warning("%s runs on the CPU only (its own C engine); device %r is ignored", engine, wanted)
