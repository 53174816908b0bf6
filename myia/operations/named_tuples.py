"""Named tuples in Myia code: read as tuples by the operations on sequences, as dicts.

A named tuple is a record (`myia.records`); the operations that read sequences
(`myia.operations.core.Operation.sequence`) take it as the tuple of its fields through
`tuple_view`, and its ``_asdict()`` is `namedtuple_asdict`'s function.
"""

from __future__ import annotations

from ..primitives import P

#: The functions `tuple_view` made, by callee and mask (each parsed once).
_TUPLE_VIEWS: dict = {}


def tuple_view(callee, mask):
    """`callee` called with its arguments flagged in `mask` (named tuples) as plain tuples.

    A named tuple is read as the tuple of its fields by the operations on sequences
    (`myia.operations.core.Operation.sequence`): ``p[0]``, ``len(p)``, ``p + q`` give what
    they give of tuples, as in Python. The operations take one or two arguments (a method,
    ``p.index(v)``, the named tuple first and any others after it).
    """
    key = (callee, mask)
    if key not in _TUPLE_VIEWS:
        if mask[1:] == (True,):
            if mask[0]:

                def call(a, b):
                    return callee(P.record_fields(a), P.record_fields(b))

            else:

                def call(a, b):
                    return callee(a, P.record_fields(b))

        else:

            def call(a, *rest):
                return callee(P.record_fields(a), *rest)

        _TUPLE_VIEWS[key] = call
    return _TUPLE_VIEWS[key]


#: The functions `namedtuple_asdict` made, by the names of the fields.
_ASDICTS: dict = {}


def namedtuple_asdict(names):
    """A named tuple's ``_asdict()``, for its fields `names`: a dict of them, in order."""
    if names not in _ASDICTS:

        def asdict(obj):
            return P.dict_from_items(names, P.record_fields(obj))

        _ASDICTS[names] = asdict
    return _ASDICTS[names]
