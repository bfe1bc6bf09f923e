"""The one room that finds, reads and trusts a results folder: every command and report reads through it.

What it holds, each module one job:

- ``reading``: MTEB results files (``mteb.ResultCache`` finds them, ``mteb.results.TaskResult`` reads them),
  each number held to its range, the model's label and revision from the ``model_meta.json`` beside each, into
  :class:`~airbench_mteb.results.reading.ModelTaskResult` records that carry their path, gathered in a
  :class:`~airbench_mteb.results.reading.ResultsFolder`;
- ``kept``: the per-query scores kept beside a results file, held to it by the one trust rule every report uses
  (its model, task and data; the digest its results record; finite values averaging to its scores);
- ``panel``: a panel of models' held per-query scores on one task's split and subset, aligned by query.

Anything it refuses is a :class:`~airbench_mteb.data.errors.DatasetError` naming the file. It sits at the bottom
of the report layer: it imports ``data``, ``metrics``, ``tasks``, ``names`` and mteb, never ``report`` or
``commands``. The per-query file's format and writer stay with the data (:mod:`airbench_mteb.data.per_query`).
"""
