"""Loads and stores of machine words at an address: the arena of a whole program's stacks.

Imported by the native modules that `myia.compile.native_arena` writes, never by Myia's
core: it needs Numba. An address is an ``int64`` (the arena's data pointer), an index counts
8-byte words from it. Unlike an array, an address is a plain integer in machine code: a loop
that carries one does no reference counting, and an access has no bounds or negative-index
logic (the stack helpers check their bounds themselves).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)


def _slot(builder: Any, addr: Any, index: Any, ty: Any) -> Any:
    return builder.gep(builder.inttoptr(addr, ty.as_pointer()), [index])


@intrinsic
def load_f(typingctx: Any, addr: Any, index: Any) -> Any:
    """The float64 at word `index` from `addr`."""
    sig = types.float64(types.int64, types.int64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.load(_slot(builder, args[0], args[1], _F64))

    return sig, codegen


@intrinsic
def load_i(typingctx: Any, addr: Any, index: Any) -> Any:
    """The int64 at word `index` from `addr`."""
    sig = types.int64(types.int64, types.int64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.load(_slot(builder, args[0], args[1], _I64))

    return sig, codegen


@intrinsic
def store_f(typingctx: Any, addr: Any, index: Any, value: Any) -> Any:
    """Write float64 `value` at word `index` from `addr`."""
    sig = types.none(types.int64, types.int64, types.float64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        builder.store(args[2], _slot(builder, args[0], args[1], _F64))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def store_i(typingctx: Any, addr: Any, index: Any, value: Any) -> Any:
    """Write int64 `value` at word `index` from `addr`."""
    sig = types.none(types.int64, types.int64, types.int64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        builder.store(args[2], _slot(builder, args[0], args[1], _I64))
        return context.get_dummy_value()

    return sig, codegen


__all__ = ["load_f", "load_i", "store_f", "store_i"]
