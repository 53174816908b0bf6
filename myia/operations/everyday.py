"""Everyday Python in Myia's subset: ``xs.append(v)`` on a list being built.

`mapping.py` says which Python function each one is; ``xs.append(v)`` is rewritten by the
frontend (`myia.frontend.appends`) into a call of `list_append` (through `ops.list_append`).
"""

from __future__ import annotations

from ..primitives import P


def list_append(lst, value):
    """The list `lst` and then `value` (``lst.append(value)``, `lst` rebound to it)."""
    return P.list_concat(lst, [value])
