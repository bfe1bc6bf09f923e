"""Quality control (AIR-Bench section 2.4, Table 2, Appendix A.3).

1. Low-quality queries: the LLM judge rates (query, original positive); a negative verdict drops
   the query and all its labels.
2. For every kept query: recall the top ``recall_depth`` documents with an embedding model; each
   reranker ranks that list, and labels a document positive when its rank is within the
   threshold (20 for the query's own generated hard negatives, 10 for every other document); a
   document is pre-labelled positive when more than half of the rerankers label it positive.
3. The judge rates the pre-labelled positives, and Table 2 decides:

   ==================== ======================= ==================
   document type        judge positive          judge negative
   ==================== ======================= ==================
   1 original positive  keep                    drop the query
   2 own hard negative  discard the document    keep as negative
   3 no label           add as a positive       skip
   ==================== ======================= ==================

The judge answers on the 4-level scale of the seed's Table 8; ``positive_levels`` (default
{2, 3}) is the documented mapping of levels to a positive verdict. Every decision is recorded per
(query, document) with its type and reason; unlabelled documents that the rerankers did not
pre-label positive are not recorded (that is all the rest of the corpus).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tqdm.auto import tqdm

from airbench_mteb.generation import checks
from airbench_mteb.generation.airbench import prompts
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient, Parsed
from airbench_mteb.generation.shared_models import DenseRecall, Encoder, Reranker

ORIGINAL_POSITIVE, HARD_NEGATIVE, UNLABELLED = "original_positive", "generated_hard_negative", "unlabelled"


class Judge(Protocol):
    name: str

    async def level(self, query: str, document: str) -> Parsed[int]:
        """The 0-3 relevance level, or a Parsed without value and the reason."""
        ...


class LLMJudge:
    """The 4-level relevance prompt (Table 8's idea, own wording) answered by an LLM at temperature 0."""

    def __init__(self, client: LLMClient, seed: int = 0, document_chars: int = 1500, constrained: bool = True) -> None:
        self.client = client
        self.name = f"{client.backend.kind}:{client.backend.model}"
        self.params = LLMParams(temperature=0.0, max_tokens=4, seed=seed,
                                json_schema=prompts.LEVEL_SCHEMA if constrained else None)
        self.document_chars = document_chars

    async def level(self, query: str, document: str) -> Parsed[int]:
        messages = prompts.render("judge", query=query, document=document[:self.document_chars])
        return await self.client.parsed(messages, self.params, prompts.parse_level, "judge")


@dataclass(frozen=True)
class QCSettings:
    recall_depth: int = 1000
    hard_negative_threshold: int = 20
    other_threshold: int = 10
    positive_levels: tuple[int, ...] = (2, 3)

    def __post_init__(self) -> None:
        checks.whole_number("--recall-depth", self.recall_depth, 1)
        checks.whole_number("hard_negative_threshold", self.hard_negative_threshold, 1)
        checks.whole_number("other_threshold", self.other_threshold, 1)
        if not self.positive_levels:
            raise GenerationError("--judge-positive-levels needs at least one level (0-3)")
        for level in self.positive_levels:
            checks.whole_number("--judge-positive-levels", level, 0, 3)


@dataclass
class QCInput:
    queries: dict[str, str]
    positives: dict[str, str]  # qid -> original positive doc id
    hard_negatives: dict[str, list[str]]  # qid -> its generated hard negative doc ids
    corpus: dict[str, str]  # the prepared corpus plus every generated hard negative


@dataclass
class QCResult:
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    corpus: dict[str, str]
    decisions: list[dict[str, Any]]
    counts: dict[str, Any] = field(default_factory=dict)


def prelabel(ranks: dict[str, dict[str, int]], doc_id: str, threshold: int) -> tuple[bool, int]:
    """(pre-labelled positive, votes): a reranker votes positive when the document's rank <= threshold;
    positive needs more than half of the rerankers."""
    votes = sum(1 for by_doc in ranks.values() if by_doc.get(doc_id, threshold + 1) <= threshold)
    return 2 * votes > len(ranks), votes


async def _ranks(rerankers: Sequence[Reranker], query: str, doc_ids: list[str]) -> dict[str, dict[str, int]]:
    result = {}
    for reranker in rerankers:
        scores = await reranker.scores(query, doc_ids)
        # ties keep recall order (stable sort), so ranks are deterministic
        order = sorted(range(len(doc_ids)), key=lambda i: -scores[i])
        result[reranker.name] = {doc_ids[i]: rank for rank, i in enumerate(order, start=1)}
    return result


class QualityControl:
    def __init__(self, judge: Judge, recall_encoder: Encoder, rerankers: Sequence[Reranker],
                 settings: QCSettings = QCSettings(), *, show_progress: bool = False) -> None:
        self.judge = judge
        self.recall_encoder = recall_encoder
        self.rerankers = list(rerankers)
        self.settings = settings
        self.show_progress = show_progress

    def _positive(self, level: int) -> bool:
        return level in self.settings.positive_levels

    async def _filter_query(self, data: QCInput, qid: str) -> dict[str, Any]:
        doc_id = data.positives[qid]
        verdict = await self.judge.level(data.queries[qid], data.corpus[doc_id])
        decision = {"qid": qid, "docid": doc_id, "doc_type": ORIGINAL_POSITIVE, "judge_level": verdict.value}
        if not verdict.ok:
            return {**decision, "action": "drop_query", "reason": f"judge output unusable: {verdict.reason}"}
        if self._positive(verdict.value):
            return {**decision, "action": "keep", "reason": f"judge level {verdict.value} is positive"}
        return {**decision, "action": "drop_query", "reason": f"judge level {verdict.value} is negative: "
                                                              f"low-quality query"}

    async def _correct_labels(self, data: QCInput, qid: str, recalled: list[str]) -> list[dict[str, Any]]:
        s = self.settings
        own_negatives = set(data.hard_negatives.get(qid, ()))
        ranks = await _ranks(self.rerankers, data.queries[qid], recalled)
        decisions = []
        for doc_id in recalled:
            if doc_id == data.positives[qid]:
                continue
            doc_type = HARD_NEGATIVE if doc_id in own_negatives else UNLABELLED
            threshold = s.hard_negative_threshold if doc_type == HARD_NEGATIVE else s.other_threshold
            positive, votes = prelabel(ranks, doc_id, threshold)
            base = {"qid": qid, "docid": doc_id, "doc_type": doc_type, "votes": votes,
                    "rerankers": len(self.rerankers), "ranks": {n: r[doc_id] for n, r in ranks.items()}}
            if not positive:
                if doc_type == HARD_NEGATIVE:
                    decisions.append({**base, "judge_level": None, "action": "keep",
                                      "reason": f"pre-labelled negative ({votes}/{len(self.rerankers)} rerankers "
                                                f"within rank {threshold})"})
                continue
            verdict = await self.judge.level(data.queries[qid], data.corpus[doc_id])
            base["judge_level"] = verdict.value
            if not verdict.ok:
                action = "keep" if doc_type == HARD_NEGATIVE else "skip"
                decisions.append({**base, "action": action, "reason": f"judge output unusable: {verdict.reason}"})
            elif doc_type == HARD_NEGATIVE and self._positive(verdict.value):
                decisions.append({**base, "action": "discard_document",
                                  "reason": f"generated hard negative judged relevant (level {verdict.value})"})
            elif doc_type == HARD_NEGATIVE:
                decisions.append({**base, "action": "keep",
                                  "reason": f"pre-labelled positive, judged not relevant (level {verdict.value})"})
            elif self._positive(verdict.value):
                decisions.append({**base, "action": "add_positive",
                                  "reason": f"overlooked relevant document (level {verdict.value})"})
            else:
                decisions.append({**base, "action": "skip",
                                  "reason": f"pre-labelled positive, judged not relevant (level {verdict.value})"})
        for doc_id in sorted(own_negatives - set(recalled)):
            decisions.append({"qid": qid, "docid": doc_id, "doc_type": HARD_NEGATIVE, "judge_level": None,
                              "action": "keep", "reason": f"not in the top {s.recall_depth} recalled documents"})
        return decisions

    async def run(self, data: QCInput) -> QCResult:
        qids = list(data.queries)
        with tqdm(total=len(qids), desc="QC judge positives", unit="query",
                  disable=not self.show_progress) as bar:
            async def filtered(qid: str) -> dict[str, Any]:
                decision = await self._filter_query(data, qid)
                bar.update()
                return decision
            first = await asyncio.gather(*(filtered(q) for q in qids))
        kept = [d["qid"] for d in first if d["action"] == "keep"]

        recall = DenseRecall(self.recall_encoder, data.corpus)
        recalled = dict(zip(kept, recall.search([data.queries[q] for q in kept], self.settings.recall_depth), strict=True))
        for reranker in self.rerankers:
            reranker.prepare(data.corpus)
        with tqdm(total=len(kept), desc="QC correct labels", unit="query",
                  disable=not self.show_progress) as bar:
            async def corrected(qid: str) -> list[dict[str, Any]]:
                decisions = await self._correct_labels(data, qid, recalled[qid])
                bar.update()
                return decisions
            second = await asyncio.gather(*(corrected(q) for q in kept))
        decisions = list(first) + [d for group in second for d in group]
        return self._result(data, kept, decisions)

    @staticmethod
    def _result(data: QCInput, kept: list[str], decisions: list[dict[str, Any]]) -> QCResult:
        discarded = {d["docid"] for d in decisions if d["action"] == "discard_document"}
        dropped_queries = set(data.queries) - set(kept)
        # hard negatives of dropped queries leave the corpus with their query (their only label is gone)
        orphaned = {doc for q in dropped_queries for doc in data.hard_negatives.get(q, ())}
        corpus = {i: t for i, t in data.corpus.items() if i not in discarded and i not in orphaned}
        qrels: dict[str, dict[str, int]] = {}
        for qid in kept:
            labels = {data.positives[qid]: 1}
            labels.update({doc: 0 for doc in data.hard_negatives.get(qid, ()) if doc in corpus})
            qrels[qid] = labels
        for d in decisions:
            if d["action"] == "add_positive" and d["docid"] in corpus:
                qrels[d["qid"]][d["docid"]] = 1
        actions = Counter((d["doc_type"], d["action"]) for d in decisions)
        before_negatives = sum(len(v) for v in data.hard_negatives.values())
        counts = {
            "before": {"queries": len(data.queries), "corpus": len(data.corpus), "positives": len(data.queries),
                       "hard_negatives": before_negatives},
            "after": {"queries": len(qrels), "corpus": len(corpus),
                      "positives": sum(1 for v in qrels.values() for r in v.values() if r > 0),
                      "hard_negatives": sum(1 for v in qrels.values() for r in v.values() if r == 0)},
            "dropped_queries": len(dropped_queries),
            "discarded_hard_negatives": len(discarded),
            "removed_with_dropped_queries": len(orphaned - discarded),
            "added_positives": actions[(UNLABELLED, "add_positive")],
            "judge_calls_on_prelabelled": sum(1 for d in decisions
                                              if d["doc_type"] != ORIGINAL_POSITIVE and d.get("judge_level") is not None),
            "decisions": {f"{t}/{a}": n for (t, a), n in sorted(actions.items())},
        }
        return QCResult(queries={q: data.queries[q] for q in kept}, qrels=qrels, corpus=corpus,
                        decisions=decisions, counts=counts)
