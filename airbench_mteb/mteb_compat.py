"""The one door to mteb's private API: every name the plugin uses that mteb does not publish.

MTEB has no plugin interface: its task, benchmark and model registries are module globals built at
import, its retrieval evaluation and prediction files are private methods, and its results cache
check and writer are not hooks. Everything of that kind the plugin relies on is reached here, by a
named function or by :class:`HookedRetrievalTask`, and nowhere else; :data:`PRIVATE_NAMES` lists
it, so a test (``tests/test_mteb_compat.py``) names the one that a new mteb release removed.

Every name was checked on each version of :data:`CHECKED_ON`, the newest release of each minor version setup.cfg
admits: the mteb-versions tier (``tests/test_mteb_versions.py``) runs the mteb-facing tests on each. MTEB's own
tasks never go through the plugin's code:
the cache check and the writer are patched only to dispatch plugin tasks to their hooks.

This module imports nothing from the plugin, so every layer may use it.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.models import SearchEncoderWrapper

if TYPE_CHECKING:
    from mteb import AbsTask, Benchmark
    from mteb.models import ModelMeta
    from mteb.results import TaskResult

# The mteb releases every private name below was checked on (tests/test_mteb_versions.py installs each)
CHECKED_ON = ("2.20.13", "2.21.10", "2.22.5", "2.23.0", "2.24.14", "2.25.0", "2.26.24")
_MARK = "_airbench_mteb"  # set on mteb functions this module replaced, so a second install is a no-op


@dataclass(frozen=True)
class PrivateName:
    """One private mteb name the plugin relies on: ``module`` and the attribute path below it."""

    module: str
    attribute: str
    on_instance: bool = False  # set in ``__init__``: looked up on a task instance, not on the class
    checked_on: tuple[str, ...] = CHECKED_ON  # the mteb versions its use was checked on

    def __str__(self) -> str:
        return f"{self.module}.{self.attribute}"


PRIVATE_NAMES: tuple[PrivateName, ...] = (
    PrivateName("mteb.get_tasks", "_TASKS_REGISTRY"),
    PrivateName("mteb.get_tasks", "TASK_LIST"),
    PrivateName("mteb.benchmarks.get_benchmark", "_build_registry"),
    PrivateName("mteb.models.model_implementations", "MODEL_REGISTRY"),
    PrivateName("mteb.evaluate", "_check_cache"),
    PrivateName("mteb.results.task_result", "TaskResult.to_disk"),
    PrivateName("mteb.abstasks.retrieval", "AbsTaskRetrieval._evaluate_subset"),
    PrivateName("mteb.abstasks.retrieval", "AbsTaskRetrieval._save_task_predictions"),
    PrivateName("mteb.abstasks.retrieval", "AbsTaskRetrieval._predictions_path"),
    PrivateName("mteb.abstasks.retrieval", "AbsTaskRetrieval._eval_splits"),
    PrivateName("mteb.abstasks.retrieval", "AbsTaskRetrieval._top_k", on_instance=True),
    PrivateName("mteb._create_dataloaders", "create_dataloader"),
    PrivateName("mteb._create_dataloaders", "_corpus_to_dict"),  # what models/document_loader.py computes in Arrow
    PrivateName("mteb._create_dataloaders", "_custom_collate_fn"),
    PrivateName("mteb.models.search_wrappers", "SearchEncoderWrapper._full_corpus_search"),
    PrivateName("mteb.cli.build_cli", "_add_run_parser"),
    PrivateName("mteb.cli.build_cli", "_add_available_tasks_parser"),
    PrivateName("mteb.cli.build_cli", "_add_available_benchmarks_parser"),
    PrivateName("mteb.evaluate", "_sanitize_model"),  # imports sentence_transformers for isinstance checks only
)


def missing_private_names(sample_task: AbsTaskRetrieval) -> list[str]:
    """The names of :data:`PRIVATE_NAMES` the installed mteb lacks; instance attributes are looked up on
    ``sample_task`` (any constructed retrieval task)."""
    return [str(name) for name in PRIVATE_NAMES if not _exists(name, sample_task)]


def _exists(name: PrivateName, sample_task: AbsTaskRetrieval) -> bool:
    if name.on_instance:
        return hasattr(sample_task, name.attribute.rsplit(".", 1)[-1])
    try:
        functools.reduce(getattr, name.attribute.split("."), importlib.import_module(name.module))
    except (ImportError, AttributeError):
        return False
    return True


# --- registries (checked on CHECKED_ON) ---

def _tasks_module() -> Any:
    return importlib.import_module("mteb.get_tasks")


def registered_task(name: str) -> type[AbsTask] | None:
    """The task class mteb knows under ``name`` (``mteb.get_tasks._TASKS_REGISTRY``), or None."""
    return _tasks_module()._TASKS_REGISTRY.get(name)


def add_task_classes(task_classes: Sequence[type[AbsTask]]) -> None:
    """Put task classes into mteb's name registry and its task list (a class replaces one of its name)."""
    tasks_module = _tasks_module()
    registry: dict[str, type[AbsTask]] = tasks_module._TASKS_REGISTRY
    for cls in task_classes:
        registry[cls.metadata.name] = cls
    kept = tuple(c for c in tasks_module.TASK_LIST if registry.get(c.metadata.name) is c)
    tasks_module.TASK_LIST = (*kept, *(c for c in task_classes if c not in kept))


