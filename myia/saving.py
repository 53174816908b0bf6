"""Saving compiled programs and loading them.

``save(fn, path, *example_args)`` writes the optimized, typed graphs of ``fn``'s specialization
for the signature of `example_args`; ``load(path)`` rebuilds them, verifies them and compiles
them for a backend, in any process, without the source of the functions.

The format is JSON, versioned (`FORMAT`, `VERSION`), at the level of the IR: a table of
graphs (name, location, parameters, output) and one of nodes (parameters, applications and
constants, each with its abstract value, name and source location, so that errors still name
the user's lines). It holds no pickle and no code: a constant is a number, a string, an
array's bytes, or a reference by name to a primitive, an operation, a class or an object of
Myia's own modules; a class of the user's (a dataclass, an exception) is looked up in the
modules the loading process has imported, never imported from the file. A file that is not
such a program, or written by another version of the format, is a `MyiaLoadError`.

A loaded program keeps the constants it was compiled with (module globals, closure values),
as a compiled specialization does.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .abstract import data as absdata
from .abstract.data import GraphFunction
from .boundary import boundary
from .errors import MyiaError, MyiaTypeError
from .ir.analysis import Scopes, reachable_graphs, toposort
from .ir.node import Apply, BackwardInfo, Constant, DebugInfo, Graph, Location, Node, Parameter
from .operations.core import Operation
from .primitives import PRIMITIVES, Primitive
from .records import field_names, field_values, is_namedtuple_class, is_record_value, make_value
from .results import ScalarResults, has_0d_array

FORMAT = "myia-program"
VERSION = 1


class MyiaLoadError(MyiaError):
    """A file that is not a program saved by this version of Myia."""


# Constants and abstract values ----------------------------------------------------------------


_objects: dict[str, tuple[frozenset[str], dict[int, str]]] = {}


def _myia_objects(package: str = "myia") -> dict[int, str]:
    """Objects of Myia's own modules that constants refer to by name: ``module:attribute``.

    Those of `package` and its modules only (``"myia.abstract"``: what abstract values hold,
    found in a fraction of the time). Made again when a module of it was imported since.
    """
    prefix = package + "."
    modules = frozenset(n for n in list(sys.modules) if n == package or n.startswith(prefix))
    known = _objects.get(package)
    if known is None or modules != known[0]:
        known = _objects[package] = (modules, _scan_objects(modules))
    return known[1]


def _scan_objects(modules: frozenset[str]) -> dict[int, str]:
    out: dict[int, str] = {}
    for name in sorted(modules):
        mod = sys.modules.get(name)
        if mod is None:
            continue
        for attr, v in list(vars(mod).items()):
            if isinstance(v, (int, float, str, bool, type(None), tuple, dict, list, type)):
                continue
            if callable(v) and not isinstance(v, Operation) and not hasattr(v, "__slots__"):
                continue
            out.setdefault(id(v), f"{name}:{attr}")
    return out


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _find_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    if module == "myia" or module.startswith("myia."):
        try:
            importlib.import_module(module)  # Myia's own code, which may not be loaded yet
        except ImportError:
            raise MyiaLoadError(f"Myia has no module {module} (another version?)") from None
    mod = sys.modules.get(module)
    if mod is None:
        raise MyiaLoadError(
            f"the program uses the class {qualname} of module {module}, which is not imported "
            "in this process: import it before loading"
        )
    obj: Any = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type):
        raise MyiaLoadError(f"no class {qualname} in module {module}")
    return obj


class _Writer:
    """Encodes graphs, nodes and constants as JSON values."""

    def __init__(self) -> None:
        self.graphs: dict[Graph, int] = {}
        self.nodes: dict[Node, int] = {}
        self.keys: dict[int, int] = {}
        self.refs: dict[int, str] | None = None  # `_myia_objects`, made when first needed
        self.graph_table: list[dict[str, Any]] = []
        self.node_table: list[dict[str, Any]] = []

    def program(self, root: Graph) -> None:
        graphs = reachable_graphs(root)
        # And the graphs held only by nodes that closures use as free variables (nodes not
        # reachable from their own graph's output, which `reachable_graphs` does not see).
        known = set(graphs)
        graphs += [g for g in Scopes(root).graphs if g not in known]
        for g in graphs:
            self.graphs[g] = len(self.graphs)
            self.graph_table.append({})
        for g in graphs:
            for p in g.parameters:
                self.node(p)
        for g in graphs:
            for n in toposort(g):
                self.node(n)
            self.graph_table[self.graphs[g]] = {
                "name": g.debug.find_name(),
                "location": _location(g.debug.find_location()),
                "parameters": [self.nodes[p] for p in g.parameters],
                "output": self.node(g.output),
                "flags": {k: v for k, v in g.flags.items() if _plain(v)},
            }

    def node(self, n: Node | None) -> int:
        if n is None:
            raise MyiaError("save: a graph without an output")
        i = self.nodes.get(n)
        if i is not None:
            return i
        chain = n.debug.call_chain("?")
        entry: dict[str, Any] = {
            "name": n.debug.find_name(),
            "location": _location(_user_location(n.debug, chain)),
        }
        if _in_backward_pass(chain):
            entry["backward"] = True
        if len(chain) > 1 and all(f.lstrip("▶◀") != "?" for f, _ in chain):
            # A node inlined from other functions: the calls down to it, for tracebacks.
            entry["calls"] = [[f, _location(loc)] for f, loc in chain]
        if n.is_constant:
            entry["kind"] = "constant"
            entry["value"] = self.value(n.value)  # type: ignore[attr-defined]
        elif n.is_parameter:
            entry["kind"] = "parameter"
            entry["graph"] = self.graphs[n.graph]  # type: ignore[index]
        else:
            entry["kind"] = "apply"
            entry["graph"] = self.graphs[n.graph]  # type: ignore[index]
            entry["inputs"] = [self.node(x) for x in n.inputs]
        entry["abstract"] = self.value(n.abstract)
        i = self.nodes[n] = len(self.node_table)
        self.node_table.append(entry)
        return i

    def value(self, v: Any) -> Any:
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is int:
            return {"int": str(v)}
        if t is float:
            return {"float": v.hex()}
        if isinstance(v, np.generic):
            return {"npscalar": v.dtype.str, "bytes": _b64(np.asarray(v).tobytes())}
        if t is np.ndarray:
            if v.dtype.hasobject:
                raise MyiaError("save: an array of Python objects cannot be saved")
            data = np.ascontiguousarray(v)
            return {"array": v.dtype.str, "shape": list(v.shape), "bytes": _b64(data.tobytes())}
        if isinstance(v, np.dtype):
            if v.hasobject or v.fields is not None or v.subdtype is not None:
                raise MyiaError(f"save: the dtype {v} cannot be saved")
            return {"dtype": v.str}
        if t is tuple:
            return {"tuple": [self.value(x) for x in v]}
        if t is frozenset:
            return {"frozenset": [self.value(x) for x in v]}
        if t is slice:
            return {"slice": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if t is Graph:
            return {"graph": self.graphs[v]}
        if t is Primitive:
            return {"primitive": v.name}
        if t is GraphFunction:
            # The inference context of a function value is not kept (nothing after
            # specialization reads it); a graph outside the program is named only.
            i = self.graphs.get(v.graph)
            return {"graphfn": -1 if i is None else i, "name": v.graph.name}
        if isinstance(v, type):
            return {"class": _class_name(v)}
        name = type(v).__name__
        if name == "FreeVariableKey":
            k = self.keys.setdefault(id(v), len(self.keys))
            return {"fvkey": k, "name": v.node.debug.find_name()}
        if self.refs is None:
            self.refs = _myia_objects()
        ref = self.refs.get(id(v))
        if ref is not None:
            return {"ref": ref}
        if name == "Dead":
            # A function never called (the backward pass of a path that raises; `DEAD` is a
            # ref), one object per function: ``is_`` tells them apart.
            k = self.keys.setdefault(id(v), len(self.keys))
            return {"dead": k, "name": v.name}
        mapped = _mapped_names().get(id(v))
        if mapped is not None:
            return {"mapped": mapped}
        if isinstance(v, BaseException):
            # ``raise ERROR`` of a module's exception; a shape error deferred to run time
            # (`myia.infer.deferred`), with its frames: the user's line.
            out = {"exception": _class_name(type(v)), "args": [self.value(a) for a in v.args]}
            if isinstance(v, MyiaError):
                out["frames"] = [self.value(f) for f in v.frames]
            return out
        if dataclasses.is_dataclass(v) or is_record_value(v):
            names = field_names(type(v))
            fields = {n: self.value(x) for n, x in zip(names, field_values(v))}
            kind = "abstract" if isinstance(v, absdata.AbstractValue) else "record"
            return {kind: _class_name(type(v)), "fields": fields}
        raise MyiaError(f"save: a constant of type {type(v).__qualname__} cannot be saved ({v!r})")


#: The modules whose functions and classes Myia code calls as operations (``np.float32``).
_MAPPED_MODULES = ("builtins", "math", "cmath", "operator", "functools", "numpy")


_mapped: tuple[int, dict[int, str]] = (-1, {})


def _mapped_names() -> dict[int, str]:
    """The operations that Python objects mean in Myia code, by ``module:name`` of the object."""
    global _mapped
    from .operations.mapping import MAPPING

    if _mapped[0] != len(MAPPING):
        _mapped = (len(MAPPING), _scan_mapped(MAPPING))
    return _mapped[1]


def _scan_mapped(mapping: dict[Any, Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for obj, op in mapping.items():
        module = getattr(obj, "__module__", None) or ""
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
        if isinstance(op, Operation) and module.partition(".")[0] in _MAPPED_MODULES and name:
            out.setdefault(id(op), f"{module}:{name}")
    return out


def _find_mapped(name: str) -> Any:
    """The operation of `_mapped_names`'s `name`."""
    from .operations.mapping import lookup

    module, _, qualname = name.partition(":")
    if module.partition(".")[0] not in _MAPPED_MODULES:
        raise MyiaLoadError(f"not an operation of Myia: {name!r}")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    op = lookup(obj)
    if not isinstance(op, Operation):
        raise MyiaLoadError(f"{name} is not an operation of this version of Myia")
    return op


