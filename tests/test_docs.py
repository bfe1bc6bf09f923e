"""The documentation cannot go stale: the site builds offline with ``--strict``, every command block on its pages
either runs here or says why not, and what a page shows (outputs, scores, intervals, Δs) is what a fresh run of
its commands gives (``cog --check`` over the README and ``docs/``; tools/docs_examples.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.docs_examples import ROOT, all_blocks, command_blocks, pages

# the site's pages, and CONTRIBUTING.md (its test counts are generated)
COG_PAGES = [page for page in (*pages(), ROOT / "CONTRIBUTING.md") if "[[[cog" in page.read_text(encoding="utf-8")]
# Loaded by every Python that the docs build starts (PYTHONPATH holds only its folder): any connect() raises, so a
# build that tries the network fails loudly.
NO_NETWORK = (
    "import socket\n"
    "def refuse(*args, **kwargs):\n"
    "    raise OSError(f'the docs build tried the network: {args}')\n"
    "socket.socket.connect = refuse\n"
    "socket.socket.connect_ex = refuse\n"
    "socket.getaddrinfo = refuse\n"
)


def mkdocs(*args: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    """The ``mkdocs`` console script of this environment run as the README types it, from the repository root, the
    network refused; nothing but that refusal on PYTHONPATH (the command puts no folder of its own there)."""
    (scratch / "sitecustomize.py").write_text(NO_NETWORK, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    return subprocess.run([str(Path(sys.executable).with_name("mkdocs")), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)


def test_a_cog_block_and_a_marked_block_are_run_and_not_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- [[[cog\ncog.out(page.bash('airbench-mteb tasks'))\n]]] -->\n"
        "```bash\nairbench-mteb tasks\n```\n"
        "<!-- [[[end]]] -->\n\n"
        "<!-- not-run: needs the hub -->\n"
        "```bash\nairbench-mteb download --data-dir m\n```\n\n"
        "```sh\nmteb run -m x\n```\n\n"
        "<!-- not-run: a mark holds for the block right after it only -->\n\nSome text.\n\n"
        "```python\nimport mteb\n```\n\n"
        "```text\nan output block is not a command\n```\n\n"
        '--8<-- "examples/GENERATION.md"\n',
        encoding="utf-8")
    blocks = command_blocks(page)
    assert [(b.page, b.line, b.kind, b.reason, b.first_line) for b in blocks[:4]] == [
        (page.name, 4, "run", "", "airbench-mteb tasks"),
        (page.name, 10, "not-run", "needs the hub", "airbench-mteb download --data-dir m"),
        (page.name, 14, "unmarked", "", "mteb run -m x"),
        (page.name, 22, "unmarked", "", "import mteb"),
    ]
    included = blocks[4:]  # the included file's blocks, reported under its own name
    assert included and {(b.page, b.kind) for b in included} == {("examples/GENERATION.md", "included")}


@pytest.mark.slow
def test_every_command_block_in_the_docs_is_run_or_says_why_not() -> None:
    blocks = all_blocks()
    unmarked = [f"{b.page}:{b.line}" for b in blocks if b.kind == "unmarked"]
    assert unmarked == [], "write these blocks with a cog block (tools.docs_examples.Page) or mark them not-run"
    run = [b for b in blocks if b.kind == "run"]
    skipped = [b for b in blocks if b.kind != "run"]
    assert len(run) >= 20 and all(b.reason for b in skipped)
    print(f"\n{len(run)} command blocks run by cog, {len(skipped)} not run:")
    for block in skipped:
        print(f"  {block.page}:{block.line}  {block.reason}")


@pytest.mark.slow
@pytest.mark.parametrize("page", COG_PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_a_page_shows_what_a_fresh_run_of_its_commands_gives(page: Path) -> None:
    """``cog --check`` runs the page's cog blocks again (each command in the page's own fresh folder) and
    fails when a command fails or its output or a number quoted from it differs from the page."""
    done = subprocess.run([sys.executable, "-m", "cogapp", "--check", "--diff", "-I", str(ROOT), str(page)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, (f"{page.name} is stale or its commands fail; regenerate with "
                                  f"`cog -I . -r {page.relative_to(ROOT)}`:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}")


@pytest.mark.slow
def test_the_site_builds_offline_with_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = mkdocs("build", "--strict", "--site-dir", str(site), scratch=tmp_path)
    assert done.returncode == 0, done.stderr[-6000:]
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    # the CLI reference is generated from the parsers: every command's help is there
    for command in ("package-submission", "score-submission", "significance", "generate irsc", "sample-data"):
        assert f"airbench-mteb {command}" in cli
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "relative_delta" in api  # mkdocstrings rendered the metrics' docstrings
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")
    # a block the tests do not run says so, and why, on the site too
    airbench = (site / "airbench" / "index.html").read_text(encoding="utf-8")
    assert "Not run by the documentation's tests: needs the hub" in airbench
    # a name holding an asterisk renders as written: never emphasis between two of them
    for page in ("source-bias-ties", "generation", "performance", "reference/api"):
        text = (site / page / "index.html").read_text(encoding="utf-8")
        assert "co*cktail" in text and "co<em>" not in text and "</em>cktail" not in text, page


def _cog(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogapp", "-I", str(ROOT), *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow
def test_a_quoted_output_that_differs_from_a_fresh_run_or_a_failing_command_fails_the_check(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    code = ("<!-- [[[cog\nfrom tools.docs_examples import Page\npage = Page('check')\n"
            "cog.out(page.bash('airbench-mteb tasks --family cocktail', keep='^CocktailMSMARCO '))\n"
            "]]] -->\n")
    page.write_text(code + "```bash\nairbench-mteb tasks --family cocktail\n```\n\n```text\nCocktailTyped\n```\n"
                    "<!-- [[[end]]] -->\n", encoding="utf-8")
    stale = _cog("--check", "--diff", page)
    assert stale.returncode != 0 and "-CocktailTyped" in stale.stdout
    assert _cog("-r", page).returncode == 0  # regenerated from the run ...
    assert "```text\nCocktailMSMARCO  family=cocktail" in page.read_text(encoding="utf-8")
    assert _cog("--check", page).returncode == 0  # ... and then it holds

    page.write_text(code.replace("tasks --family cocktail", "tasks --no-such-option") + "<!-- [[[end]]] -->\n",
                    encoding="utf-8")
    failing = _cog("--check", page)  # the command exits 2: the example fails, naming it
    assert failing.returncode != 0 and "`airbench-mteb tasks --no-such-option` exited 2" in failing.stderr


def test_a_name_with_an_asterisk_renders_as_written() -> None:
    import markdown

    from tools.literal_names import LiteralNames

    html = markdown.markdown("co*cktail, then co*cktail again; `co*cktail` in code; *emphasis* stays",
                             extensions=[LiteralNames()])
    assert html.count("co*cktail") == 3 and "<em>emphasis</em>" in html and html.count("<em>") == 1, html
    assert "<code>co*cktail</code>" in html