def join_benchmark_lookup(make_benchmarks: Callable[[], Iterable[Benchmark]]) -> None:
    """Make mteb's benchmark lookup (``mteb.benchmarks.get_benchmark._build_registry``) also return the
    benchmarks ``make_benchmarks`` builds, built on the first lookup as mteb builds its own."""
    lookup = importlib.import_module("mteb.benchmarks.get_benchmark")
    build_registry = lookup._build_registry
    if getattr(build_registry, _MARK, False):
        return

    @functools.cache
    def with_plugin_benchmarks() -> dict[str, Benchmark]:
        return {**build_registry(), **{b.name: b for b in make_benchmarks()}}

    setattr(with_plugin_benchmarks, _MARK, True)
    lookup._build_registry = with_plugin_benchmarks


def add_model_metas(metas: Iterable[ModelMeta]) -> None:
    """Put model metas into mteb's model registry (``mteb.models.model_implementations.MODEL_REGISTRY``)."""
    from mteb.models.model_implementations import MODEL_REGISTRY

    for meta in metas:
        MODEL_REGISTRY[meta.name] = meta


@contextlib.contextmanager
def model_meta_registered(meta: ModelMeta) -> Iterator[None]:
    """``meta`` in mteb's model registry under its name while the block runs; what was there before (or nothing)
    is back afterwards."""
    from mteb.models.model_implementations import MODEL_REGISTRY

    before = MODEL_REGISTRY.get(meta.name)
    MODEL_REGISTRY[meta.name] = meta
    try:
        yield
    finally:
        if before is None:
            MODEL_REGISTRY.pop(meta.name, None)
        else:
            MODEL_REGISTRY[meta.name] = before


# --- plugin retrieval tasks (checked on CHECKED_ON) ---

CacheLookup = Callable[[], "tuple[TaskResult | None, Any]"]
StockWrite = Callable[[Path], None]


