"""`airbench-mteb`: mteb's own CLI plus the plugin's commands.

``airbench-mteb run`` is ``mteb run`` with the plugin registered, ``--data-dir`` for local
mirrors, local model folders and the bundled model aliases. The other commands live in
``airbench_mteb/commands/<command>.py`` (``-`` spelled ``_``), each exposing ``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from airbench_mteb import register_all
from airbench_mteb.errors import USER_ERRORS, one_line

SIGPIPE_EXIT = 141  # what a shell reports for a command ended by SIGPIPE (128 + 13)

# One module per command, named after it (`export-beir` -> commands/export_beir.py)
COMMAND_MODULES = (
    "airbench_mteb.commands.tasks",
    "airbench_mteb.commands.download",
    "airbench_mteb.commands.report",
    "airbench_mteb.commands.export_beir",
    "airbench_mteb.commands.generate",
    "airbench_mteb.commands.register_dataset",
    "airbench_mteb.commands.compare",
    "airbench_mteb.commands.generate_irsc",
    "airbench_mteb.commands.bias",
    "airbench_mteb.commands.demo",
    "airbench_mteb.commands.encode",
    "airbench_mteb.commands.package_submission",
    "airbench_mteb.commands.score_submission",
    "airbench_mteb.commands.stats",
    "airbench_mteb.commands.significance",
    "airbench_mteb.commands.consistency",
    "airbench_mteb.commands.sample_data",
    "airbench_mteb.commands.leaderboard",
)


# mteb's own commands: their parsers are mteb's (commands/run.py adds the plugin's options), built only when one of
# them is the command given, so that the others' help and argument errors answer without importing mteb
MTEB_COMMANDS = {
    "run": "evaluate a model on tasks or benchmarks: mteb run with the plugin's tasks, --data-dir and local models",
    "available-tasks": "list the tasks mteb knows, the plugin's among them (mteb available-tasks)",
    "available-benchmarks": "list the benchmarks mteb knows, the plugin's among them (mteb available-benchmarks)",
}


def build_parser(with_mteb: bool = True) -> argparse.ArgumentParser:
    """Every command's parser; without ``with_mteb``, mteb's own commands are their name and help only.

    The command modules import nothing heavy at their top (each command's function imports what it runs), so
    without ``with_mteb`` this imports neither mteb nor a model library.
    """
    parser = argparse.ArgumentParser(prog="airbench-mteb", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    if with_mteb:
        from airbench_mteb.commands.run import register_mteb_commands

        register_mteb_commands(subparsers)
    else:
        for name, summary in MTEB_COMMANDS.items():
            subparsers.add_parser(name, help=summary, description=summary)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def _prepared(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command's arguments, then the plugin registered with mteb (the package leaves that to the command line,
    :mod:`airbench_mteb`). The cyclic collector is paused meanwhile (run again and again over the objects piling up
    while mteb is imported, it took a quarter of a run's start-up), and what was made, which lives until the process
    ends, is then frozen out of its sight."""
    given = sys.argv[1:] if argv is None else list(argv)
    collecting = gc.isenabled()
    gc.disable()
    try:
        args = build_parser(with_mteb=bool(given) and given[0] in MTEB_COMMANDS).parse_args(given)
        register_all()
        return args
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    command = "airbench-mteb"
    try:
        # registering the tasks reads settings: inside the one error path too
        args = _prepared(argv)
        command = " ".join(filter(None, (command, args.command, getattr(args, "generator", None))))
        result = args.func(args)
        sys.stdout.flush()  # a reader that left (`| head`) is found here, not at the interpreter's exit
    except USER_ERRORS as error:
        # the message names the culprit, a traceback adds nothing
        print(f"{command}: {one_line(error)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # as a Unix tool: stop quietly; stdout goes to /dev/null so the final flush cannot raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return SIGPIPE_EXIT
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