def _plain(v: Any) -> bool:
    return v is None or type(v) in (bool, int, str)


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def _user_location(debug: DebugInfo, chain: list[tuple[str, Location]]) -> Location | None:
    """Where a node is in the user's source.

    For a node of Myia's library code inlined into the user's function, the user's call of
    it (in `chain`, the node's `DebugInfo.call_chain`), so that a run-time error of the
    loaded program points at the user's line.
    """
    from .infer.traceback import is_internal

    own = debug.find_location()
    if own is None or not is_internal(own.filename):
        return own
    for _, loc in reversed(chain):
        if not is_internal(loc.filename):
            return loc
    return own


def _in_backward_pass(chain: list[tuple[str, Location]]) -> bool:
    """Whether a node computes the gradient of the user's line `_user_location` gives.

    (Loaded, its debug info is a `BackwardInfo`: errors and the profiler say "in the gradient
    of this line" as for the program compiled.)
    """
    from .infer.traceback import is_internal

    for function, loc in reversed(chain):
        if not is_internal(loc.filename):
            return function.startswith("◀")
    return bool(chain) and chain[-1][0].startswith("◀")


def _rebuild_calls(debug: DebugInfo, calls: list[list[Any]]) -> None:
    """Give `debug` the call sites whose `DebugInfo.call_chain` is `calls` (outermost first).

    The names are those saved (``◀f`` in a backward pass), so the chain reads as it did.
    """
    info = debug
    for k in range(len(calls) - 1):
        (caller, loc), (callee, inner_loc) = calls[k], calls[k + 1]
        last = k + 2 == len(calls)
        inner = DebugInfo(None, _read_location(inner_loc) if last else None)
        info.site = (DebugInfo(None, _read_location(loc)), caller, callee)
        info.origin = inner
        info = inner


