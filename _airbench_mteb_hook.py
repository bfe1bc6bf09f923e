"""Start-up hook: registers airbench-mteb's tasks the moment ``mteb`` is imported.

MTEB has no plugin mechanism, so the wheel ships ``airbench_mteb_hook.pth`` whose single
line imports this module at interpreter start. It only installs a meta-path finder (stdlib
only, no import of mteb or the plugin); the finder waits for ``import mteb``, lets mteb's
``__init__`` finish, removes itself and registers the plugin's tasks. Set
``AIRBENCH_MTEB_NO_HOOK=1`` to switch it off.

In mteb's own command line (``mteb run ...``), an error of the plugin's family (a bad setting,
bad data) is printed as the one line that names its culprit, as ``airbench-mteb`` prints it,
instead of a traceback; every other error keeps its traceback.
"""

# Only modules the interpreter has already loaded at start-up: this file runs in every Python
# process of the environment, so it must cost next to nothing (no importlib.abc, no typing).
import os
import sys

NO_HOOK_ENV = "AIRBENCH_MTEB_NO_HOOK"
_YES = ("1", "true", "yes", "on")
_NO = ("0", "false", "no", "off")


class _RegisterAfterMtebImport:
    """Meta-path finder that finds nothing itself; wraps the real loader of ``mteb``.

    With ``refuse`` (an unreadable ``AIRBENCH_MTEB_NO_HOOK``, already told in one line) it registers
    nothing, and ends mteb's own command line with exit status 2 before it runs without the plugin.
    """

    def __init__(self, refuse=False):
        self.refuse = refuse

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "mteb":
            return None
        # Stay installed until mteb has really been executed: `python -m mteb` asks for the
        # spec once (runpy's find_spec) before it imports the package.
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec = spec.loader.exec_module

        def exec_then_register(module):
            real_exec(module)
            _uninstall()
            if self.refuse:
                if _running_mteb_cli():
                    sys.exit(2)  # the line naming the variable is out; no run without the plugin's tasks
                return
            if _running_mteb_cli():
                sys.excepthook = _one_line_user_errors(sys.excepthook)
            if "airbench_mteb" in sys.modules:
                return  # the plugin itself is importing mteb; its __init__ (or its command line) registers
            try:
                from airbench_mteb.registry import register_all

                register_all()
            except Exception as error:  # mteb itself must keep working
                import warnings

                warnings.warn(f"airbench-mteb: could not register its tasks with mteb: {error!r}", stacklevel=2)

        spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


def _running_mteb_cli():
    """``mteb ...`` (the console script) or ``python -m mteb ...`` (argv[0] is still "-m" while mteb is imported)."""
    if sys.argv and os.path.basename(sys.argv[0]) == "mteb":
        return True
    given = getattr(sys, "orig_argv", [])
    module = given.index("-m") + 1 if "-m" in given else len(given)  # the interpreter's own -m comes first
    return given[module:module + 1] == ["mteb"]


def _one_line_user_errors(previous):
    """An excepthook printing the plugin's user errors as ``mteb: <message>``; others go to ``previous``."""

    def excepthook(kind, error, trace):
        try:
            from airbench_mteb.errors import USER_ERRORS as family
            from airbench_mteb.errors import one_line
        except Exception:  # the plugin cannot be imported: nothing of it raised this
            family = ()
        if family and issubclass(kind, family):
            print(f"mteb: {one_line(error)}", file=sys.stderr)
        else:
            previous(kind, error, trace)

    return excepthook


def _uninstall():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterMtebImport)]


def _switched_off():
    """``AIRBENCH_MTEB_NO_HOOK``: True or False for a yes/no value; None for another value, which keeps the hook
    off and says so (and ``mteb``'s own command line then stops, see :class:`_RegisterAfterMtebImport`)."""
    value = os.environ.get(NO_HOOK_ENV, "").strip().lower()
    if value in _YES:
        return True
    if not value or value in _NO:
        return False
    print(f"airbench-mteb: ${NO_HOOK_ENV}={value!r} is neither yes nor no (use one of {', '.join(_YES)} or "
          f"{', '.join(_NO)}); the start-up hook stays off", file=sys.stderr)
    return None


def install():
    """Idempotent: CPython may process a venv's .pth files twice."""
    if "mteb" in sys.modules:
        return
    off = _switched_off()
    if off:
        return
    if any(type(f).__name__ == _RegisterAfterMtebImport.__name__ for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _RegisterAfterMtebImport(refuse=off is None))


install()