class HookedRetrievalTask(AbsTaskRetrieval):
    """An ``AbsTaskRetrieval`` whose private steps call public hooks a subclass overrides.

    Every hook does what stock mteb does until overridden; only instances of this class reach the
    plugin's results cache check and writer (:func:`install_result_hooks`).
    """

    def _evaluate_subset(self, model: Any, data_split: Any, **kwargs: Any) -> Any:
        return self.evaluate_split(model, data_split, **kwargs)

    def _save_task_predictions(self, predictions: Any, model: Any, prediction_folder: Path, hf_split: str,
                               hf_subset: str) -> None:
        self.save_predictions(predictions, model, prediction_folder, hf_split=hf_split, hf_subset=hf_subset)

    def evaluate_split(self, model: Any, data_split: Any, **kwargs: Any) -> Any:
        """Score one split and subset; keyword arguments as mteb passes them (``hf_split``, ``hf_subset``,
        ``encode_kwargs``, ``prediction_folder``, ``num_proc``, ...)."""
        return self.stock_evaluate_split(model, data_split, **kwargs)

    def stock_evaluate_split(self, model: Any, data_split: Any, **kwargs: Any) -> Any:
        """MTEB's own retrieval evaluation of one split and subset."""
        return super()._evaluate_subset(model, data_split, **kwargs)

    def save_predictions(self, predictions: Any, model: Any, prediction_folder: Path, *, hf_split: str,
                         hf_subset: str) -> None:
        """Write the rankings of one split and subset into :meth:`predictions_path`."""
        super()._save_task_predictions(predictions, model, prediction_folder, hf_split=hf_split,
                                       hf_subset=hf_subset)

    def predictions_path(self, prediction_folder: Path) -> Path:
        """Where mteb keeps this task's rankings under ``prediction_folder``."""
        return Path(self._predictions_path(prediction_folder))

    @property
    def search_depth(self) -> int:
        """How many documents per query mteb's search keeps (``max(k_values)``, or a re-ranking's depth)."""
        return int(self._top_k)

    @property
    def requested_splits(self) -> Sequence[str] | None:
        """The splits a run asked for (mteb's filter), or None when it asked for none in particular."""
        return self._eval_splits

    @requested_splits.setter
    def requested_splits(self, splits: Sequence[str] | None) -> None:
        self._eval_splits = splits

    def check_cached_results(self, model_name: str, look_up: CacheLookup) -> tuple[TaskResult | None, Any]:
        """MTEB's results cache check for this task: ``look_up()`` is mteb's own, returning the existing
        result (or None) and the splits still to compute."""
        return look_up()

    @classmethod
    def write_result(cls, result: TaskResult, path: Path, stock_write: StockWrite) -> None:
        """Write ``result`` of this task to ``path``; ``stock_write(target)`` is mteb's own writer."""
        stock_write(path)


def _is_hooked(task_class: object) -> bool:
    return isinstance(task_class, type) and issubclass(task_class, HookedRetrievalTask)


def install_result_hooks() -> None:
    """Route mteb's results cache check and results writer of plugin tasks to their hooks (idempotent).

    A task of mteb's own goes through mteb's functions with the same arguments and nothing else.
    """
    _route_cache_check()
    _route_result_writer()


def _route_cache_check() -> None:
    # mteb.evaluate._check_cache(task, meta, cache, overwrite_strategy): checked on CHECKED_ON
    evaluate_module = importlib.import_module("mteb.evaluate")
    stock = evaluate_module._check_cache
    if getattr(stock, _MARK, False):
        return

    @functools.wraps(stock)
    def check_cache(task: AbsTask, meta: ModelMeta, cache: Any, overwrite_strategy: Any) -> tuple[Any, Any]:
        if not isinstance(task, HookedRetrievalTask):
            return stock(task, meta, cache, overwrite_strategy)
        return task.check_cached_results(str(meta.name), lambda: stock(task, meta, cache, overwrite_strategy))

    setattr(check_cache, _MARK, True)
    evaluate_module._check_cache = check_cache


def _route_result_writer() -> None:
    # TaskResult.to_disk(self, path): checked on CHECKED_ON; the task is found by its registered name
    from mteb.results.task_result import TaskResult

    stock = TaskResult.to_disk
    if getattr(stock, _MARK, False):
        return

    @functools.wraps(stock)
    def to_disk(self: TaskResult, path: Path) -> None:
        owner = registered_task(self.task_name)
        if _is_hooked(owner):
            owner.write_result(self, Path(path), lambda target: stock(self, target))  # type: ignore[union-attr]
        else:
            stock(self, path)

    setattr(to_disk, _MARK, True)
    TaskResult.to_disk = to_disk  # type: ignore[method-assign]


# --- how a retrieval score is stored (checked on CHECKED_ON) ---

# mteb/_evaluators/retrieval_metrics.py: ``parse_metrics_from_scores`` rounds the means of pytrec_eval's measures
# (nDCG, MAP, recall, precision, hit rate; ``accuracy`` is recall@1) with ``round(..., 5)``, while
# ``calculate_retrieval_scores`` leaves MRR's mean (``avg_mrr``) unrounded; mteb/results/task_result.py:
# ``TaskResult.to_disk`` then rounds every float of the scores with ``_round_scores(..., 6)``.
TREC_MEAN_DECIMALS = 5
RESULTS_FILE_DECIMALS = 6
_TREC_MEAN_NAMES = re.compile(r"(ndcg|map|recall|precision|hit_rate)_at_\d+|accuracy")


