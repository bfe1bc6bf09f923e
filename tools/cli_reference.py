"""The CLI reference page, generated from ``airbench_mteb.cli``'s argparse parsers (never typed by hand).

``mkdocs.yml`` names this file under ``hooks:``: when MkDocs renders ``docs/reference/cli.md`` the marker
``<!-- cli-reference -->`` is replaced by every command's ``--help``, subcommands included, so the page
always says what the code accepts. ``python tools/cli_reference.py`` prints the same Markdown.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

MARKER = "<!-- cli-reference -->"
WIDTH = "100"  # argparse wraps help at $COLUMNS: a fixed width gives the same page on every terminal


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse has no public walk over subparsers
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _sections(parser: argparse.ArgumentParser, path: str, depth: int) -> Iterator[str]:
    yield f"{'#' * depth} `{path}`\n\n```text\n{parser.format_help().rstrip()}\n```\n"
    for name, sub in _subcommands(parser):
        yield from _sections(sub, f"{path} {name}", min(depth + 1, 4))


def cli_markdown() -> str:
    """Every command's help, the top-level parser first, as Markdown sections."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        from airbench_mteb.cli import build_parser

        return "\n".join(_sections(build_parser(), "airbench-mteb", 2))
    finally:
        if previous is None:
            os.environ.pop("COLUMNS")
        else:
            os.environ["COLUMNS"] = previous


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs hook: fill the CLI reference page."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_markdown())


if __name__ == "__main__":
    print(cli_markdown())
