"""Full-corpus dense search whose running top k stays in tensors, merged by ``torch.topk`` without Python loops.

MTEB's search takes each chunk's top k+1 per query with torch, then pushes every (score, id) pair into
one Python heap per query: about a billion heap operations for AIR-Bench's ``qa_msmarco_en`` (8.9 M
passages, 6,319 queries, depth 1,000). Here each query's best k are one row of an int64 tensor, on the
model's device; a chunk adds only the scores that can still enter it (:class:`TopKMerge`), and one
``torch.topk`` over [running, candidates] merges them now and then; the queries are encoded once (MTEB's
own step) and the chunk size follows the memory available.

Order, exact ties included: each candidate is one int64 key, its float32 score mapped to an int32 of the
same order in the high half and the rank of its document id (ids sorted as Python sorts strings) in the
low half. Keys order by score, then by id, so among equal scores the larger id ranks first and is kept
at the cut -- what MTEB's heap of ``(score, id)`` tuples keeps, and trec_eval's order. MTEB itself leaves
one case open (more tied documents in one chunk than its per-chunk top k+1 holds: torch picks); there
this search still keeps the larger ids. A NaN score that reaches a query's top k is refused, as MTEB's
re-ranking refuses NaNs; ``-0.0`` ranks as ``0.0``. Scores in float64 (an encoder returning float64 vectors) go through MTEB's
own merge, as the key has room for 32 bits of score only.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.models.document_loader import document_loader
from airbench_mteb.mteb_compat import HookedEncoderSearch

logger = logging.getLogger(__name__)

MEMORY_SHARE = 0.5  # of the memory free when the search starts: the encoder needs the rest
_LOW_32 = 0xFFFFFFFF
_SIGN_MASK = 0x7FFFFFFF
BLOCK = 64  # columns whose maximum is compared with the bar before their scores are


def model_device(model: Any) -> Any:
    """The torch device of the library model inside an MTEB wrapper (``.model``), else the CPU."""
    import torch

    device = getattr(getattr(model, "model", None), "device", None)
    return device if isinstance(device, torch.device) else torch.device("cpu")


def available_bytes(device: Any) -> int:
    """Memory free for the search: device memory on an accelerator, the host's available memory otherwise."""
    import torch

    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def chunk_size_for(free_bytes: int, queries: int, depth: int, dimension: int, documents: int) -> int:
    """Documents per chunk that fit :data:`MEMORY_SHARE` of ``free_bytes``.

    Per document of a chunk: per query a float32 score, two one-byte masks (NaN, passing the bar) and room
    for the similarity's own temporaries, plus the vector on host and device; fixed: the running top k and a
    merged copy of it with the candidates (at most twice the depth after the first chunk).
    """
    per_document = queries * (4 + 1 + 1 + 6) + dimension * 4 * 2
    budget = int(free_bytes * MEMORY_SHARE) - queries * depth * 8 * 3
    return max(1, min(documents, budget // per_document))


def ordered_keys(scores: Any, ranks: Any, out: Any) -> None:
    """Write into ``out`` (int64, like ``scores``) one key per score: the score as an int32 of the same order
    in the high half (``-0.0`` as ``0.0``), the document's id rank (``ranks``, int32, one per column) in the
    low half. The halves are written in place through an int32 view of ``out`` (little-endian, as every
    platform torch runs on): no temporary of the chunk's size in int64."""
    import torch

    scores = scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores  # exact widening
    if scores.dtype != torch.float32:
        raise TypeError(f"scores of dtype {scores.dtype} cannot be keyed in 32 bits")
    bits = scores.view(torch.int32)
    sign = bits >> 31  # -1 for negative floats, else 0
    halves = out.view(torch.int32).view(*out.shape, 2)
    high = halves[..., 1]
    torch.bitwise_and(bits, _SIGN_MASK, out=high)  # the magnitude, whose int order is the float order ...
    high ^= sign
    high -= sign  # ... negated for negative floats
    halves[..., 0] = ranks


def scores_of(keys: Any) -> Any:
    """The float32 scores inside keys made by :func:`ordered_keys`."""
    import torch

    high = (keys >> 32).to(torch.int32)
    sign = high >> 31
    magnitude = (high ^ sign) - sign
    return (magnitude | (sign & torch.iinfo(torch.int32).min)).view(torch.float32)


def id_ranks(corpus: Any) -> tuple[Any, np.ndarray]:
    """The corpus ids sorted as Python sorts strings (code points; UTF-8 bytes sort the same way), and
    each document's rank among them, by corpus position."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = corpus.select_columns(["id"]).with_format("arrow")[:]["id"]
    ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    order = pc.sort_indices(ids).to_numpy()
    ranks = np.empty(len(order), dtype=np.int32)  # the key's low half: corpora under 2**31 documents
    ranks[order] = np.arange(len(order), dtype=np.int32)
    return ids.take(pa.array(order)), ranks


class TopKMerge:
    """Each query's running best ``depth`` documents as keys, merged with one ``torch.topk`` now and then.

    Only a chunk's candidates are keyed: the scores at or above a per-query bar, the running ``depth``-th
    best score as of the last merge (the first chunk's own ``depth``-th best before any). A document below
    the bar cannot enter the top ``depth``; one equal to it can (ties go by id), so it is kept. Candidates
    wait until a query holds ``depth`` of them (or :meth:`best` is asked): an older bar is lower, so still
    safe, and the merges become rare as the bar rises. Once the bar is set, a chunk is first scanned by
    the maxima of blocks of :data:`BLOCK` columns, and only blocks whose maximum passes are compared score
    by score. The result is the same as keying every score and keeping the best ``depth``.
    """

    def __init__(self, queries: int, depth: int, device: Any) -> None:
        import torch

        self.depth = depth
        self.merged = 0  # documents merged so far: the running keys are all real once depth were merged
        self.keys = torch.full((queries, depth), torch.iinfo(torch.int64).min, dtype=torch.int64, device=device)
        self._waiting: list[tuple[Any, Any, Any]] = []  # (rows, slots, keys) of candidates not merged yet
        self._waiting_per_query = torch.zeros(queries, dtype=torch.int64, device=device)
        self._waiting_documents = 0

    @property
    def _full(self) -> bool:
        """Whether the running keys are all real documents (``depth`` of them were merged)."""
        return self.merged >= self.depth

    def _bar(self, scores: Any) -> Any:
        """Per query, the lowest score that can still enter the top ``depth`` (``-inf`` while there is room)."""
        import torch

        if self._full:
            return scores_of(self.keys[:, -1:])  # the running keys are kept best first
        if scores.shape[1] >= self.depth:
            return torch.topk(scores, self.depth, dim=1, sorted=False).values.min(dim=1, keepdim=True).values
        return torch.full((scores.shape[0], 1), float("-inf"), dtype=scores.dtype, device=scores.device)

    def _passing(self, scores: Any, bar: Any) -> Any:
        """Flat (row-major) positions of the scores not below their query's bar. "Not below" rather than "at
        or above": a NaN passes too, and is then found among the few candidates, not by a pass of its own."""
        import torch

        queries, width = scores.shape
        blocks = width // BLOCK if self._full else 0
        if blocks == 0:
            return torch.nonzero(torch.logical_not(scores < bar).view(-1)).view(-1)
        maxima = scores[:, :blocks * BLOCK].view(queries, blocks, BLOCK).amax(dim=2)  # a NaN makes its block's NaN
        hot = torch.nonzero(torch.logical_not(maxima < bar).view(-1)).view(-1)
        if len(hot) * 8 > maxima.numel():  # most blocks pass: one comparison of the whole chunk is cheaper
            return torch.nonzero(torch.logical_not(scores < bar).view(-1)).view(-1)
        rows = hot // blocks
        flat = ((rows * width + (hot % blocks) * BLOCK)[:, None] + torch.arange(BLOCK, device=scores.device)).view(-1)
        inside = torch.logical_not(scores.view(-1)[flat].view(-1, BLOCK) < bar[rows]).view(-1)
        found = [flat[inside]]
        if blocks * BLOCK < width:  # the columns after the last whole block
            tail = torch.nonzero(torch.logical_not(scores[:, blocks * BLOCK:] < bar))
            found.append(tail[:, 0] * width + blocks * BLOCK + tail[:, 1])
        return torch.sort(torch.cat(found)).values  # row-major: each query's candidates together

    def add(self, scores: Any, ranks: Any) -> None:
        """Take a chunk: ``scores`` [queries, n] against the running keys; ``ranks`` [n] the documents' id ranks.
        A NaN score is refused (it has no place in a ranking)."""
        import torch

        scores = scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores  # exact widening
        scores = scores.contiguous()
        width = scores.shape[1]
        positions = self._passing(scores, self._bar(scores))
        self._waiting_documents += width
        if len(positions):
            chosen = scores.view(-1)[positions]
            if torch.isnan(chosen).any():
                raise ValueError("NaN values detected in the similarity scores")
            rows, columns = positions // width, positions % width
            counts = torch.bincount(rows, minlength=scores.shape[0])
            slots = (torch.arange(len(rows), device=rows.device) - (torch.cumsum(counts, 0) - counts)[rows]
                     + self._waiting_per_query[rows])  # after the query's candidates already waiting
            keys = torch.empty(len(rows), dtype=torch.int64, device=scores.device)
            ordered_keys(chosen, ranks[columns], keys)
            self._waiting.append((rows, slots, keys))
            self._waiting_per_query += counts
        if not self._full or int(self._waiting_per_query.max()) >= self.depth:
            self._merge()

    def _merge(self) -> None:
        """The running keys and the waiting candidates, cut to the best ``depth`` per query by one ``topk``."""
        import torch

        self.merged += self._waiting_documents
        self._waiting_documents = 0
        if not self._waiting:
            return
        queries = self.keys.shape[0]
        candidates = torch.full((queries, self.depth + int(self._waiting_per_query.max())), torch.iinfo(torch.int64).min,
                                dtype=torch.int64, device=self.keys.device)
        candidates[:, :self.depth] = self.keys
        for rows, slots, keys in self._waiting:
            candidates[rows, self.depth + slots] = keys
        self.keys = torch.topk(candidates, self.depth, dim=1, sorted=True).values
        self._waiting.clear()
        self._waiting_per_query.zero_()

    def best(self) -> Any:
        """The running keys, best first per query, the waiting candidates merged in."""
        self._merge()
        return self.keys


class DeviceTopKSearch(HookedEncoderSearch):
    """MTEB's search over an encoder, with the full-corpus step merged on the model's device.

    ``chunk_size`` fixes the documents per chunk (tests); by default it follows the free memory.
    """

    def __init__(self, model: Any, chunk_size: int | None = None) -> None:
        super().__init__(model)
        self.chunk_size = chunk_size

    def full_corpus_search(self, *, query_idx_to_id: dict[int, str], query_embeddings: Any, task_metadata: Any,
                           hf_subset: str, hf_split: str, top_k: int, encode_kwargs: Any, timer: Any = None
                           ) -> dict[str, list[tuple[float, str]]]:
        import torch
        from mteb.timing import TimingStack
        from mteb.types import PromptType

        corpus = self.task_corpus
        if corpus is None:
            raise ValueError("Corpus must be indexed before searching.")
        queries = torch.as_tensor(query_embeddings)
        if queries.dtype == torch.float64:  # 64-bit scores do not fit the key
            return super().full_corpus_search(
                query_idx_to_id=query_idx_to_id, query_embeddings=query_embeddings, task_metadata=task_metadata,
                hf_subset=hf_subset, hf_split=hf_split, top_k=top_k, encode_kwargs=encode_kwargs, timer=timer)
        device = model_device(self.model)
        queries = queries.to(device)
        documents = len(corpus)
        depth = min(top_k, documents)
        chunk = self.chunk_size or chunk_size_for(available_bytes(device), len(queries), depth,
                                                  int(queries.shape[-1]), documents)
        sorted_ids, ranks = id_ranks(corpus)
        ranks = torch.as_tensor(ranks, device=device)
        merge = TopKMerge(len(queries), depth, device)
        logger.info("searching %d documents in chunks of %d on %s", documents, chunk, device)
        with (timer or TimingStack())("Searching corpus", split=hf_split, subset=hf_subset):
            for start in range(0, documents, chunk):
                end = min(start + chunk, documents)
                loader = document_loader(corpus.select(range(start, end)), task_metadata=task_metadata,
                                         batch_size=encode_kwargs.get("batch_size", 32))
                vectors = self.model.encode(loader, task_metadata=task_metadata, hf_split=hf_split,
                                            hf_subset=hf_subset, prompt_type=PromptType.document, **encode_kwargs)
                scores = torch.as_tensor(self.model.similarity(queries, torch.as_tensor(vectors).to(device)))
                merge.add(scores, ranks[start:end])
                del vectors, scores
        return _ranked_lists(merge.best(), sorted_ids, query_idx_to_id)


def _ranked_lists(keys: Any, sorted_ids: Any, query_idx_to_id: dict[int, str]) -> dict[str, list[tuple[float, str]]]:
    """Each query's ``(score, id)`` pairs, best first, from its row of keys."""
    import pyarrow as pa

    scores = scores_of(keys).cpu().tolist()
    ids = sorted_ids.take(pa.array((keys & _LOW_32).cpu().numpy().ravel())).to_pylist()
    width = keys.shape[1]
    return {qid: list(zip(scores[q], ids[q * width:(q + 1) * width], strict=True))
            for q, qid in query_idx_to_id.items()}
