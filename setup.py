"""Only job: put the one-line start-up hook (.pth) into wheels and editable installs.

Everything else is declared in setup.cfg. A .pth file must sit at the root of site-packages,
which neither package_data nor data_files can express.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HOOK_FILE = "airbench_mteb_hook.pth"
HOOK_LINE = "import _airbench_mteb_hook\n"


class BuildPyWithHook(build_py):
    def run(self) -> None:
        super().run()
        Path(self.build_lib, HOOK_FILE).write_text(HOOK_LINE)
        if getattr(self, "editable_mode", False):
            # PEP 660: the editable wheel is assembled from install's install_lib, not build_lib;
            # without this `pip install -e` would ship no hook.
            wheel_root = self.distribution.get_command_obj("install").install_lib
            if wheel_root:
                Path(wheel_root).mkdir(parents=True, exist_ok=True)
                Path(wheel_root, HOOK_FILE).write_text(HOOK_LINE)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib, HOOK_FILE))]


setup(py_modules=["_airbench_mteb_hook"], cmdclass={"build_py": BuildPyWithHook})
