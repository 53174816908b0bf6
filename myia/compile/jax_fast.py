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

from ..abstract.data import AbstractArray
from .jax_values import Staging, aligned, as_is, leaf, leaf_types, python_int, unflatten


class GeneralWay(Exception):
    """A fast call flagged an error or outgrew its stacks: the call goes the general way."""


def _source(
    params: list[Any] | None,
    ints: bool,
    cpu: bool,
    packed: str | None,
    single: bool,
    staged: bool = False,
) -> str:
    """The source of ``values``: the call of the computation on the arguments, its results.

    `params` are the abstract types of the arguments where each is one leaf (else None: the
    leaves are `leaves_of` the arguments); Python ints are passed as device arrays where
    `ints`, large NumPy arrays aligned where `cpu`, into copies reused from call to call
    where `staged` (`jax_values.Staging`: the results are then waited for before the copies
    are given back). Packed results are a list of Python floats (the first where `single`),
    others the list of leaves.
    """
    gives: list[str] = []
    if params is None and staged:
        signature, lines, names = "*args", ["leaves, copies = staged_leaves(args)"], "*leaves"
        gives.append("give_back(copies)")
    elif params is None:
        signature, lines, names = "*args", ["leaves = leaves_of(args)"], "*leaves"
    else:
        lines, leaves = [], []
        for k, a in enumerate(params):
            if ints and python_int(a):
                lines += [
                    f"b{k} = ints_get(a{k})",
                    f"if b{k} is None:",
                    f"    b{k} = int_of(a{k})",
                ]
            elif cpu and isinstance(a, AbstractArray) and staged:
                lines.append(f"b{k} = stage{k}.take(a{k}) if type(a{k}) is ndarray else a{k}")
                gives.append(f"stage{k}.give(b{k}, a{k})")
            elif cpu and isinstance(a, AbstractArray):
                lines.append(f"b{k} = aligned(a{k}) if type(a{k}) is ndarray else a{k}")
            else:
                leaves.append(f"a{k}")
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
    own_leaves = all(leaf(a) for a in ex.params) and (not mesh or packed is not None)
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
    ex.staging = {k: Staging() for k in range(len(ex.params))} if own_leaves else {}
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
    slow, convert = ex._call, backend.convert
    # Float64 scalars: Python floats (tolist) as the NumPy backend returns them.
    to_float = [None if a.weak else np.float64 for a in leaf_types(out)] if packed else None
    if packed and single:
        to_float64 = to_float[0]

        def fast(args: tuple[Any, ...]) -> Any:
            try:
                result = values(*args)
            except GeneralWay:
                return slow(args)
            return result if to_float64 is None else to_float64(result)

    elif ex.packing is not None:
        unpack = ex.packing.unpack

        def fast(args: tuple[Any, ...]) -> Any:
            try:
                result = values(*args)
            except GeneralWay:
                return slow(args)
            return unflatten(iter(unpack(result)), out, convert)

    else:

        def fast(args: tuple[Any, ...]) -> Any:
            try:
                result = values(*args)
            except GeneralWay:
                return slow(args)
            return unflatten(iter(result), out, convert)

    if not (packed and own_leaves and all(c is None for c in to_float)):
        return fast, None
    if single:
        return fast, values  # Python floats out: the call of the arguments themselves

    def direct(*args: Any) -> Any:
        return unflatten(iter(values(*args)), out, as_is)

    return fast, direct
