"""MkDocs hook: a command block marked ``<!-- not-run: REASON -->`` says so on the site too.

The mark is an HTML comment (tools/docs_examples.py reads it; GitHub hides it); on the site it becomes a line
before the block, so a reader sees that the example needs the hub, an LLM or minutes, and is not run by the tests.
"""

from __future__ import annotations

# the hook's own folder, not the repository root, is on sys.path while MkDocs (>= 1.6) loads it: the `mkdocs`
# command does not put the current folder there
from docs_examples import NOT_RUN


def on_page_markdown(markdown: str, page, config, files) -> str:
    return NOT_RUN.sub(lambda mark: f"*Not run by the documentation's tests: {mark['reason']}.*\n", markdown)
