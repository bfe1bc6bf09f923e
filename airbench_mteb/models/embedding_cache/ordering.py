"""Encoding a block of documents in length order, so each batch holds texts of one length (little padding).

sentence-transformers sorts the texts of one ``encode`` call by characters, which is a loose stand-in for
tokens: on MS MARCO-like passages a batch of 32 then carries 8.5 % padding. Here the block is ordered by a
closer stand-in, the count of pre-tokens (runs of ASCII letters, digits and underscores, and each other
character that is not a space: what BERT's pre-tokenizer splits on; a CJK character counts one, as
Chinese BERT tokenizes it), and encoded as one call per run of equal length, so the model's own sort
cannot mix lengths again. The vectors come back in the input order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

PRE_TOKEN = r"[A-Za-z0-9_]+|[^A-Za-z0-9_\s]"


def text_lengths(dataset: Any, indices: np.ndarray) -> np.ndarray:
    """The pre-token count of the ``text`` of the rows ``indices`` of ``dataset`` (a missing text counts 0)."""
    import pyarrow.compute as pc

    texts = dataset.select_columns(["text"]).with_format("arrow")[:]["text"]
    counts = pc.fill_null(pc.count_substring_regex(texts, PRE_TOKEN), 0).to_numpy(zero_copy_only=False)
    return counts[indices]


def length_order(dataset: Any, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``indices`` longest text first (equal lengths in input order), and their lengths in that order."""
    lengths = text_lengths(dataset, indices)
    order = np.argsort(-lengths, kind="stable")
    return indices[order], lengths[order]


def equal_length_runs(lengths: np.ndarray, batch_size: int) -> list[slice]:
    """Consecutive runs of ``lengths`` (sorted) to encode one call each: a run ends where the length changes,
    once it holds a full batch (rarer lengths share a call rather than each making a call of a few texts)."""
    runs, start = [], 0
    for change in (np.flatnonzero(np.diff(lengths)) + 1).tolist():
        if change - start >= batch_size:
            runs.append(slice(start, change))
            start = change
    if start < len(lengths):
        runs.append(slice(start, len(lengths)))
    return runs


def subset_loader(inputs: Any, indices: list[int], batch_size: int) -> Any:
    """A loader over some rows of ``inputs``' already prepared dataset, batched and collated the same way.

    Re-running mteb's dataloader preparation on prepared rows would apply it twice (a title joined
    to a text that already starts with it), so the model would see other text than the key says.
    """
    from torch.utils.data import DataLoader

    return DataLoader(inputs.dataset.select(indices), batch_size=inputs.batch_size or batch_size,
                      collate_fn=inputs.collate_fn, num_workers=inputs.num_workers, shuffle=False)


def in_input_order(output: Any, order: np.ndarray) -> Any:
    """The model's output for rows encoded in ``order``, put back in input order; None if it cannot be."""
    inverse = np.argsort(order)
    if isinstance(output, np.ndarray) and output.shape[:1] == order.shape:
        return output[inverse]
    try:
        import torch

        if isinstance(output, torch.Tensor) and output.shape[0] == len(order):
            return output.index_select(0, torch.as_tensor(inverse, device=output.device))  # strided or sparse
    except ImportError:
        pass
    if isinstance(output, list) and len(output) == len(order):
        return [output[i] for i in inverse]
    return None


def _joinable(output: Any) -> bool:
    """Whether outputs of this kind can be joined across calls (arrays and tensors by rows, lists)."""
    import torch

    return isinstance(output, list) or (isinstance(output, np.ndarray | torch.Tensor) and output.ndim >= 1)


def _joined(outputs: list[Any]) -> Any:
    """The outputs of consecutive calls (all of one joinable kind) as one."""
    import torch

    if isinstance(outputs[0], list):
        return [row for output in outputs for row in output]
    if isinstance(outputs[0], torch.Tensor):
        return torch.cat(outputs)  # dense or sparse
    return np.concatenate(outputs)


def encode_in_runs(inputs: Any, rows: np.ndarray, lengths: np.ndarray, run: Callable[[Any, bool], Any],
                   batch_size: int, progress: bool) -> Any:
    """The model's output for ``rows`` of ``inputs`` (in length order, ``lengths`` theirs), one call per run
    of equal length, joined in ``rows`` order. ``run(loader, quiet)`` encodes a loader (``quiet``: without a
    progress bar of its own; one bar over all rows is shown instead when ``progress``). A model whose output
    cannot be joined is called once for all rows."""
    runs = equal_length_runs(lengths, batch_size)
    if len(runs) < 2:
        return run(subset_loader(inputs, rows.tolist(), batch_size), False)
    from tqdm.auto import tqdm

    outputs = []
    with tqdm(total=len(rows), desc="Encoding in length order", unit="text", disable=not progress) as bar:
        for part in runs:
            outputs.append(run(subset_loader(inputs, rows[part].tolist(), batch_size), True))
            if not _joinable(outputs[-1]) or type(outputs[-1]) is not type(outputs[0]):
                logger.info("the model's output cannot be joined across calls; encoding %d texts in one call", len(rows))
                return run(subset_loader(inputs, rows.tolist(), batch_size), False)
            bar.update(part.stop - part.start)
    return _joined(outputs)
