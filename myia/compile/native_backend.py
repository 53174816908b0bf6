"""The native backend (``backend="native"``): the loops of a program as machine code (Numba).

The typed, optimized graph is lowered to Python source by
`myia.compile.native_generator.NativeGenerator`, the NumPy backend's generator with its
loops outlined to functions compiled by ``numba.njit`` (the host code runs the original
Python loop where Numba refuses one or where it signals an error, which the host then
raises at the user's line) and the loop stacks of gradients as typed buffers. This module
runs what it writes: `NativeExecutable` calls the host code, loads or compiles the machine
code (in a thread with ``background=True``, the default), and, where a whole program can
be machine code, switches to it (`native_whole`).

Machine code is cached on disk: the outlined loops of a program are written to a module
named by the hash of its source under ``MYIA_CACHE_DIR`` (default ``~/.cache/myia``), and
compiled with ``njit(cache=True)``; a new process calling the same program loads the machine
code instead of compiling it.

Every program runs: a program with no loop Numba can take (recursion over trees, calls of
function values, arrays) runs as the NumPy backend's code, its small array work (a tree
node's body) in regions of machine code (`native_regions`); ``executable.native`` says
whether some loop is machine code, ``executable.reason`` why not. Numba is imported
when the backend is first used: the core of Myia needs only NumPy.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import threading
from typing import Any

from ..errors import MyiaError
from ..ir.node import Graph
from .backend import Backend, Executable, PythonExecutable
from .codegen import generate_with
from .native_generator import CHECKED, NativeGenerator, whole_generator
from .native_lowering import recursive
from .native_regions import NativeRegions
from .native_regions import outline as outline_regions
from .native_source import (
    _FORMAT,
    _INT_HOST,
    cache_dir,
)
from .native_stacks import typed_stacks, unshare_empty_stacks
from .native_whole import WholeProgram


class _LoopStub:
    """The first call of an outlined loop: loads the machine code, then steps aside.

    On success the host module's global is the Numba dispatcher itself (a call then costs
    Numba's dispatch only); when Numba refuses the code, a function that raises at once (the
    host runs the Python loop). With the backend's ``background=True`` (the default), the
    machine code is loaded or compiled by a thread while the calls run the host loop.
    """

    def __init__(self, executable: NativeExecutable, name: str):
        self.executable = executable
        self.name = name

    def __call__(self, *args: Any) -> Any:
        ex = self.executable
        if ex.whole.pending:
            raise _NotNative(self.name)  # the whole program's machine code comes first
        if ex.backend.background:
            ex.start(self.name, args)
            raise _NotNative(self.name)
        return ex.install(self.name, args, call=True)


class _NotNative(Exception):
    """A loop runs on the host (its machine code could not be made)."""


def _same(value: Any) -> Any:
    return value


def _refused(*args: Any) -> Any:
    raise _NotNative()


class NativeExecutable(Executable):
    """A program whose loops are machine code where Numba can take them, host code elsewhere."""

    def __init__(self, graph: Graph, backend: NativeBackend):
        self.backend = backend
        # The host code writes elementwise results into dead temporaries, as the NumPy
        # backend's does.
        gen: NativeGenerator
        try:
            unshare_empty_stacks(graph)
            gen, module = generate_with(lambda b: NativeGenerator(graph, reuse_min_bytes=b), True)
        except Exception as exc:  # pragma: no cover - a construct the generator mishandles
            # The program runs all the same, as the NumPy backend's code.
            plain = functools.partial(NativeGenerator, graph, True, False)
            gen, module = generate_with(lambda b: plain(reuse_min_bytes=b), True)
            gen.refused.append(f"native code generation failed ({type(exc).__name__}: {exc})")
        if not gen.kernels and gen.stack_types:
            # No loop is machine code: typed stacks would cost the host code (a push on a
            # typed buffer is slower in Python than on a linked cell); the NumPy backend's
            # code runs instead, the reasons kept.
            refused = gen.refused
            plain = functools.partial(NativeGenerator, graph, True, False)
            gen, module = generate_with(lambda b: plain(reuse_min_bytes=b), True)
            gen.refused = refused
        self.generator = gen
        self.host = PythonExecutable(module)
        self.source = self.host.source
        self.native_source = gen.native_source() if gen.kernels else None
        self.native = bool(gen.kernels)
        #: Why (some of) the program runs on the host; None when all its loops are native.
        self.reason: str | None = "; ".join(dict.fromkeys(gen.refused)) or None
        if not self.native and self.reason is None:
            self.reason = "it has no loop to compile to machine code"
        if gen.stack_reason is not None and self.reason is not None:
            self.reason += f" (stacks: {gen.stack_reason})"
        g = module.globals
        if gen.helper_source or gen.int_helpers:
            helpers = "\n".join(gen.helper_source) + (_INT_HOST if gen.int_helpers else "")
            exec(compile(helpers, module.filename, "exec"), g)
        for k in range(len(gen.stack_types)):
            # In the host code, the empty stack of a type is one value: a push on it (of
            # capacity 0) allocates, so it is never written.
            g[f"_snew_{k}"] = functools.partial(_same, g[f"_snew_{k}"]())
        for name in gen.kernel_names:
            g[name] = _LoopStub(self, name)
        self._module: Any = None
        self._threads: dict[str, threading.Thread] = {}
        #: The regions of array work of the host code, as machine code (`native_regions`).
        self.regions: NativeRegions | None = None
        types = {name: getattr(node, "abstract", None) for node, name in gen.names.names.items()}
        try:
            code, regions_source, names = outline_regions(module.source, types, g, module.filename)
        except Exception as exc:  # pragma: no cover - a construct the outliner mishandles
            self.refuse(f"regions not outlined ({type(exc).__name__}: {exc})")
            names = []
        if names:
            exec(code, g)
            self.host.fn = g[module.entry]
            self.regions = NativeRegions(regions_source, names, g, backend)
        # A program with loops as machine code may be machine code whole (`native_whole`):
        # its source is written when first needed (in the thread that compiles it).
        self.whole = WholeProgram(
            functools.partial(whole_generator, graph)
            if gen.kernels or gen.refused or recursive(gen.graphs)
            else None,
            set(CHECKED.values()),
            backend,
            _THREADS,
        )
        self.direct = self.whole.direct

    def refuse(self, reason: str) -> None:
        """Record that a loop runs on the host after all."""
        self.reason = reason if self.reason is None else f"{self.reason}; {reason}"

    @property
    def ready(self) -> bool:
        """Whether the program, or else every outlined loop, now runs as machine code."""
        if self.whole.fn is not None:
            return True
        g = self.host.module.globals
        names = self.generator.kernel_names
        return bool(names) and all(
            not isinstance(g[n], _LoopStub) and g[n] is not _refused for n in names
        )

    def kernel(self, name: str) -> Any:
        """The Numba dispatcher of outlined loop `name` (None if the module cannot load)."""
        if self._module is None:
            try:
                self._module = self.backend.load(self.native_source or "")
            except Exception as exc:  # pragma: no cover - depends on the environment
                self.refuse(f"the native module did not load ({type(exc).__name__}: {exc})")
                self._module = False
        return getattr(self._module, name, None) if self._module else None

    def install(self, name: str, args: tuple[Any, ...], call: bool) -> Any:
        """Load (or compile) loop `name` for the types of `args`; make the host call it.

        With `call`, run it on `args` and return its result; else compile it only.
        """
        g = self.host.module.globals
        fn = self.kernel(name)
        if fn is None:
            g[name] = _refused
            raise _NotNative(name)
        try:
            if call:
                out = fn(*args)
            else:
                fn.compile(tuple(self.backend.numba.typeof(a) for a in args))
                out = None
        except self.backend.numba_error as exc:
            g[name] = _refused
            self.refuse(f"Numba could not compile a loop ({type(exc).__name__})")
            raise _NotNative(name) from None
        g[name] = fn
        return out

    def start(self, name: str, args: tuple[Any, ...]) -> None:
        """Load or compile loop `name` in a thread; the host runs it meanwhile."""
        if name in self._threads:
            return

        def work() -> None:
            try:
                self.install(name, args, call=False)
            except Exception:
                pass  # recorded in `reason`: the host code runs the loop

        t = threading.Thread(target=work, name=f"myia-native {name}", daemon=True)
        self._threads[name] = t
        _THREADS.append(t)
        t.start()

    @property
    def region_count(self) -> int:
        """The number of regions of array work of the host code made machine code."""
        return len(self.regions.names) if self.regions else 0

    def wait(self) -> None:
        """Wait until the machine code started in the background is ready (or refused)."""
        self.whole.wait()
        if self.regions:
            self.regions.wait()
        for t in list(self._threads.values()):
            t.join()

    def __call__(self, args: tuple[Any, ...]) -> Any:
        whole = self.whole
        if whole.pending:
            if not self.backend.background:
                whole.start(args)
            else:
                # The first call runs the host code before the thread starts: loading
                # Numba would hold the interpreter for most of the call.
                try:
                    return self.host(args)
                finally:
                    whole.start(args)
        fn = whole.fn
        if fn is not None:
            try:
                return fn(*args)
            except Exception:
                pass  # the host code raises the error, at the user's line
        return self.host(args)


#: The threads that load or compile machine code in the background.
_THREADS: list[threading.Thread] = []
_IMPORT_LOCK = threading.Lock()
_LOAD_LOCK = threading.Lock()


class _StreamsKept:
    """Numba's ``ColorShell`` without colorama's ``init()`` and ``deinit()``: a no-op."""

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        pass


def _keep_streams(numba: Any) -> None:
    """Keep Numba's error messages from replacing ``sys.stdout`` and ``sys.stderr``.

    Where colorama is installed, Numba builds every error message (a loop it refuses, a
    warning, some of its modules' imports) inside ``ColorShell``, whose colorama ``init()``
    puts wrappers in ``sys.stdout`` and ``sys.stderr`` and whose ``deinit()`` puts back the
    streams that ``init()`` saw (numba/numba#3027). Myia compiles in background threads while
    the program and the user's code run: a stream set meanwhile in the main thread
    (``contextlib.redirect_stdout``, pytest's ``capsys``) was replaced by the older one, and
    the program's ``print`` wrote there. ``ColorShell`` only prepares a Windows console for
    the escape codes, which the messages keep; without it Numba touches no stream.
    """
    errors = numba.core.errors
    if hasattr(errors, "ColorShell"):
        errors.ColorShell = _StreamsKept


def wait_all() -> bool:
    """Wait until all machine code being loaded or compiled in the background is ready.

    Return whether some was under way.
    """
    waited = bool(_THREADS)
    while _THREADS:
        _THREADS.pop().join()
    return waited


class NativeBackend(Backend):
    """Machine code through Numba for the loops it can take, the NumPy backend's code elsewhere."""

    name = "native"

    def __init__(self, *, background: bool | None = None) -> None:
        if importlib.util.find_spec("numba") is None:  # pragma: no cover - environment
            raise MyiaError('backend="native" needs Numba: pip install "myia[native]"')
        if background is None:
            background = os.environ.get("MYIA_NATIVE_BACKGROUND", "1") != "0"
        #: Whether machine code is loaded or compiled by a thread while the host code runs
        #: (the first calls are then as fast as the NumPy backend's).
        self.background = background
        self._numba: Any = None

    @property
    def numba(self) -> Any:
        """The ``numba`` module, imported on first use (it takes ~0.4 s)."""
        if self._numba is None:
            with _IMPORT_LOCK:
                import numba

                _keep_streams(numba)
                self._numba = numba
        return self._numba

    @property
    def numba_error(self) -> Any:
        """The base class of Numba's compile errors."""
        from numba.core.errors import NumbaError

        return NumbaError

    def compile(self, graph: Graph) -> Executable:
        return NativeExecutable(graph, self)

    def load(self, source: str) -> Any:
        """Import the native module of `source` from the disk cache (writing it if new)."""
        key = hashlib.sha256(
            f"{_FORMAT}\n{self.numba.__version__}\n{sys.version}\n{source}".encode()
        ).hexdigest()[:24]
        name = f"myia_native_{key}"
        with _LOAD_LOCK:
            return self._load(name, source)

    def _load(self, name: str, source: str) -> Any:
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        directory = cache_dir() / "native"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name}.py"
        if not path.exists():
            tmp = directory / f".{name}.{os.getpid()}.tmp"
            tmp.write_text(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod


__all__ = [
    "NativeBackend",
    "NativeExecutable",
    "NativeGenerator",
    "cache_dir",
    "typed_stacks",
    "wait_all",
]
