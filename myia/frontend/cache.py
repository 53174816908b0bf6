"""The parse cache: the graph of each Python function, for as long as its globals stay the same.

A graph holds, as constants, the values its function's free names had when it was parsed
(module globals, closure cells, attributes of modules and classes) and the graphs of the
functions it calls. Each compilation (`new_compilation`) checks, once, that every cached
graph it reaches is still current: each name read still gives the same object, and each graph
used is still the one cached for its function. A graph that is not is parsed again, and so is
every graph that uses it, so that a new compilation reads the module as it is now (a
specialization compiled before keeps its constants). Checking costs a dictionary look-up per
name read; a function whose globals did not change is not parsed again.
"""

from __future__ import annotations

import threading
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

from ..ir.node import Graph
from .resolve import _MISSING, lookup_global


@dataclass
class Parsed:
    """A cached graph and what it was made from."""

    graph: Graph
    #: ``(namespace, name, value)``: the value read for a free name (`namespace` None, looked
    #: up as the function does) or for an attribute of a namespace (a module, a class).
    reads: list[tuple[Any, str, Any]] = field(default_factory=list)
    #: ``(function, graph)``: the graph of a function used, as it was when used.
    deps: list[tuple[Any, Graph]] = field(default_factory=list)
    #: The compilation that last found the graph current.
    epoch: int = -1


#: Keyed weakly: a function no longer referenced elsewhere (a closure made per call) is
#: dropped with its graph.
_cache: weakref.WeakKeyDictionary[Any, Parsed] = weakref.WeakKeyDictionary()
#: The functions being parsed, innermost last: what a graph uses is recorded in theirs.
_parsing: list[Parsed] = []
_epoch = 0


class _Recording(threading.local):
    #: The functions whose graphs the compilation being recorded used (`record`), or None.
    used: list[Any] | None = None


_recording = _Recording()


def new_compilation() -> None:
    """Start a compilation: cached graphs are checked again, once, before they are used."""
    global _epoch
    _epoch += 1


def current(fn: Any) -> Graph | None:
    """The cached graph of `fn`, if it is current (else it is dropped); None if there is none."""
    entry = _cache.get(fn)
    if entry is None:
        return None
    if entry.epoch != _epoch:
        _check(fn)
        entry = _cache.get(fn)
        if entry is None:
            return None
    used(fn, entry.graph)
    if _recording.used is not None:
        _recording.used.append(fn)
    return entry.graph


def used(fn: Any, graph: Graph) -> None:
    """Record that the function being parsed uses `graph`, the graph of `fn`."""
    if _parsing:
        _parsing[-1].deps.append((fn, graph))


def deps(fn: Any) -> set[Graph]:
    """The graphs of the functions that the cached graph of `fn` uses."""
    entry = _cache.get(fn)
    return {g for _, g in entry.deps} if entry is not None else set()


def read(namespace: Any, name: str, value: Any) -> None:
    """Record that the function being parsed read `value` for `name` (of `namespace`)."""
    if _parsing:
        _parsing[-1].reads.append((namespace, name, value))


def start(fn: Any, graph: Graph) -> Parsed:
    """Cache `graph` as the graph of `fn`, which is being parsed from now on."""
    entry = Parsed(graph, epoch=_epoch)
    _cache[fn] = entry
    _parsing.append(entry)
    if _recording.used is not None:
        _recording.used.append(fn)
    return entry


def finish(fn: Any, ok: bool) -> None:
    """The parse of `fn` is over; a parse that failed leaves nothing cached."""
    _parsing.pop()
    if not ok:
        _cache.pop(fn, None)


def _same(old: Any, new: Any) -> bool:
    if old is new:
        return True
    # A method looked up on a class is a new object each time.
    return type(old) is types.MethodType and type(new) is types.MethodType and old == new


def _changed(fn: Any, entry: Parsed) -> bool:
    """Whether a name `fn` read gives another value now, or a graph it used was replaced."""
    for namespace, name, value in entry.reads:
        if namespace is None:
            new = lookup_global(fn, name) if isinstance(fn, types.FunctionType) else _MISSING
        else:
            new = getattr(namespace, name, _MISSING)
        if not _same(value, new):
            return True
    for dep, graph in entry.deps:
        other = _cache.get(dep)
        if other is None or other.graph is not graph:
            return True
    return False


def _check(root: Any) -> None:
    """Check the graphs reachable from `root`'s: drop those not current, mark the others."""
    reach: list[Any] = []
    seen = {root}
    stack = [root]
    while stack:
        fn = stack.pop()
        reach.append(fn)
        for dep, _ in _cache[fn].deps:
            if dep not in seen and dep in _cache and _cache[dep].epoch != _epoch:
                seen.add(dep)
                stack.append(dep)
    stale = {fn for fn in reach if _changed(fn, _cache[fn])}
    # A graph that uses a stale graph is stale (until nothing changes: recursion).
    grew = bool(stale)
    while grew:
        grew = False
        for fn in reach:
            if fn not in stale and any(dep in stale for dep, _ in _cache[fn].deps):
                stale.add(fn)
                grew = True
    for fn in reach:
        if fn in stale:
            del _cache[fn]
        else:
            _cache[fn].epoch = _epoch


def record() -> list[Any] | None:
    """Record the functions whose graphs are used from now on (in this thread).

    Return what recorded before (given back to `recorded`).
    """
    previous, _recording.used = _recording.used, []
    return previous


def recorded(previous: list[Any] | None) -> dict[Any, list[tuple[Any, str, Any]] | None]:
    """The functions used since `record` (and those their graphs use), with what they read.

    What a function read is None where its graph is no longer cached. Recording stops (the
    one `previous` returned by `record` goes on).
    """
    used_fns, _recording.used = _recording.used or [], previous
    if previous is not None:
        previous.extend(used_fns)
    out: dict[Any, list[tuple[Any, str, Any]] | None] = {}
    stack = list(reversed(used_fns))
    while stack:
        fn = stack.pop()
        if fn in out:
            continue
        entry = _cache.get(fn)
        if entry is None:
            out[fn] = None
            continue
        out[fn] = list(entry.reads)
        stack.extend(dep for dep, _ in reversed(entry.deps))
    return out
