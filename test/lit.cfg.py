# lit configuration of FuseFlow's IR and tool tests. Run from the repository root: `lit test/`.
#
# Tests are `.mlir` files and `.py` files with RUN lines; pytest suites (`test_*.py`,
# `conftest.py`), helper modules without RUN lines and `Inputs/` folders are not lit tests.
# Tools run with the Python that runs lit, so the environment lit comes from is the one tested.

import fnmatch
import os
import shutil
import sys

import lit.formats

config.name = "FuseFlow"
config.suffixes = [".mlir", ".py"]
config.excludes = ["Inputs", "Output", "lit.cfg.py", "lit.site.cfg.py", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)

PYTEST_FILES = ("test_*.py", "*_test.py", "conftest.py")


def _not_lit_tests(root):
    """Basenames of the Python files under ``root`` that are pytest suites or have no RUN line.

    lit's excludes are names, not globs; a format class cannot be defined here because lit
    pickles it for its worker processes.
    """
    names = set()
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            if any(fnmatch.fnmatch(name, p) for p in PYTEST_FILES):
                names.add(name)
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                if not any("RUN:" in line for line in f):
                    names.add(name)
    return sorted(names)


config.excludes += _not_lit_tests(config.test_source_root)
config.test_format = lit.formats.ShTest(execute_external=False)

# The environment lit passes to tests keeps PATH; these make the Python imports work the same.
for name in ("PYTHONPATH", "HOME", "TMPDIR"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

python = sys.executable
bin_dir = os.path.dirname(python)


def _tool(name):
    """An executable installed beside the running Python, else found on PATH."""
    found = shutil.which(name, path=bin_dir) or shutil.which(name)
    if found is None:
        lit_config.fatal(f"'{name}' not found beside {python} or on PATH; "
                         "install the test tools with `pip install -e '.[test]'`")
    return found


def _word(name):
    """A substitution pattern for a whole command word (not part of a path or a flag)."""
    return rf"(?<![-\w/.%]){name}(?![-\w.])"


filecheck = _tool("filecheck")
config.substitutions.append(("%PYTHON", python))
config.substitutions.append((_word("fuseflow-opt"), f"{python} -m fuseflow.tools.opt"))
config.substitutions.append((_word("filecheck"), filecheck))
config.substitutions.append((_word("FileCheck"), filecheck))
