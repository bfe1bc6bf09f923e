"""Start-up hook: registers airbench-mteb's tasks the moment ``mteb`` is imported.

MTEB has no plugin mechanism, so the wheel ships ``airbench_mteb_hook.pth`` whose single
line imports this module at interpreter start. It only installs a meta-path finder (stdlib
only, no import of mteb or the plugin); the finder waits for ``import mteb``, lets mteb's
``__init__`` finish, removes itself and registers the plugin's tasks. Set
``AIRBENCH_MTEB_NO_HOOK=1`` to switch it off.
"""

# Only modules the interpreter has already loaded at start-up: this file runs in every Python
# process of the environment, so it must cost next to nothing (no importlib.abc, no typing).
import os
import sys


class _RegisterAfterMtebImport:
    """Meta-path finder that finds nothing itself; wraps the real loader of ``mteb``."""

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
            if "airbench_mteb" in sys.modules:
                return  # the plugin itself is importing mteb; its __init__ registers when done
            try:
                from airbench_mteb.registry import register_all

                register_all()
            except Exception as error:  # mteb itself must keep working
                import warnings

                warnings.warn(f"airbench-mteb: could not register its tasks with mteb: {error!r}", stacklevel=2)

        spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


def _uninstall():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterMtebImport)]


def install():
    """Idempotent: CPython may process a venv's .pth files twice."""
    if os.environ.get("AIRBENCH_MTEB_NO_HOOK") or "mteb" in sys.modules:
        return
    if any(type(f).__name__ == _RegisterAfterMtebImport.__name__ for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _RegisterAfterMtebImport())


install()