def stored_decimals(metric: str) -> int:
    """The decimals MTEB keeps of a retrieval mean it writes to a results file: 5 for pytrec_eval's measures,
    6 (the writer's) for MRR and every other score. A value read back is within half a unit of that last
    decimal of the mean MTEB computed."""
    computed = TREC_MEAN_DECIMALS if _TREC_MEAN_NAMES.fullmatch(metric) else RESULTS_FILE_DECIMALS
    return min(computed, RESULTS_FILE_DECIMALS)


# --- encoding and the command line (checked on CHECKED_ON) ---

def create_dataloader(dataset: Any, *, task_metadata: Any, prompt_type: Any, batch_size: int) -> Any:
    """MTEB's own batching of a dataset for ``encode`` (``mteb._create_dataloaders.create_dataloader``)."""
    from mteb._create_dataloaders import create_dataloader as mteb_create_dataloader

    return mteb_create_dataloader(dataset, task_metadata=task_metadata, prompt_type=prompt_type,
                                  batch_size=batch_size)


def collate_batch() -> Callable[[list[dict[str, Any]]], Any]:
    """MTEB's collate function for the batches its dataloaders hand to ``encode``."""
    from mteb._create_dataloaders import _custom_collate_fn

    return _custom_collate_fn


def vectors_on_device_kwargs(model: Any) -> dict[str, Any]:
    """Extra ``encode`` arguments that keep a sentence-transformers model's vectors on its device until the
    call ends: without them it copies each batch's vectors to the host, and that copy makes the host wait
    for the device after every batch instead of tokenizing the next one meanwhile. Checked on :data:`CHECKED_ON`:
    ``SentenceTransformerEncoderWrapper.encode`` hands extra keyword arguments on to
    ``SentenceTransformer.encode`` and moves a returned tensor to the host as float32 itself. Only for
    that exact class: a subclass may hand its arguments elsewhere."""
    from mteb.models import SentenceTransformerEncoderWrapper

    return {"convert_to_tensor": True} if type(model) is SentenceTransformerEncoderWrapper else {}


class HookedEncoderSearch(SearchEncoderWrapper):
    """MTEB's search over an encoder (``SearchEncoderWrapper``) whose full-corpus step calls a public hook.

    Everything else stays MTEB's: the encoded queries, the re-ranking of given candidates, the index
    backends and the results dict built from the ranked ``(score, id)`` lists the hook returns.
    """

    # SearchEncoderWrapper._full_corpus_search(*, query_idx_to_id, query_embeddings, task_metadata, hf_subset,
    # hf_split, top_k, encode_kwargs[, timer]) -> {qid: [(score, id), ...]}: checked on CHECKED_ON; ``timer`` (a
    # TimingStack) came in a 2.26 patch release (2.26.24 has it, 2.26.0 and older do not)
    def _full_corpus_search(self, **arguments: Any) -> dict[str, list[tuple[float, str]]]:
        return self.full_corpus_search(**arguments)

    def full_corpus_search(self, *, query_idx_to_id: dict[int, str], query_embeddings: Any, task_metadata: Any,
                           hf_subset: str, hf_split: str, top_k: int, encode_kwargs: Any, timer: Any = None
                           ) -> dict[str, list[tuple[float, str]]]:
        """The best ``top_k`` documents of the whole corpus (``self.task_corpus``) per query: MTEB's own
        chunked search with its per-item heap merge until overridden. ``timer`` is None where mteb passes none."""
        timing = {} if timer is None else {"timer": timer}
        return super()._full_corpus_search(query_idx_to_id=query_idx_to_id, query_embeddings=query_embeddings,
                                           task_metadata=task_metadata, hf_subset=hf_subset, hf_split=hf_split,
                                           top_k=top_k, encode_kwargs=encode_kwargs, **timing)


