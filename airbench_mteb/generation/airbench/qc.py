"""Quality control (AIR-Bench section 2.4, Table 2, Appendix A.3), with three query filters of our own.

0. Query filters (:func:`~airbench_mteb.generation.airbench.query_filters.check_query`), before any LLM call: a
   query that copies its positive passage, or one not written in the dataset's script, is dropped with its labels.
1. Low-quality queries: the LLM judge rates (query, original positive); a negative verdict drops
   the query and all its labels.
2. For every kept query: recall the top ``recall_depth`` documents with an embedding model; each
   reranker ranks that list, and labels a document positive when its rank is within the
   threshold (20 for the query's own generated hard negatives, 10 for every other document); a
   document is pre-labelled positive when more than half of the rerankers label it positive.
   With ``easy_percentile`` set, a query whose recall similarity to its positive is above that
   percentile of the judged queries' similarities is dropped first (NeMo Curator's easiness filter).
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
(query, document) with its type and reason (a filter's drop also names the ``filter`` and what it
measured); unlabelled documents that the rerankers did not
pre-label positive are not recorded (that is all the rest of the corpus).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from tqdm.auto import tqdm

from airbench_mteb.generation import checks
from airbench_mteb.generation.airbench import prompts
from airbench_mteb.generation.airbench.query_filters import (
    COPIED,
    WRONG_LANGUAGE,
    FilterSettings,
    check_query,
    easiness_threshold,
)
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient, Parsed
from airbench_mteb.generation.shared_models import DenseRecall, Encoder, Reranker

ORIGINAL_POSITIVE, HARD_NEGATIVE, UNLABELLED = "original_positive", "generated_hard_negative", "unlabelled"
# The ways a query leaves quality control, in pipeline order (GenerationSummary and card counts).
JUDGED_LOW_QUALITY, EASY = "judged_low_quality", "easy"
DROP_CAUSES = (COPIED, WRONG_LANGUAGE, JUDGED_LOW_QUALITY, EASY)


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
class QCSettings(FilterSettings):
    """Quality control's settings: the query filters' thresholds (:class:`FilterSettings`) and the rest."""

    recall_depth: int = 1000
    hard_negative_threshold: int = 20
    other_threshold: int = 10
    positive_levels: tuple[int, ...] = (2, 3)
    # NeMo Curator's easiness percentile (0 = off; its default is 70; off here, as AIR-Bench has no such filter
    # and it drops a fixed share of every set).
    easy_percentile: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        checks.whole_number("--recall-depth", self.recall_depth, 1)
        checks.whole_number("hard_negative_threshold", self.hard_negative_threshold, 1)
        checks.whole_number("other_threshold", self.other_threshold, 1)
        if not self.positive_levels:
            raise GenerationError("--judge-positive-levels needs at least one level (0-3)")
        for level in self.positive_levels:
            checks.whole_number("--judge-positive-levels", level, 0, 3)
        checks.number("easy_percentile", self.easy_percentile, 0.0, 100.0)


@dataclass
class QCInput:
    queries: dict[str, str]
    positives: dict[str, str]  # qid -> original positive doc id
    hard_negatives: dict[str, list[str]]  # qid -> its generated hard negative doc ids
    corpus: dict[str, str]  # the prepared corpus plus every generated hard negative
    language: str  # the dataset's ISO 639-1 code: how the query filters tokenise and which script they expect

    def labelled(self) -> LabelledQueries:
        """The candidates as they stand before quality control: each query's positive, its own hard negatives."""
        return LabelledQueries(queries=dict(self.queries), corpus=dict(self.corpus),
                               qrels={q: {self.positives[q]: 1, **dict.fromkeys(self.hard_negatives.get(q, ()), 0)}
                                      for q in self.queries})


@dataclass
class LabelledQueries:
    """Queries, their labels and the corpus they are searched in: what a dataset is written from."""

    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    corpus: dict[str, str]


