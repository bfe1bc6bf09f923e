"""AIR-Bench leaderboard packages: build them from MTEB prediction files, check them as the leaderboard reads them
(one validator, :mod:`airbench_mteb.submission.validate`, for both commands), and score them on local qrels."""

from airbench_mteb.submission.layout import NO_RERANKER, SearchResultsFile, parse_search_results
from airbench_mteb.submission.package import package_submission, submission_files
from airbench_mteb.submission.score import SubmissionScore, read_package, score_submission

__all__ = ["NO_RERANKER", "SearchResultsFile", "SubmissionScore", "package_submission", "parse_search_results",
           "read_package", "score_submission", "submission_files"]
