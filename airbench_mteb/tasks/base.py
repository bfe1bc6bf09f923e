"""Behaviour shared by every task of the plugin; the task classes themselves are declarations."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.per_query import DIGEST_KEY, PendingScores, QueryScores
from airbench_mteb.data.retrieval_data import RetrievalData
from airbench_mteb.metrics.per_query import (
    interval_scores,
    kept_metrics,
    label_coverage,
    per_query_scores,
    scored_queries,
)
from airbench_mteb.metrics.resampling import CI_SETTINGS, configured_resampling, recorded_settings, settings_label
from airbench_mteb.metrics.tie_neutral import tie_neutral_ndcg_mean
from airbench_mteb.mteb_compat import CacheLookup, HookedRetrievalTask, StockWrite

if TYPE_CHECKING:
    from mteb.results import TaskResult
    from typing_extensions import Self

logger = logging.getLogger(__name__)

SPLIT_DATA_KEY = "split_data_revision"  # in a split and subset's score dict: what that split's scores rest on


class PluginRetrievalTask(HookedRetrievalTask):
    """An MTEB retrieval task whose data come from a plugin loader instead of a hub dataset.

    Subclasses implement :meth:`load_split`. Evaluation goes through the content-keyed
    embedding cache, so a corpus shared by splits, subsets or tasks is encoded once, and an
    encoder's search keeps each query's top k on the model's device (:mod:`airbench_mteb.models.topk_search`).
    """

    # The per-query scores on their way from scoring to the results writer, which MTEB calls on the task class
    # with the result only: one holder for every plugin task, keyed by task name and data.
    pending_scores: ClassVar[PendingScores] = PendingScores()

    def load_split(self, hf_subset: str, split: str) -> RetrievalData:
        raise NotImplementedError

    def filter_eval_splits(self, eval_splits: Sequence[str] | None) -> Self:
        """Keep the requested splits this task has (a Long-Doc dataset has one of dev or test).

        Checked when tasks are selected, before any data is read: a task with none of the requested
        splits is evaluated on none and says so in one line.
        """
        if eval_splits is None:
            self.requested_splits = None
            return self
        own = self.metadata.eval_splits
        self.requested_splits = [split for split in eval_splits if split in own]
        if not self.requested_splits:
            logger.warning("%s: skipped, it has none of the requested splits %s (its splits: %s)",
                           self.metadata.name, ", ".join(eval_splits), ", ".join(own))
        return self

    @property
    def eval_splits(self) -> Sequence[str]:
        # MTEB falls back to every split when the filtered list is empty; a filtered-out task must stay empty
        return self.metadata.eval_splits if self.requested_splits is None else self.requested_splits

    def data_revision(self) -> str:
        """What identifies the data this task reads now; recorded as the results' ``dataset_revision``.

        The catalog's hub revision by default; a task reading local files returns a fingerprint of them.
        """
        return self.metadata.revision

    def split_data_revision(self, split: str) -> str:
        """What the scores of ``split`` rest on (recorded in its score dict as ``split_data_revision``): by default
        the whole data revision; a task whose splits are files of their own narrows it to that split's."""
        return self.metadata.revision

    def pin_data_revision(self) -> None:
        """Record :meth:`data_revision` in this instance's metadata, so MTEB writes it into the results."""
        revision = self.data_revision()
        if revision != self.metadata.revision:
            self.metadata = self.metadata.model_copy(update={"dataset": {**self.metadata.dataset,
                                                                           "revision": revision}})

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.pin_data_revision()  # also when MTEB's results cache is not consulted: predictions carry it
        self.dataset = {}
        for hf_subset in self.hf_subsets:
            for split in self.eval_splits:
                self.dataset.setdefault(hf_subset, {})[split] = self.load_split(hf_subset, split).to_mteb()
        self.data_loaded = True

    def check_cached_results(self, model_name: str, look_up: CacheLookup) -> tuple[TaskResult | None, Any]:
        """Never report results computed on other data than the data this task reads now.

        MTEB skips a task whose results file already holds every split, whatever data produced it. Before
        its cache check, the task records what it reads (:meth:`pin_data_revision`); an existing result
        with another revision stops the run with a message naming the flag that recomputes.
        """
        self.pin_data_revision()
        existing, missing = look_up()
        if existing is not None and existing.dataset_revision != self.metadata.revision:
            raise DatasetError(
                f"results of {self.metadata.name} for {model_name} were computed on other data (dataset revision "
                f"{existing.dataset_revision!r}); this run reads {self.metadata.revision!r}. Recompute with "
                "--overwrite-strategy always (overwrite_strategy='always'), or write to another --output-folder.")
        if existing is not None:
            self._check_interval_settings(existing, model_name)
        return existing, missing

    def _check_interval_settings(self, existing: TaskResult, model_name: str) -> None:
        """Intervals asked with other settings (method, resamples) than those of the existing results would be
        taken from the file unchanged: refused like other data. Results with intervals serve a run without."""
        from airbench_mteb.tasks.closed_book import CLOSED_BOOK

        asked = settings_label(configured_resampling())
        if asked == settings_label(None):
            return
        for split, rows in existing.scores.items():
            for row in rows:
                recorded = recorded_settings(row)
                if CLOSED_BOOK not in row and recorded != asked:
                    raise DatasetError(
                        f"results of {self.metadata.name} for {model_name} ({split}/{row.get('hf_subset')}) hold "
                        f"confidence intervals computed with {recorded}; this run asks for {asked}. Recompute "
                        "with --overwrite-strategy always, or write to another --output-folder.")

    @classmethod
    def write_result(cls, result: TaskResult, path: Path, stock_write: StockWrite) -> None:
        """MTEB writes a result file in place, so a full disk or a kill leaves it cut off and the next run
        stops on it, and a FIFO or a read-only file at its path is written into; here it goes through the
        plugin's one safe writer (checked target, old file kept on failure), with the per-query scores
        beside it (:mod:`airbench_mteb.data.per_query`)."""
        from airbench_mteb.data.files import atomic_path

        with atomic_path(path) as scratch:
            stock_write(scratch)
        cls.pending_scores.write(result.task_name, result.dataset_revision, path)

    def evaluate_split(self, model: Any, data_split: Any, *, hf_split: str, hf_subset: str, encode_kwargs: Any,
                       prediction_folder: Path | None = None, num_proc: int | None = None, **kwargs: Any) -> Any:
        from airbench_mteb.models.embedding_cache import with_embedding_cache
        from airbench_mteb.models.rerankers import as_search_model
        from airbench_mteb.tasks.closed_book import is_closed_book

        self._scored_model = getattr(model, "mteb_model_meta", None)  # whose per-query scores are kept
        model = as_search_model(with_embedding_cache(model))  # an encoder: length order, top k on its device
        if is_closed_book(data_split):  # no qrels here (AIR-Bench test): rankings for the leaderboard, no scores
            return self.evaluate_closed_book(model, data_split, hf_split=hf_split, hf_subset=hf_subset,
                                             encode_kwargs=encode_kwargs, prediction_folder=prediction_folder,
                                             num_proc=num_proc)
        return self.stock_evaluate_split(model, data_split, hf_split=hf_split, hf_subset=hf_subset,
                                         encode_kwargs=encode_kwargs, prediction_folder=prediction_folder,
                                         num_proc=num_proc, **kwargs)

    def evaluate_closed_book(self, model: Any, data_split: Any, *, hf_split: str, hf_subset: str, encode_kwargs: Any,
                             prediction_folder: Path | None = None, num_proc: int | None = None) -> dict[str, Any]:
        """A split without qrels: its rankings saved for scoring elsewhere, no scores
        (:func:`~airbench_mteb.tasks.closed_book.retrieve_only`); ``model`` is already a search model."""
        from airbench_mteb.tasks.closed_book import retrieve_only

        return retrieve_only(self, model, data_split, hf_split=hf_split, hf_subset=hf_subset,
                             encode_kwargs=encode_kwargs, prediction_folder=prediction_folder, num_proc=num_proc)

    def keep_query_scores(self, hf_split: str, hf_subset: str, kept: QueryScores) -> dict[str, str]:
        """Hold ``kept`` for the results file (:mod:`airbench_mteb.data.per_query`); the score dict's digest key."""
        meta = getattr(self, "_scored_model", None)
        if meta is not None:
            self.pending_scores.hold(meta.name, meta.revision, self.metadata.name, self.metadata.revision, hf_split,
                                     hf_subset, kept)
        return {DIGEST_KEY: kept.digest()}

    def query_scores(self, scores: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                     results: Mapping[str, Mapping[str, float]], hf_subset: str) -> QueryScores:
        """Per-query values of the main score and the other kept metrics, from MTEB's per-query measures, over the
        queries MTEB's score averages over (:func:`~airbench_mteb.metrics.per_query.scored_queries`): every number
        of the task (score, interval, per-query file, judged@k) is of ``query_ids``."""
        query_ids = scored_queries(qrels, results)
        return QueryScores(query_ids, per_query_scores(scores, qrels, results, kept_metrics(self.metadata.main_score),
                                                       query_ids))

    def task_specific_scores(self, scores: dict[str, dict[str, float]], qrels: Mapping[str, Mapping[str, int]],
                             results: dict[str, dict[str, float]], hf_split: str, hf_subset: str) -> dict[str, Any]:
        """Label coverage (``judged_at_10``, ``judged_at_100``: MTEB does not compute it), nDCG@10 expected over
        every order of exactly tied scores (``ndcg_at_10_tie_neutral``, :mod:`airbench_mteb.metrics.tie_neutral`),
        confidence intervals of the kept metrics (``<metric>_ci_low``/``_ci_high``, ``ci_*``), and the per-query
        values behind them held for the results file (:mod:`airbench_mteb.data.per_query`), bound to these scores
        by their digest (``per_query_sha256``)."""
        kept = self.query_scores(scores, qrels, results, hf_subset)
        return self.scores_from(kept, qrels, results, hf_split, hf_subset)

    def scores_from(self, kept: QueryScores, qrels: Mapping[str, Mapping[str, int]],
                    results: Mapping[str, Mapping[str, float]], hf_split: str, hf_subset: str) -> dict[str, Any]:
        """What :meth:`task_specific_scores` returns, from the per-query values :meth:`query_scores` gave
        (``kept``); ``kept`` is held for the results file on the way."""
        digest = self.keep_query_scores(hf_split, hf_subset, kept)
        coverage = label_coverage(kept.metrics)
        tie_neutral = tie_neutral_ndcg_mean(qrels, results, kept.query_ids, 10)
        resampling = configured_resampling()
        intervals = {} if resampling is None else interval_scores(kept.metrics, resampling)
        return {**coverage, **tie_neutral, **intervals, CI_SETTINGS: settings_label(resampling), **digest,
                SPLIT_DATA_KEY: self.split_data_revision(hf_split)}

    def save_predictions(self, predictions: Any, model: Any, prediction_folder: Path, *, hf_split: str,
                         hf_subset: str) -> None:
        """MTEB's prediction file, plus the fingerprint of the data the rankings come from.

        MTEB merges a split into whatever file is there; here rankings of another model or of other data
        are replaced (with a log line), never mixed with these, and the file is written atomically.
        """
        from airbench_mteb.data.files import atomic_write
        from airbench_mteb.data.predictions import Predictions, read_predictions
        from airbench_mteb.models.arguments import meta_label, model_label

        path = self.predictions_path(prediction_folder)
        meta = model.mteb_model_meta
        current = Predictions(path=path, task_name=self.metadata.name, model_name=meta.name, revision=meta.revision,
                              runs={}, dataset_revision=self.metadata.revision,
                              experiment_kwargs=dict(meta.experiment_kwargs or {}) or None)
        if path.exists():
            existing = read_predictions(path)
            same = (existing.model, existing.dataset_revision) == (current.model, current.dataset_revision)
            if same:
                current.runs = existing.runs
            else:
                logger.warning("%s: replacing rankings of %s (data %s) with those of %s (data %s)", path,
                               model_label(existing.model_name, existing.experiment_kwargs), existing.dataset_revision,
                               meta_label(meta), current.dataset_revision)
        current.runs.setdefault(hf_subset, {})[hf_split] = predictions
        with atomic_write(path) as handle:
            json.dump(current.to_json(), handle)
