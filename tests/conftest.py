"""Test configuration: every specialized graph is verified (structure and types).

Nothing is written to the user's cache: the native backend's modules go to a directory of
the tests, and compiled programs are not cached on disk (test_disk_cache.py turns that cache
on in directories of its own).
"""

import os
import tempfile

os.environ["MYIA_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), f"myia-tests-{os.getuid()}")
os.environ["MYIA_CACHE_PROGRAMS"] = "0"

import myia.api  # noqa: E402

myia.api.VERIFY = True

# The `check` fixture of the language tests (run in the interpreter alone, then in the whole
# pipeline, and compare with Python): see tests/helpers.py.
from helpers import check  # noqa: E402, F401
