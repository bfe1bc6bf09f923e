"""Encoding a block of documents in length order, so each batch holds texts of one length (little padding).

sentence-transformers sorts the texts of one ``encode`` call by characters, a loose stand-in for tokens:
on the passages of a synthetic MS MARCO a batch of 32 then carries 7-9 % padding, on NQ 23 %. Here a
block is ordered by each text's token count as the model's own fast tokenizer counts it (cut at its
``max_seq_length``; characters for a model without one), and encoded in calls that the model's sort
cannot mix lengths in again. The vectors come back in the input order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np

from airbench_mteb.models.tokenizer_threads import tokenizer_threads

logger = logging.getLogger(__name__)

TokenCounter = Callable[[list[str]], np.ndarray]
COUNTED_AT_ONCE = 8192  # texts per tokenizer call when counting: memory stays bounded on any corpus


def token_counter(model: Any) -> TokenCounter | None:
    """Each text's token count as the sentence-transformers model inside an MTEB wrapper (``model.model``)
    tokenizes it: special tokens included, cut at ``max_seq_length``. None for a model without a fast
    tokenizer there.

    The counts come from a copy of the fast tokenizer's Rust backend set as ``transformers`` sets it for
    that call (truncation to the limit on the tokenizer's side, no padding), asked only for lengths: about
    a third faster than the ``transformers`` call, which builds every encoding's Python objects.
    """
    library = getattr(model, "model", None)
    tokenizer = getattr(library, "tokenizer", None)
    if not getattr(tokenizer, "is_fast", False):
        return None
    from tokenizers import Tokenizer

    backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
    backend.no_padding()
    limit = getattr(library, "max_seq_length", None)
    if isinstance(limit, int):
        backend.enable_truncation(limit, direction=getattr(tokenizer, "truncation_side", "right"))
    else:
        backend.no_truncation()
    # encode_batch_fast (tokenizers >= 0.20) skips the character offsets, which lengths do not need
    encode = getattr(backend, "encode_batch_fast", backend.encode_batch)

    def count(texts: list[str]) -> np.ndarray:
        with tokenizer_threads():
            encodings = encode(texts)
        return np.fromiter(map(len, encodings), dtype=np.int64, count=len(texts))
    return count


def text_lengths(dataset: Any, indices: np.ndarray, count_tokens: TokenCounter | None) -> np.ndarray:
    """The length of the ``text`` of the rows ``indices`` of ``dataset``: tokens by ``count_tokens``, else
    characters (a missing text counts 0; every row of a dataset without a text column counts 0)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "text" not in dataset.column_names:
        return np.zeros(len(indices), dtype=np.int64)
    texts = dataset.select_columns(["text"]).with_format("arrow")[:]["text"]
    if count_tokens is None:
        return pc.fill_null(pc.utf8_length(texts), 0).to_numpy(zero_copy_only=False)[indices]
    lengths = np.empty(len(indices), dtype=np.int64)
    for start in range(0, len(indices), COUNTED_AT_ONCE):
        part = pc.fill_null(texts.take(pa.array(indices[start:start + COUNTED_AT_ONCE])), "").to_pylist()
        lengths[start:start + len(part)] = count_tokens(part)
    return lengths


def length_order(dataset: Any, indices: np.ndarray, count_tokens: TokenCounter | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``indices`` longest text first (equal lengths in input order), and their lengths in that order."""
    lengths = text_lengths(dataset, indices, count_tokens)
    order = np.argsort(-lengths, kind="stable")
    return indices[order], lengths[order]


def encode_calls(lengths: np.ndarray, batch_size: int) -> list[slice]:
    """The calls to encode ``lengths`` (sorted) in: whole batches of ``batch_size``, as they come, so each call
    the model sorts by itself holds either batches of one single length (sorting cannot mix them) or one
    batch alone (sorting cannot change what it holds). Consecutive batches of one length share a call."""
    calls: list[slice] = []
    for start in range(0, len(lengths), batch_size):
        end = min(start + batch_size, len(lengths))
        single = lengths[start] == lengths[end - 1]
        previous = calls[-1] if calls else None
        if single and previous is not None and lengths[previous.start] == lengths[start]:
            calls[-1] = slice(previous.start, end)  # the previous call is of this one length too
        else:
            calls.append(slice(start, end))
    return calls


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


def encode_in_calls(inputs: Any, rows: np.ndarray, lengths: np.ndarray, run: Callable[[Any, bool], Any],
                    batch_size: int, progress: bool | Any) -> Any:
    """The model's output for ``rows`` of ``inputs`` (in length order, ``lengths`` theirs), encoded in the
    calls of :func:`encode_calls` and joined in ``rows`` order.

    ``run(loader, quiet)`` encodes a loader (``quiet``: without a progress bar of its own). ``progress``: True
    shows one bar over all rows (the model's own when one call does), False none, and a tqdm bar of the caller
    (over these rows and more) is advanced after each call. A model whose output cannot be joined is called
    once for all.
    """
    calls = encode_calls(lengths, batch_size)
    outer = None if isinstance(progress, bool) else progress
    if len(calls) < 2 and outer is None:
        return run(subset_loader(inputs, rows.tolist(), batch_size), False)
    from tqdm.auto import tqdm

    outputs = []
    with nullcontext(outer) if outer is not None else tqdm(total=len(rows), desc="Encoding in length order",
                                                           unit="text", disable=not progress) as bar:
        for part in calls:
            outputs.append(run(subset_loader(inputs, rows[part].tolist(), batch_size), True))
            if not _joinable(outputs[-1]) or type(outputs[-1]) is not type(outputs[0]):
                logger.info("the model's output cannot be joined across calls; encoding %d texts in one call", len(rows))
                return run(subset_loader(inputs, rows.tolist(), batch_size), False)
            bar.update(part.stop - part.start)
    return _joined(outputs)
