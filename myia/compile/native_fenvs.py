"""Function values holding values of their own class: ``(tag, index)`` into lists of environments.

The backpropagator of a recursion's node holds those of its children: in the machine code of a
whole program, a function value of such a class (`myia.compile.native_closures.Closures.indexed`:
one whose members' free values hold values of the class, directly or through other classes)
cannot be a tuple of its free values (a type containing itself). It is ``(tag, index)``
instead: the closure maker appends the tuple of its free values to the list of member
``tag``'s environments (a typed list, made by the entry at each call, ``_fe[k]``), and
``index`` is its position there; a closed member is ``(tag, 0)``. A dispatch on the tag reads
the free values back from the list. ``_fe`` (the tuple of the lists) is a hidden first argument
of every function, like the records' ``_rc`` (`myia.compile.native_records.thread_hidden`).

The free values of such a member are arrays (pushed C-contiguous), numbers, records of a
recursive class (their numbers) and function values of indexed classes; any other keeps the
program off machine code whole.
"""

from __future__ import annotations

import ast
from typing import Any

from ..abstract.data import AbstractFunction, AbstractScalar, AbstractTuple
from .native_arrays import DTYPES, native_array, numba_type
from .native_records import recursive_record, rename_entry

#: The hidden argument of every function: the lists of environments of the call.
FE = "_fe"


def _field(closures: Any, node: Any, a: Any, path: tuple, x: str) -> tuple[str, str]:
    """The Numba type of a free value `x` of type `a` (at `path` in `node`), and its copy."""
    from .native_closures import NotWhole

    if isinstance(a, AbstractTuple):
        parts = [
            _field(closures, node, e, path + (i,), f"{x}[{i}]") for i, e in enumerate(a.elements)
        ]
        types = "".join(t + ", " for t, _ in parts)
        owns = "".join(o + ", " for _, o in parts)
        return f"_nt.Tuple(({types}))", f"({owns})"
    if native_array(a):
        return numba_type(a), f"np.ascontiguousarray({x})"
    if isinstance(a, AbstractScalar) and a.dtype in DTYPES:
        return numba_type(a), x
    if recursive_record(a) is not None:
        return "_nt.int64", x
    if isinstance(a, AbstractFunction) and closures.indexed(closures.root(node, path)):
        return "_nt.UniTuple(_nt.int64, 2)", x
    raise NotWhole(f"a free value of a function value of its own kind is of type {a}")


def _env_list(closures: Any, root: Any, t: int, nodes: list[Any]) -> int:
    """The position in ``_fe`` of the list of environments of member `t` of class `root`."""
    key = (root, t)
    known = closures.env_lists.get(key)
    if known is not None:
        return known[0]
    fields = [_field(closures, n, n.abstract, (), f"e[{i}]") for i, n in enumerate(nodes)]
    k = len(closures.env_lists)
    types = "_nt.Tuple((" + "".join(ty + ", " for ty, _ in fields) + "))"
    closures.env_lists[key] = (k, types)
    owns = "".join(o + ", " for _, o in fields)
    closures.env_source.append(
        f"def _fnew_{k}(_fe, e):\n    envs = _fe[{k}]\n    envs.append(({owns}))\n"
        f"    return len(envs) - 1\n\n\n_E{k} = {types}\n"
    )
    return k


def indexed_value(closures: Any, root: Any, t: int, nodes: list[Any]) -> str:
    """The expression of a value of member `t` of indexed class `root`, of free values `nodes`."""
    if not nodes:
        return f"({t}, 0)"
    k = _env_list(closures, root, t, nodes)
    args = "".join(f"{closures.gen.expr(n)}, " for n in nodes)
    return f"({t}, _fnew_{k}({FE}, ({args})))"


def indexed_env(closures: Any, root: Any, t: int, nodes: list[Any]) -> list[str]:
    """The read of the environment of member `t` of class `root` in a dispatcher (of ``_f``).

    (A list of one expression, of the tuple of its free values; none for a closed member.)
    """
    if not nodes:
        return []
    k = _env_list(closures, root, t, nodes)
    return [f"{FE}[{k}][_f[1]]"]


def env_entry(functions: dict[str, ast.FunctionDef], entry: str, count: int) -> str:
    """Make the entry an inner function taking ``_fe``; return the source of the new entry.

    The new entry (of the entry's name and arguments, ``_fe`` excluded) makes the `count`
    lists of environments and calls the inner one. `functions` take ``_fe`` first already.
    """
    fn = rename_entry(functions, entry, "_fe_")
    params = [a.arg for a in fn.args.args if a.arg != FE]
    lists = "".join(f"_List.empty_list(_E{k}), " for k in range(count))
    return (
        f"def {entry}({', '.join(params)}):\n    {FE} = ({lists})\n"
        f"    return {fn.name}({', '.join([FE, *params])})\n"
    )