def _location(loc: Location | None) -> list[Any] | None:
    if loc is None:
        return None
    return [loc.filename, loc.line, loc.column, loc.end_line, loc.end_column]


class _Reader:
    """Rebuilds graphs and nodes from the JSON tables of `_Writer`."""

    def __init__(self, doc: dict[str, Any]):
        self.doc = doc
        self.graphs = [Graph() for _ in doc["graphs"]]
        self.nodes: list[Node | None] = [None] * len(doc["nodes"])
        self.keys: dict[int, Any] = {}
        self.classes: dict[str, type] = {}  # by name, found once per file

    def find_class(self, name: str) -> type:
        cls = self.classes.get(name)
        if cls is None:
            cls = self.classes[name] = _find_class(name)
        return cls

    def program(self) -> Graph:
        table = self.doc["nodes"]
        for g, entry in zip(self.graphs, self.doc["graphs"]):
            g.debug = DebugInfo(entry["name"], _read_location(entry["location"]))
            g.flags = dict(entry["flags"])
        for i, entry in enumerate(table):
            if entry["kind"] == "parameter":
                self.nodes[i] = Parameter(self.graphs[entry["graph"]], entry["name"])
        for g, entry in zip(self.graphs, self.doc["graphs"]):
            g.parameters = [self.node(i) for i in entry["parameters"]]  # type: ignore[misc]
        for i in range(len(table)):
            self.node(i)
        for g, entry in zip(self.graphs, self.doc["graphs"]):
            g.output = self.node(entry["output"])
        for i, entry in enumerate(table):
            self.nodes[i].abstract = self.value(entry["abstract"])  # type: ignore[union-attr]
        return self.graphs[self.doc["entry"]]

    def node(self, i: int) -> Node:
        n = self.nodes[i]
        if n is not None:
            return n
        entry = self.doc["nodes"][i]
        calls = entry.get("calls")
        info = BackwardInfo if entry.get("backward") and not calls else DebugInfo
        debug = info(entry["name"], _read_location(entry["location"]))
        if calls:
            _rebuild_calls(debug, calls)
        if entry["kind"] == "constant":
            n = Constant(self.value(entry["value"]), debug)
        elif entry["kind"] == "apply":
            # Inputs come first in the table (a loop refers to its graph through a constant).
            n = Apply([self.node(x) for x in entry["inputs"]], self.graphs[entry["graph"]], debug)
        else:
            raise MyiaLoadError(f"node {i}: unknown kind {entry['kind']!r}")
        self.nodes[i] = n
        return n

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if not isinstance(v, dict) or not v:
            raise MyiaLoadError(f"not a value of a saved program: {v!r}")
        (tag, body), *rest = v.items()
        if tag == "int":
            return int(body)
        if tag == "float":
            return float.fromhex(body)
        if tag == "npscalar":
            return np.frombuffer(base64.b64decode(v["bytes"]), dtype=np.dtype(body))[0]
        if tag == "array":
            if np.dtype(body).hasobject:
                raise MyiaLoadError("an array of Python objects")
            raw = base64.b64decode(v["bytes"])
            return np.frombuffer(raw, dtype=np.dtype(body)).reshape(v["shape"]).copy()
        if tag == "dtype":
            dtype = np.dtype(body)
            if dtype.hasobject:
                raise MyiaLoadError("the dtype of Python objects")
            return dtype
        if tag == "tuple":
            return tuple(self.value(x) for x in body)
        if tag == "frozenset":
            return frozenset(self.value(x) for x in body)
        if tag == "slice":
            return slice(*(self.value(x) for x in body))
        if tag == "graph":
            return self.graphs[body]
        if tag == "graphfn":
            return GraphFunction(self.graphs[body] if body >= 0 else Graph(v["name"]))
        if tag == "primitive":
            if body not in PRIMITIVES:
                raise MyiaLoadError(f"unknown primitive {body!r}")
            return PRIMITIVES[body]
        if tag == "class":
            return self.find_class(body)
        if tag == "dead":
            dead = self.keys.get(("dead", body))
            if dead is None:
                from .infer.fnvalues import Dead

                dead = self.keys[("dead", body)] = Dead(v["name"])
            return dead
        if tag == "fvkey":
            key = self.keys.get(body)
            if key is None:
                from .grad.jtransform import FreeVariableKey

                key = self.keys[body] = FreeVariableKey(Constant(None, DebugInfo(v["name"])))
            return key
        if tag == "ref":
            module, _, attr = body.partition(":")
            if not (module == "myia" or module.startswith("myia.")):
                raise MyiaLoadError(f"not an object of Myia: {body!r}")
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                raise MyiaLoadError(f"Myia has no {body!r} (another version?)") from None
        if tag == "mapped":
            return _find_mapped(body)
        if tag == "exception":
            cls = self.find_class(body)
            if not issubclass(cls, BaseException):
                raise MyiaLoadError(f"{body} is not an exception")
            exc = cls(*(self.value(a) for a in v["args"]))
            if isinstance(exc, MyiaError):
                exc.frames = [self.value(f) for f in v.get("frames", ())]
            return exc
        if tag in ("abstract", "record"):
            cls = self.find_class(body)
            if tag == "abstract" and not issubclass(cls, absdata.AbstractValue):
                raise MyiaLoadError(f"{body} is not an abstract value")
            if is_namedtuple_class(cls):
                values = [self.value(v["fields"][n]) for n in field_names(cls)]
                return make_value(cls, values)
            if not dataclasses.is_dataclass(cls):
                raise MyiaLoadError(f"{body} is not a dataclass")
            fields = {k: self.value(x) for k, x in v["fields"].items()}
            obj = object.__new__(cls)
            for k, x in fields.items():
                object.__setattr__(obj, k, x)
            return obj
        raise MyiaLoadError(f"unknown value tag {tag!r}")