@dataclass
class QCResult(LabelledQueries):
    decisions: list[dict[str, Any]] = field(default_factory=list)
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

    def _query_filters(self, data: QCInput, qid: str) -> dict[str, Any] | None:
        """The decision record dropping a copied query or one not in the dataset's script; None when it passes."""
        doc_id = data.positives[qid]
        decision = check_query(data.queries[qid], data.corpus[doc_id], data.language, self.settings)
        if decision is None:
            return None
        return {"qid": qid, "docid": doc_id, "doc_type": ORIGINAL_POSITIVE, "judge_level": None,
                "action": "drop_query", **decision.record()}

    def _easy_decisions(self, data: QCInput, qids: list[str],
                        similarities: np.ndarray) -> tuple[list[dict[str, Any]], float | None]:
        """NeMo Curator's easiness rule over ``qids``: the decisions dropping the queries whose similarity to
        their positive is above the ``easy_percentile``-th percentile, and that threshold (None: rule off)."""
        if not self.settings.easy_percentile or not qids:
            return [], None
        threshold = easiness_threshold(similarities, self.settings.easy_percentile)
        return [{"qid": qid, "docid": data.positives[qid], "doc_type": ORIGINAL_POSITIVE, "judge_level": None,
                 "action": "drop_query", "filter": EASY, "similarity": round(float(similarity), 6),
                 "threshold": round(threshold, 6),
                 "reason": f"easy query: similarity {similarity:.4f} to its positive is above the "
                           f"{self.settings.easy_percentile:g}th percentile {threshold:.4f}"}
                for qid, similarity in zip(qids, similarities, strict=True) if similarity > threshold], threshold

    async def _judge_query(self, data: QCInput, qid: str) -> dict[str, Any]:
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
        filtered = [d for d in (self._query_filters(data, q) for q in data.queries) if d is not None]
        dropped = {d["qid"] for d in filtered}
        qids = [q for q in data.queries if q not in dropped]
        with tqdm(total=len(qids), desc="QC judge positives", unit="query",
                  disable=not self.show_progress) as bar:
            async def judged(qid: str) -> dict[str, Any]:
                decision = await self._judge_query(data, qid)
                bar.update()
                return decision
            first = await asyncio.gather(*(judged(q) for q in qids))
        passed = [d["qid"] for d in first if d["action"] == "keep"]

        recall = DenseRecall(self.recall_encoder, data.corpus)
        lists, similarities = recall.search([data.queries[q] for q in passed], self.settings.recall_depth,
                                            [data.positives[q] for q in passed])
        easy, easy_threshold = self._easy_decisions(data, passed, similarities)
        kept = [q for q in passed if q not in {d["qid"] for d in easy}]
        recalled = dict(zip(passed, lists, strict=True))
        for reranker in self.rerankers:
            reranker.prepare(data.corpus)
        with tqdm(total=len(kept), desc="QC correct labels", unit="query",
                  disable=not self.show_progress) as bar:
            async def corrected(qid: str) -> list[dict[str, Any]]:
                decisions = await self._correct_labels(data, qid, recalled[qid])
                bar.update()
                return decisions
            second = await asyncio.gather(*(corrected(q) for q in kept))
        decisions = filtered + list(first) + easy + [d for group in second for d in group]
        return self._result(data, kept, decisions, easy_threshold)

    @staticmethod
    def _result(data: QCInput, kept: list[str], decisions: list[dict[str, Any]],
                easy_threshold: float | None) -> QCResult:
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
            "dropped_by": {cause: sum(1 for d in decisions if d["action"] == "drop_query"
                                      and d.get("filter", JUDGED_LOW_QUALITY) == cause) for cause in DROP_CAUSES},
            "easy_threshold": None if easy_threshold is None else round(easy_threshold, 6),
            "discarded_hard_negatives": len(discarded),
            "removed_with_dropped_queries": len(orphaned - discarded),
            "added_positives": actions[(UNLABELLED, "add_positive")],
            "judge_calls_on_prelabelled": sum(1 for d in decisions
                                              if d["doc_type"] != ORIGINAL_POSITIVE and d.get("judge_level") is not None),
            "decisions": {f"{t}/{a}": n for (t, a), n in sorted(actions.items())},
        }
        return QCResult(queries={q: data.queries[q] for q in kept}, qrels=qrels, corpus=corpus,
                        decisions=decisions, counts=counts)
