"""Test configuration: every specialized graph is verified (structure and types)."""

import myia.api

myia.api.VERIFY = True

# The `check` fixture of the language tests (run in the interpreter alone, then in the whole
# pipeline, and compare with Python): see tests/helpers.py.
from helpers import check  # noqa: E402, F401
