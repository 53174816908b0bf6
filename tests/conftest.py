"""Test configuration: every specialized graph is verified (structure and types)."""

import myia.api

myia.api.VERIFY = True
