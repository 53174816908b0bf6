"""The disk cache of compiled programs: a new process skips parsing, inference and optimization.

On a miss, `MyiaFunction.compile` compiles as usual, then `store` writes the optimized program
(`myia.saving`'s format: typed graphs, no pickled or generated code) to
``MYIA_CACHE_DIR/programs/<key>.myia``. A later process calling the same function with the
same signature finds it (`load`), checks it is current, rebuilds and verifies the graphs, and
compiles them for its backend.

The file's name, the *key*, is a hash of what can be known before parsing: the entry function's
module, name and code (`fingerprint.code_text`: bytecode, constants, line table, nested
functions' code), its defaults, the argument signature, the options (backend and its options,
``debug_nans``, what `grad` differentiates), the versions of Python, NumPy and the backend's
libraries (JAX, Numba), and a hash of Myia's own source files (names, sizes, times of change).
The file holds, besides the program, a *manifest* of what the compilation read: every Python
function whose graph it used, each found as in a new process (the entry; a function held by a
value read; or by module and name), with the fingerprint of its code and, for each global,
closure cell or module or class attribute it read, where it was read and the fingerprint of its
value (`myia.fingerprint`). The user's classes of the signature (dataclasses) are fingerprinted
too: fields, methods and attributes. `load` checks every one of these against the process as it
is; one difference is a miss, and the program is compiled and stored again. A value that cannot
be fingerprinted (`Unfingerprintable`: an object of an unknown type) makes the program
uncacheable: it is compiled in each process, as without the cache.

Files are written to a temporary name and renamed, so that processes sharing the cache see
whole files; a damaged or unreadable file is a miss. ``MYIA_CACHE_DIR=`` (empty) or
``MYIA_CACHE_PROGRAMS=0`` turns the cache off (so does `ENABLED = False`).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from . import saving
from .compile.native_source import cache_dir
from .fingerprint import Fingerprinter, Unfingerprintable, code_text, is_library, name_of, resolve
from .frontend.resolve import _MISSING, lookup_global
from .infer.traceback import is_internal
from .ir.node import Graph
from .records import field_values, is_record_value

#: The layout of a cache file (part of the key).
FORMAT = "myia-cache-1"

#: Whether compiled programs are cached on disk.
ENABLED = os.environ.get("MYIA_CACHE_PROGRAMS", "1") != "0"

#: What happened, counted (for tests and `myia.disk_cache` users): a program loaded (``hit``),
#: none found or not current (``miss``), a file written (``store``), a program that could not
#: be cached (``uncacheable``), a file that could not be read (``damaged``).
STATS = {"hit": 0, "miss": 0, "store": 0, "uncacheable": 0, "damaged": 0}


def directory() -> Path | None:
    """The directory of cached programs, or None where the cache is off."""
    if not ENABLED or os.environ.get("MYIA_CACHE_DIR") == "":
        return None
    return cache_dir() / "programs"


_environment: dict[str, str] = {}

#: The libraries each backend runs programs with (their versions are part of the key).
_LIBRARIES = {"jax": ("jax", "jaxlib"), "native": ("numba",)}


def environment(backend: str) -> str:
    """The versions of what compiles and runs a program: Python, NumPy, Myia, the backend's."""
    text = _environment.get(backend)
    if text is None:
        import numpy as np

        versions = [sys.version, sys.platform, np.__version__, saving.VERSION, FORMAT, backend]
        for name in _LIBRARIES.get(backend, ()):
            versions.append(f"{name} {_version(name)}")
        # Myia's source files, by name, size and time of change (as Python checks its
        # compiled files).
        h = hashlib.sha256()
        root = os.path.dirname(os.path.abspath(__file__))
        for folder, dirs, files in sorted(os.walk(root)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    where = f"{folder[len(root) :]}/{name}"
                    h.update(f"{where}:{st.st_size}:{st.st_mtime_ns};".encode())
        versions.append(h.hexdigest())
        text = _environment[backend] = json.dumps(versions)
    return text


def _version(name: str) -> str:
    """The installed version of the library `name` ("none" if absent), without importing it.

    Importing Numba or JAX takes from 0.4 to 2 s, which a program loaded from the cache, in a
    new process, should not wait for before its first call. The version is read from the
    name of the package's ``dist-info`` folder (parsing its metadata imports `email`).
    """
    import importlib
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return "none"
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = glob.glob(os.path.join(glob.escape(site), f"{name}-*.dist-info"))
    if len(found) == 1:
        return os.path.basename(found[0])[len(name) + 1 : -len(".dist-info")]
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:  # not installed as a distribution
        try:
            return importlib.import_module(name).__version__
        except ImportError:
            return "none"


def key(fn: Any, signature: tuple[Any, ...], options: dict[str, Any]) -> str | None:
    """The key of `fn`'s program for the abstract `signature` and `options`, or None.

    `options` name the backend (``options["backend"]``) and all else the program depends on.

    None where the program cannot be cached: `fn` is not a Python function of the user's,
    or the signature or an option cannot be fingerprinted.
    """
    if directory() is None or not _user_function(fn):
        return None
    try:
        sig = _signature_text(signature)
        opts = Fingerprinter()(options)
    except (Unfingerprintable, saving.MyiaError, RecursionError):  # (nested too deeply)
        STATS["uncacheable"] += 1
        return None
    entry = [fn.__module__, fn.__qualname__, code_text(fn.__code__)]
    flags = getattr(fn, "__myia_flags__", None)
    if flags:  # a copy made by `myia.checkpoint`: the same code, compiled otherwise
        entry.append(json.dumps(flags, sort_keys=True))
    material = [environment(options["backend"]), *entry, sig, opts]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def _signature_text(signature: tuple[Any, ...]) -> str:
    """The abstract values of `signature` as JSON text, the same in every process.

    Myia's objects they hold are named from those of `myia.abstract` first: scanning all
    of Myia's modules for them takes tens of milliseconds, on a new process's first call.
    """
    try:
        w = saving._Writer()
        w.refs = saving._myia_objects("myia.abstract")
        return json.dumps([w.value(a) for a in signature], sort_keys=True)
    except saving.MyiaError:  # an object of another module of Myia's
        w = saving._Writer()
        return json.dumps([w.value(a) for a in signature], sort_keys=True)


def _user_function(fn: Any) -> bool:
    return (
        isinstance(fn, types.FunctionType)
        and not is_library(fn.__module__)
        and not is_internal(fn.__code__.co_filename)
    )


# The manifest -------------------------------------------------------------------------------


def _namespace_ref(ns: Any) -> list[Any] | None:
    """How a namespace read is found again (None: the function's own globals and closure)."""
    if ns is None:
        return None
    name = name_of(ns) if isinstance(ns, type) else None
    if isinstance(ns, type(sys)) and sys.modules.get(ns.__name__) is ns:
        return ["module", ns.__name__]
    if name is not None:
        return ["name", *name]
    raise Unfingerprintable(f"a namespace {ns!r}")


def _find_namespace(ref: list[Any] | None) -> Any:
    if ref[0] == "module":  # type: ignore[index]
        return sys.modules.get(ref[1], _MISSING)  # type: ignore[index]
    return resolve(ref[1], ref[2])  # type: ignore[index]


def manifest(
    fn: Any, signature: tuple[Any, ...], used: dict[Any, list[tuple[Any, str, Any]] | None]
) -> list[dict[str, Any]]:
    """What the compilation of `fn` read (`used`: `myia.frontend.cache.recorded`), to check.

    Each item is a value found in a new process by ``at``: ``["entry"]``; ``["found", i, j,
    k]``, the `k`-th function held by the value of read `j` of item `i` (-1: the item's own
    value); or ``["name", module, qualname]``. ``fp`` is its fingerprint and ``reads``, for a
    function whose graph was used, what it read: ``[namespace, name, fingerprint]``.
    """
    users = {f: r for f, r in used.items() if _user_function(f)}
    if any(r is None for r in users.values()) or fn not in users:
        raise Unfingerprintable("a function whose graph is not cached")
    items: list[dict[str, Any]] = []
    values: list[Any] = []
    index: dict[int, int] = {}

    def add(value: Any, at: list[Any]) -> None:
        index[id(value)] = len(items)
        values.append(value)
        items.append({"at": at})

    add(fn, ["entry"])
    for cls in _classes(signature):
        if name_of(cls) is None:
            raise Unfingerprintable(f"the class {cls.__qualname__} is not found by its name")
        add(cls, ["name", *name_of(cls)])
    i = 0
    while True:
        while i < len(items):
            value, item = values[i], items[i]
            fp = Fingerprinter()
            item["fp"] = fp(value)
            found = [(-1, fp.found)]
            if isinstance(value, types.FunctionType) and value in users:
                reads = item["reads"] = []
                seen = set()
                for ns, name, v in users[value]:
                    if (id(ns), name) in seen:
                        continue
                    seen.add((id(ns), name))
                    fp = Fingerprinter()
                    reads.append([_namespace_ref(ns), name, fp(v)])
                    found.append((len(reads) - 1, fp.found))
            for j, fns in found:
                for k, f in enumerate(fns):
                    if f in users and id(f) not in index:
                        add(f, ["found", i, j, k])
            i += 1
        rest = [f for f in users if id(f) not in index]
        if not rest:
            return items
        name = name_of(rest[0])
        if name is None:
            raise Unfingerprintable(f"the function {rest[0].__qualname__} is not found again")
        add(rest[0], ["name", *name])


def _classes(signature: tuple[Any, ...]) -> list[type]:
    """The user's classes that the abstract values of `signature` name (dataclasses...)."""
    out: list[type] = []
    todo = list(signature)
    seen: set[int] = set()
    while todo:
        a = todo.pop()
        if id(a) in seen:
            continue
        seen.add(id(a))
        if isinstance(a, type):
            if not is_library(a.__module__) and a not in out:
                out.append(a)
        elif is_record_value(a):
            todo.extend(field_values(a))
        elif isinstance(a, (tuple, list, frozenset)):
            todo.extend(a)
        elif isinstance(a, dict):
            todo.extend(a.values())
    return out


def current(fn: Any, items: list[dict[str, Any]]) -> bool:
    """Whether every value of the manifest `items` is found, with the same fingerprint."""
    n = len(items)
    values: list[Any] = [_MISSING] * n
    found: dict[tuple[int, int], list[Any]] = {}
    done = [False] * n
    progress = True
    while progress:
        progress = False
        for i, item in enumerate(items):
            if done[i]:
                continue
            at = item["at"]
            if at[0] == "entry":
                values[i] = fn
            elif at[0] == "name":
                values[i] = resolve(at[1], at[2])
            elif (at[1], at[2]) in found:
                fns = found[at[1], at[2]]
                values[i] = fns[at[3]] if at[3] < len(fns) else _MISSING
            else:
                continue  # found through an item not checked yet
            value = values[i]
            if value is _MISSING:
                return False
            fp = Fingerprinter()
            if fp(value) != item["fp"]:
                return False
            found[i, -1] = fp.found
            for j, (ns, name, expected) in enumerate(item.get("reads", ())):
                if ns is None:
                    v = lookup_global(value, name)
                else:
                    namespace = _find_namespace(ns)
                    v = _MISSING if namespace is _MISSING else getattr(namespace, name, _MISSING)
                if v is _MISSING:
                    return False
                fp = Fingerprinter()
                if fp(v) != expected:
                    return False
                found[i, j] = fp.found
            done[i] = progress = True
    return all(done)


# Loading and storing ---------------------------------------------------------------------------


def _path(k: str) -> Path | None:
    d = directory()
    return None if d is None else d / f"{k}.myia"


def load(k: str, fn: Any) -> Graph | None:
    """The program cached under key `k` for `fn`, if it is current; else None."""
    path = _path(k)
    try:
        raw = path.read_bytes() if path is not None else None
    except OSError:
        raw = None
    if raw is None:
        STATS["miss"] += 1
        return None
    try:
        head, _, program = raw.partition(b"\n")
        header = json.loads(head)
        if header.get("format") != FORMAT or header.get("key") != k:
            raise ValueError("not a cache file of this key")
        if hashlib.sha256(program).hexdigest() != header["checksum"]:
            raise ValueError("damaged")
        if not current(fn, header["manifest"]):
            STATS["miss"] += 1
            return None
        # The file is the one `store` wrote (its checksum): its graphs were verified then.
        graph, *_ = saving.loads(program.decode("utf-8"), verify=False)
    except Unfingerprintable:
        STATS["miss"] += 1
        return None
    except Exception:
        STATS["damaged"] += 1
        return None
    STATS["hit"] += 1
    return graph


def store(
    k: str,
    fn: Any,
    graph: Graph,
    signature: tuple[Any, ...],
    backend: str,
    used: dict[Any, list[tuple[Any, str, Any]] | None],
) -> bool:
    """Write `graph`, the program of `fn` for `signature`, under key `k`; False if it cannot."""
    path = _path(k)
    if path is None:
        return False
    try:
        items = manifest(fn, signature, used)
        program = saving.dumps(graph, signature, backend).encode("utf-8")
    except (Unfingerprintable, saving.MyiaError):
        STATS["uncacheable"] += 1
        return False
    header = {
        "format": FORMAT,
        "key": k,
        "function": f"{fn.__module__}.{fn.__qualname__}",
        "checksum": hashlib.sha256(program).hexdigest(),
        "manifest": items,
    }
    data = json.dumps(header, separators=(",", ":")).encode("utf-8") + b"\n" + program
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{k[:16]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    STATS["store"] += 1
    return True
