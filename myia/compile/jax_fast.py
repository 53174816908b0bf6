"""The call of a traced XLA computation, with what the general call decided (`JaxExecutable`).

Once the JAX backend has traced a program, checked its result dtypes and sized its stacks, a
call only passes its leaves to the jitted computation and reads the results back. `fast_path`
builds that call as one generated function for the program's signature, with no loop over
the arguments:

- a Python int argument is the device array kept for its value (`JaxBackend.int_array`);
- on a CPU device, a large NumPy argument that XLA's CPU client would copy slowly is
  copied into memory it reads in place (`jax_values.aligned`), where the call waits for
  its results into copies reused from call to call (`jax_values.Staging`);
- float64 scalar results (and the status) come back as one array, read as Python floats.

A call whose status says that an error was flagged or that the stacks overflowed raises
`GeneralWay`, and runs again the general way (which raises the user's error at their line,
or compiles larger stacks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractTuple
from .jax_values import Staging, aligned, leaf, leaf_types, python_int
from .lower import record_constructor


class GeneralWay(Exception):
    """A fast call flagged an error or outgrew its stacks: the call goes the general way."""


class Outgrown(GeneralWay):
    """Tracing found that the stacks need `need` rows, past the capacity traced for.

    A loop of known trip count pushes a known number of rows: the program is traced again
    with stacks large enough before XLA compiles it, not compiled and run first to learn it.
    """

    def __init__(self, need: int):
        super().__init__(need)
        self.need = need


def leaf_paths(a: Any, path: str) -> list[tuple[str, Any]]:
    """``(expression, type)`` of each leaf of the value `path` of abstract type `a`, in order.

    The expressions read tuples and records (``a0[1].W``), as `jax_values.flatten` does.
    """
    if leaf(a):
        return [(path, a)]
    if isinstance(a, AbstractTuple):
        return [p for k, e in enumerate(a.elements) for p in leaf_paths(e, f"{path}[{k}]")]
    return [p for name, f in zip(a.names, a.fields) for p in leaf_paths(f, f"{path}.{name}")]


def result_source(a: Any, convert: bool, names: dict[str, Any]) -> str:
    """An expression of the value of abstract type `a` made of the leaves ``r[0]``, ``r[1]``...

    Each leaf is ``convert(r[i], t{i})`` where `convert`, else as it is; the types and the
    records' constructors are added to `names` (as `jax_values.unflatten` makes it).
    """
    count = iter(range(1 << 62))

    def build(a: Any) -> str:
        if leaf(a):
            i = next(count)
            names[f"t{i}"] = a
            return f"convert(r[{i}], t{i})" if convert else f"r[{i}]"
        if isinstance(a, AbstractTuple):
            parts = [build(e) for e in a.elements]
            return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"
        name = f"record{len(names)}"
        names[name] = record_constructor(a.cls)
        return f"{name}({', '.join(build(f) for f in a.fields)})"

    return build(a)


def _builder(out: Any, convert: Any) -> Any:
    """The function of the list of result leaves building the result (`result_source`).

    Each leaf goes through ``convert(leaf, type)`` where `convert` is given, else as it is.
    """
    names: dict[str, Any] = {"convert": convert}
    body = result_source(out, convert is not None, names)
    exec(compile(f"def build(r):\n    return {body}\n", "<myia>", "exec"), names)
    return names["build"]


def _source(
    params: list[Any] | None,
    ints: bool,
    cpu: bool,
    packed: str | None,
    single: bool,
    staged: bool = False,
) -> str:
    """The source of ``values``: the call of the computation on the arguments, its results.

    `params` are the abstract types of the arguments (None: the leaves are `leaves_of` the
    arguments); their leaves are read where they lie in tuples and records (`leaf_paths`).
    Python ints are passed as device arrays where `ints`, large NumPy arrays aligned where
    `cpu`, into copies reused from call to call where `staged` (`jax_values.Staging`, one
    per leaf, by position: the results are then waited for before the copies are given
    back). Packed results are a list of Python floats (the first where `single`), others
    the list of leaves.
    """
    gives: list[str] = []
    if params is None and staged:
        signature, lines, names = "*args", ["leaves, copies = staged_leaves(args)"], "*leaves"
        gives.append("give_back(copies)")
    elif params is None:
        signature, lines, names = "*args", ["leaves = leaves_of(args)"], "*leaves"
    else:
        lines, leaves = [], []
        paths = [p for k, a in enumerate(params) for p in leaf_paths(a, f"a{k}")]
        for k, (x, a) in enumerate(paths):
            nested = "[" in x or "." in x
            if nested and (ints and python_int(a) or cpu and isinstance(a, AbstractArray)):
                lines.append(f"x{k} = {x}")  # read once
                x = f"x{k}"
            if ints and python_int(a):
                lines += [
                    f"b{k} = ints_get({x})",
                    f"if b{k} is None:",
                    f"    b{k} = int_of({x})",
                ]
            elif cpu and isinstance(a, AbstractArray) and staged:
                lines.append(f"b{k} = stage{k}.take({x}) if type({x}) is ndarray else {x}")
                gives.append(f"stage{k}.give(b{k}, {x})")
            elif cpu and isinstance(a, AbstractArray):
                lines.append(f"b{k} = aligned({x}) if type({x}) is ndarray else {x}")
            else:
                leaves.append(x)
                continue
            leaves.append(f"b{k}")
        signature = ", ".join(f"a{k}" for k in range(len(params)))
        names = ", ".join(leaves)
    call = f"fn(ex.capacity, {names})"
    lines += [
        "if settled():",
        f"    r = {call}",
        "else:",
        "    with context():",
        f"        r = {call}",
    ]
    if packed is not None:
        lines += ["out = asarray(r[0]).tolist()", *gives]
        status = "int(out.pop())" if packed == "packed+status" else None
        result = "out[0]" if single else "out"
    else:
        lines += ["result, status = r"]
        if gives:  # XLA has read the arguments once its results are ready
            lines += ["ready(r)", *gives]
        lines += ["if status is None:", "    return result"]
        status, result = "int(asarray(status))", "result"
    if status is not None:
        lines += [
            f"code = {status}",
            "if code & 1 or code >> 1 > ex.capacity:",
            "    raise GeneralWay",
        ]
    lines.append(f"return {result}")
    body = "".join(f"    {line}\n" for line in lines)
    return f"def values({signature}):\n{body}"


def _staged_leaves(ex: Any, stages: dict[int, Staging]) -> tuple[Any, Any]:
    """``(take, give_back)``: the leaves of arguments, large arrays copied by `Staging`.

    ``take(args)`` is ``(leaves, copies)``; ``give_back(copies)`` gives the copies back once
    XLA has read them. `stages` are the leaves' `Staging`s, by position, made as needed.
    """

    def take(args: tuple[Any, ...]) -> tuple[list[Any], list[Any]]:
        leaves = ex._leaves(args, copy=_as_is)
        copies = []
        for k, x in enumerate(leaves):
            if type(x) is np.ndarray:
                stage = stages.get(k) or stages.setdefault(k, Staging())
                leaves[k] = stage.take(x)
                if leaves[k] is not x:
                    copies.append((stage, leaves[k], x))
        return leaves, copies

    def give_back(copies: list[Any]) -> None:
        for stage, copy, x in copies:
            stage.give(copy, x)

    return take, give_back


def _as_is(x: Any) -> Any:
    return x


def fast_path(ex: Any) -> tuple[Any, Any]:
    """``(fast, direct)``: the calls of traced executable `ex`.

    ``fast`` takes the tuple of arguments; ``direct`` the arguments themselves, where each is
    a leaf and the results are Python floats (else it is None).
    """
    backend, packed, out = ex.backend, ex.packed, ex.out
    mesh = backend.layout is not None
    # Over a mesh, `JaxExecutable._leaves` places the leaves on its devices; float64 scalar
    # results pass the arguments as they are.
    own_leaves = not mesh or packed is not None
    namespace = {
        "fn": ex.fn,
        "ex": ex,
        "leaves_of": ex._leaves,
        "ints_get": backend.ints.get,
        "int_of": lambda n: backend.int_array(n, False),
        "aligned": aligned,
        "ndarray": np.ndarray,
        "settled": backend.settled_test(),
        "context": backend.context,
        "asarray": np.asarray,
        "GeneralWay": GeneralWay,
        "ready": backend.jax.block_until_ready,
    }
    # Copies of large arguments reused from call to call where the call waits for its
    # results anyway (NumPy results, not kept on the device).
    staged = backend.cpu and not mesh and not backend.keep_on_device
    #: The copies of each leaf, by its position (`jax_values.Staging`).
    count = sum(len(leaf_types(a)) for a in ex.params)
    ex.staging = {k: Staging() for k in range(count)} if own_leaves else {}
    namespace.update((f"stage{k}", s) for k, s in ex.staging.items())
    namespace["staged_leaves"], namespace["give_back"] = _staged_leaves(ex, ex.staging)
    single = leaf(out)
    source = _source(
        ex.params if own_leaves else None,
        not mesh,
        backend.cpu and not mesh,
        packed,
        single,
        staged,
    )
    exec(compile(source, "<myia>", "exec"), namespace)
    values = namespace["values"]
    slow = ex._call
    # The results as the user gets them, from the list of leaves `r` (`result_source`).
    build = _builder(out, None if backend.keep_on_device else backend.convert)
    # Float64 scalars: Python floats (tolist) as the NumPy backend returns them.
    to_float = [None if a.weak else np.float64 for a in leaf_types(out)] if packed else None
    if packed and single:
        to_float64 = to_float[0]

        def fast(args: tuple[Any, ...]) -> Any:
            try:
                result = values(*args)
            except (GeneralWay, OverflowError):  # (JAX's: an int past int64)
                return slow(args)
            return result if to_float64 is None else to_float64(result)

    elif ex.packing is not None:
        unpack = ex.packing.unpack

        def fast(args: tuple[Any, ...]) -> Any:
            try:
                result = values(*args)
            except (GeneralWay, OverflowError):  # (JAX's: an int past int64)
                return slow(args)
            return build(unpack(result))

    else:

        def fast(args: tuple[Any, ...]) -> Any:
            try:
                result = values(*args)
            except (GeneralWay, OverflowError):  # (JAX's: an int past int64)
                return slow(args)
            return build(result)

    if not (packed and own_leaves and all(c is None for c in to_float)):
        return fast, None
    if single:
        return fast, values  # Python floats out: the call of the arguments themselves

    as_they_are = build if backend.keep_on_device else _builder(out, None)

    def direct(*args: Any) -> Any:
        return as_they_are(values(*args))

    return fast, direct
