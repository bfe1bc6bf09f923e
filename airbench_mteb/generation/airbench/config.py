"""The settings of an AIR-Bench generation run, checked when built (before any corpus or LLM is touched)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from airbench_mteb.catalog.user import airbench_naming_problem
from airbench_mteb.data.fingerprint import content_digest
from airbench_mteb.generation import checks
from airbench_mteb.generation.airbench.candidates import TASK_TYPES, CandidateSettings
from airbench_mteb.generation.airbench.output import pre_qc_dataset
from airbench_mteb.generation.airbench.qc import QCSettings
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.shared_models import check_reranker_spec


@dataclass(frozen=True)
class AirBenchConfig:
    corpus: str
    domain: str
    language: str
    task_type: str = "qa"
    dataset: str = "default"
    version: str = "custom"
    num_queries: int = 100
    seed: int = 0
    rewrites: int = 2
    candidates: CandidateSettings = field(default_factory=CandidateSettings)
    qc: QCSettings = field(default_factory=QCSettings)
    min_length: int = 30  # QA length filter, words (characters for zh/ja/ko/th)
    max_length: int = 2000
    chunk_size: int = 200  # Long-Doc SentenceSplitter setting (Appendix A.1)
    chunk_overlap: int = 50
    recall_encoder: str = ""  # "" = minilm for English, e5 otherwise
    rerankers: tuple[str, ...] = ("minilm", "e5")
    long_doc_split: str = "test"
    source_name: str = ""
    source_url: str = ""
    source_license: str = "unknown"
    # The catalog entry's release date; "" = the day the dataset is written. It only labels the output, so the
    # fingerprint leaves it out: a run resumed on another day, or given a date, reuses its journal.
    release_date: str = ""

    def __post_init__(self) -> None:
        checks.one_of("--task-type", self.task_type, TASK_TYPES)
        checks.language("--language", self.language)
        # what `register-dataset` would refuse is refused before the dataset is made: the kept set's name and the
        # name of the set before quality control, written beside it (7 characters longer)
        problem = airbench_naming_problem(self.version, self.task_type, self.domain, self.language, self.dataset)
        if problem is not None:
            raise GenerationError(f"--version/--domain/--language/--dataset: {problem}")
        before = pre_qc_dataset(self.dataset)
        problem = airbench_naming_problem(self.version, self.task_type, self.domain, self.language, before)
        if problem is not None:
            raise GenerationError(f"--version/--domain/--language/--dataset: the candidates before quality control "
                                  f"are written as dataset {before!r}, and {problem}")
        if self.candidates.task_type != self.task_type or self.candidates.language != self.language:
            raise GenerationError("candidate settings must carry the config's task type and language")
        checks.whole_number("--num-queries", self.num_queries, 1)
        checks.seed("--seed", self.seed)
        checks.whole_number("--rewrites", self.rewrites, 0)
        checks.whole_number("--min-length", self.min_length, 1)
        checks.whole_number("--max-length", self.max_length, 1)
        checks.ordered("--min-length", self.min_length, "--max-length", self.max_length)
        checks.whole_number("chunk_size", self.chunk_size, 1)
        checks.whole_number("chunk_overlap", self.chunk_overlap, 0, self.chunk_size - 1)
        checks.one_of("long_doc_split", self.long_doc_split, ("dev", "test"))
        if not self.rerankers:
            raise GenerationError("--rerankers needs at least one reranker")
        for spec in self.rerankers:
            check_reranker_spec(spec)
        if self.release_date:
            checks.iso_date("--release-date", self.release_date)

    def fingerprint(self) -> str:
        """What decides the output: the settings and the corpus's content, not its path (a moved or copied corpus
        resumes, an edited one does not). A journal made under another fingerprint cannot be resumed."""
        corpus = Path(self.corpus)
        settings = {**asdict(self), "corpus": content_digest(corpus) if corpus.is_file() else self.corpus}
        del settings["release_date"]
        return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]
