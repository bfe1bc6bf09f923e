"""Cocktail-style mixed-source corpora from any BEIR corpus and any LLMs
(the co*cktail paper, arXiv 2405.16546, section 3.1 and Appendix A.2).

Every kept document is rewritten by every LLM source with the paper's post-instruction prompt
(``prompts/rewrite.txt``: the original text, then "Please rewrite the above given text. Your answer
must be formatted as follows: Rewritten Text: <your rewritten text>."), without any query
information. The output is a multi-source folder the source-bias tasks read directly::

    OUT/corpus/human.jsonl, OUT/corpus/<source>.jsonl   same ``_id`` set, titles copied
    OUT/queries.jsonl, OUT/qrels/<split>.tsv            restricted to the kept documents
    OUT/cocktail.json, OUT/README.md                    how it was made (sources, seed, counts, LLM account)

Modules, one job each: ``prompts`` (the prompt), ``answers`` (rewrite and refusal parsing),
``config`` (sources, settings, seeds), ``corpus`` (the input folder), ``sampling`` (which documents),
``rewrite`` (one LLM call), ``generate`` (the resumable run), ``output`` (files and card) and
``quality`` (the Appendix A.3 report of a generated folder).
"""

from airbench_mteb.generation.cocktail.config import CocktailConfig, LLMSource
from airbench_mteb.generation.cocktail.generate import CocktailRun, generate

__all__ = ["CocktailConfig", "CocktailRun", "LLMSource", "generate"]