def add_mteb_cli_parsers(subparsers: argparse._SubParsersAction) -> None:
    """Add mteb's own ``run``, ``available-tasks`` and ``available-benchmarks`` parsers
    (``mteb.cli.build_cli._add_*_parser``) to ``subparsers``."""
    from mteb.cli import build_cli

    build_cli._add_run_parser(subparsers)
    build_cli._add_available_tasks_parser(subparsers)
    build_cli._add_available_benchmarks_parser(subparsers)


# --- torch left out of a run that needs none (checked on CHECKED_ON) ---

# mteb's ``run`` command (``mteb.cli.build_cli.run``) imports torch to pick a device, and ``mteb.evaluate``
# (``_sanitize_model``) imports sentence_transformers (which imports torch) only to ask whether the model is one of
# its SentenceTransformer or CrossEncoder: about 5 s of CPU that a run on a stored BM25 index would otherwise spend in
# start-up. A stand-in is in ``sys.modules`` only for those two steps: mteb seeds torch whenever ``"torch" in
# sys.modules`` (``mteb._set_seed``), and torch's own import reads attributes of every module there.
_SENTENCE_TRANSFORMERS_CLASSES = frozenset({"CrossEncoder", "SentenceTransformer"})


class _NoInstances(type):
    """A class of a module not imported: nothing can be an instance of it."""

    def __instancecheck__(cls, instance: object) -> bool:
        return False


class _Unimported(types.ModuleType):
    """Stands in for a module not imported yet: reading an attribute imports the module for real, in this stand-in's
    place, and returns the attribute. Only sentence_transformers' model classes are answered without the import, for
    ``isinstance``: no object of a class can exist while its module is not imported."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):  # ``from module import ...`` asks for ``__path__``: a plain module's answer
            raise AttributeError(attribute)
        if self.__name__ == "sentence_transformers" and attribute in _SENTENCE_TRANSFORMERS_CLASSES:
            return _NoInstances(attribute, (), {})
        _remove(self)
        return getattr(importlib.import_module(self.__name__), attribute)


def _stand_in(name: str) -> _Unimported | None:
    """A stand-in for ``name`` put into ``sys.modules``; None (nothing put) if it is imported or not installed."""
    spec = None if name in sys.modules else importlib.util.find_spec(name)
    if spec is None:
        return None
    stand_in = _Unimported(name)
    stand_in.__spec__ = spec  # mteb's installation check (importlib.util.find_spec) reads it
    sys.modules[name] = stand_in
    return stand_in


def _remove(stand_in: _Unimported | None) -> None:
    if stand_in is not None and sys.modules.get(stand_in.__name__) is stand_in:
        del sys.modules[stand_in.__name__]


@contextlib.contextmanager
def torch_deferred() -> Iterator[None]:
    """For mteb's own ``run`` of a model that needs neither torch nor sentence_transformers, with a device named so
    that ``run`` does not ask torch for one: ``run``'s ``import torch`` binds a stand-in, there until the model is
    loaded (``mteb.get_model``); ``_sanitize_model``'s ``import sentence_transformers`` binds one that is there for
    that step alone. A module already imported is left as it is."""
    import mteb

    evaluate_module = importlib.import_module("mteb.evaluate")  # the module: mteb.evaluate is also a function
    get_model, sanitize_model = mteb.get_model, evaluate_module._sanitize_model
    torch = _stand_in("torch")

    @functools.wraps(get_model)
    def get_model_torch_unimported(*arguments: Any, **keywords: Any) -> Any:
        _remove(torch)
        return get_model(*arguments, **keywords)

    @functools.wraps(sanitize_model)
    def sanitize_model_sentence_transformers_unimported(model: Any) -> Any:
        sentence_transformers = _stand_in("sentence_transformers")
        try:
            return sanitize_model(model)
        finally:
            _remove(sentence_transformers)

    mteb.get_model, evaluate_module._sanitize_model = (get_model_torch_unimported,
                                                       sanitize_model_sentence_transformers_unimported)
    try:
        yield
    finally:
        mteb.get_model, evaluate_module._sanitize_model = get_model, sanitize_model
        _remove(torch)