def _read_location(v: Any) -> Location | None:
    if v is None:
        return None
    return Location(*v)


# Saving and loading ---------------------------------------------------------------------------


def dumps(
    graph: Graph, signature: tuple[Any, ...], backend: str, call: CallForm | None = None
) -> str:
    """The saved form of the optimized program `graph` for argument types `signature`.

    `call`, where given, says how a call from Python gives the program its arguments.
    """
    w = _Writer()
    w.program(graph)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "myia": myia_version(),
        "backend": backend,
        "entry": w.graphs[graph],
        "signature": [w.value(a) for a in signature],
        "graphs": w.graph_table,
        "nodes": w.node_table,
    }
    if call is not None:
        doc["call"] = call.dump(w.value)
    return json.dumps(doc, separators=(",", ":"))


def loads(
    text: str, verify: bool = True
) -> tuple[Graph, tuple[Any, ...], dict[str, Any], CallForm | None]:
    """The program of `dumps`: its entry graph, argument types, the document, its call form.

    The graphs are verified (structure and types), unless `verify` is false (a file that
    Myia wrote and checked, like the disk cache's).
    """
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MyiaLoadError(f"not a saved Myia program (not JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise MyiaLoadError("not a saved Myia program")
    if doc.get("version") != VERSION:
        raise MyiaLoadError(
            f"a program saved in format version {doc.get('version')!r}; this Myia reads "
            f"version {VERSION}: save it again with this version"
        )
    try:
        r = _Reader(doc)
        graph = r.program()
        signature = tuple(r.value(a) for a in doc["signature"])
        call = CallForm.load(doc["call"], r.value) if "call" in doc else None
    except MyiaError:
        raise
    except Exception as exc:
        raise MyiaLoadError(f"a damaged program file ({type(exc).__name__}: {exc})") from None
    if verify:
        _verify(graph)
    return graph, signature, doc, call


def _verify(graph: Graph) -> None:
    from .infer.verify_types import verify_types
    from .ir.verify import VerifyError, verify

    try:
        verify(graph)
        verify_types(graph)
    except VerifyError as exc:
        raise MyiaLoadError(f"the saved program does not verify: {exc}") from None


def myia_version() -> str:
    """Myia's version (the installed distribution's, or "dev")."""
    try:
        from importlib.metadata import version

        return version("myia")
    except Exception:
        return "dev"


class CallForm:
    """How a call from Python gives a saved program its arguments, one per parameter.

    As `myia.api.MyiaFunction` binds a call: the parameters of the function saved (its
    ``*args`` as a tuple, its ``**kwargs`` as a dict), after the arguments a partial
    application holds, the defaults not passed filled in (a function default is `NOT_GIVEN`:
    the program computes it). A function taking ``*args`` (``hessian(f)``, ``vmap(f)``) is
    so called as ``f`` is.
    """

    def __init__(
        self, signature: inspect.Signature, args: tuple[Any, ...], keywords: dict[str, Any]
    ):
        self.signature = signature
        self.args = args
        self.keywords = keywords

    @classmethod
    def of(cls, fn: Any) -> CallForm:
        """The call form of `fn`, a `myia.api.MyiaFunction`."""
        from .frontend.defaults import NOT_GIVEN, is_function

        params = [
            p.replace(default=NOT_GIVEN) if is_function(p.default) else p
            for p in fn.entry.signature.parameters.values()
        ]
        entry = fn.entry
        prefixed = entry.prefixed
        return cls(
            inspect.Signature(params),
            tuple(entry.args) if prefixed else (),
            dict(entry.keywords) if prefixed else {},
        )

    def arguments(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple:
        """The program's arguments for the call ``name(*args, **kwargs)``."""
        try:
            bound = self.signature.bind(*self.args, *args, **{**self.keywords, **kwargs})
        except TypeError as exc:
            raise MyiaTypeError(f"{name}(): {exc}") from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def dump(self, value: Any) -> dict[str, Any]:
        """The JSON form, with `value` writing values (defaults, partial arguments)."""
        params = []
        for p in self.signature.parameters.values():
            d = [] if p.default is p.empty else [value(p.default)]
            params.append([p.name, int(p.kind), *d])
        return {
            "parameters": params,
            "args": [value(a) for a in self.args],
            "keywords": {k: value(v) for k, v in self.keywords.items()},
        }

    @classmethod
    def load(cls, doc: dict[str, Any], value: Any) -> CallForm:
        """The call form of `dump`'s JSON form `doc`, with `value` reading values."""
        params = [
            inspect.Parameter(
                name,
                inspect._ParameterKind(kind),
                default=value(rest[0]) if rest else inspect.Parameter.empty,
            )
            for name, kind, *rest in doc["parameters"]
        ]
        return cls(
            inspect.Signature(params),
            tuple(value(a) for a in doc["args"]),
            {k: value(v) for k, v in doc["keywords"].items()},
        )


class LoadedFunction:
    """A program loaded by `load`: callable on arguments of the signature it was saved for."""

    def __init__(
        self,
        graph: Graph,
        signature: tuple[Any, ...],
        backend: Any,
        name: str,
        call: CallForm | None = None,
    ):
        self.graph = graph
        self.signature = signature
        self.call = call
        self.backend = backend
        self.executable = backend.compile(graph)
        result = graph.output.abstract
        if has_0d_array(result):
            self.executable = ScalarResults(self.executable, result)
        self.__name__ = name

    @boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .abstract.lattice import to_abstract

        if self.call is not None:
            args = self.call.arguments(self.__name__, args, kwargs)
        elif kwargs:  # (saved by a Myia that did not write the call form: positional only)
            raise MyiaTypeError(f"{self.__name__}() takes its arguments by position")
        try:
            got = tuple(to_abstract(a) for a in args)
        except (TypeError, RecursionError) as exc:
            msg = f"{self.__name__}(): an argument has no Myia type: {exc}"
            raise MyiaTypeError(msg) from None
        if got != self.signature:
            shown = ", ".join(map(absdata.show, self.signature))
            raise MyiaTypeError(
                f"{self.__name__} was saved for arguments ({shown}), not "
                f"({', '.join(map(absdata.show, got))})"
            )
        return self.executable(args)

    def compiled_signatures(self) -> list[tuple[Any, ...]]:
        """The one signature this program runs."""
        return [self.signature]


def save(fn: Any, path: str | os.PathLike[str], *example_args: Any) -> None:
    """Write the compiled program of `fn` for the signature of `example_args` to `path`.

    `fn` is a function (compiled with the default backend) or what `myia`, `grad` or
    `value_and_grad` returned.
    """
    from .api import MyiaFunction

    f = fn if isinstance(fn, MyiaFunction) else MyiaFunction(fn)
    compiled = f.specialization(*example_args)
    sig = tuple(f.signature(*example_args))
    text = dumps(compiled.graph, sig, f.backend.name, CallForm.of(f))
    Path(path).write_text(text, encoding="utf-8")


def load(path: str | os.PathLike[str], *, backend: str | None = None, **options: Any) -> Any:
    """The program `save` wrote to `path`, compiled for `backend`.

    The backend is the one it was saved with by default. The result is a callable on
    arguments of the signature the program was saved for.
    """
    from .compile.backend import get_backend

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise MyiaLoadError(f"{path}: not a saved Myia program (not text)") from None
    graph, sig, doc, call = loads(text)
    chosen = get_backend(backend or doc.get("backend") or "numpy", **options)
    return LoadedFunction(graph, sig, chosen, graph.name, call)


__all__: list[str] = ["MyiaLoadError", "load", "save"]
