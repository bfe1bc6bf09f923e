"""Work spread over several GPUs or machines with an existing engine (Ray); needs the ``distributed`` extra."""

from __future__ import annotations

from airbench_mteb.distributed.encode import EncodeSummary, encode_corpora

__all__ = ["EncodeSummary", "encode_corpora"]
