"""The JAX backend (``backend="jax"``): a program compiled by XLA where it can be one computation.

The typed, optimized graph is lowered to Python source by `myia.compile.jax_codegen` (the
NumPy backend's generator, with its control flow rewritten as ``lax.cond``, ``lax.switch``
and ``lax.while_loop``), and that source runs in a namespace where ``np`` is ``jax.numpy``
and ``math`` maps to ``jax.numpy`` functions; the entry function is compiled with
``jax.jit``. JAX never sees the user's Python code: it traces the code Myia generated from
its own IR.

`jittable` walks the graph and decides whether it can be one XLA computation: no effects
(``print``, ``raise``, ``assert``), no lists or dicts, only primitives that cannot raise or
whose Python errors the generated code flags (``1 / 0`` on Python floats must still raise
``ZeroDivisionError``: the flagged call runs again on the host, which raises it; so is
arithmetic on Python ints past int64, where XLA's wraps around). Arguments and results are
arrays, scalars, and tuples and dataclasses of them. Recursion, and any program whose tracing
by JAX fails, runs on the host as the NumPy backend's generated code: every program that
runs on ``backend="numpy"`` runs on ``backend="jax"``, with the same results.

Values: NumPy arrays and Python or NumPy scalars in and out, as on the NumPy backend (the
kinds of results are those of the NumPy backend). With ``keep_on_device=True``, results are
``jax.Array``s (scalars 0-d, as in JAX), and ``jax.Array`` arguments are passed to XLA as they
are (a 0-d one as a scalar of its dtype). float64 is kept:
tracing and calls run inside ``jax.enable_x64()``, a context manager, so JAX's global
configuration is the user's own outside Myia's calls. With ``mesh=``, the arguments are
placed over the devices of a JAX mesh and XLA partitions the program (`jax_sharding`).

JAX is imported when the backend is first used: the core of Myia needs only NumPy.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import math
import os
from typing import Any

import numpy as np

from ..abstract.data import (
    AbstractArray,
    AbstractScalar,
)
from ..errors import MyiaError
from ..ir.node import Graph
from . import jax_runtime as rt
from .backend import DEVICE_ARRAY_TYPES, Backend, Executable, PythonExecutable
from .codegen import CodeGenerator, generate
from .jax_background import TRACING, Pending
from .jax_codegen import JaxGenerator, Unsupported
from .jax_fast import Outgrown, fast_path
from .jax_jittable import jittable
from .jax_values import (
    Packing,
    abstract,
    aligned,
    as_is,
    flatten,
    from_region,
    holds,
    leaf_types,
    map_arrays,
    to_host,
    unflatten,
)

_MATH_NAMES = (
    "exp log log1p log2 log10 expm1 sqrt sin cos tan asin acos atan sinh cosh tanh floor ceil "
    "atan2 fabs copysign hypot asinh acosh atanh"
).split()


def _bucket(need: int) -> int:
    """The stacks' capacity for `need` rows: the next power of two."""
    return 1 << (need - 1).bit_length()


class _JaxMath:
    """``math`` for the generated code under JAX: each function is its ``jax.numpy`` twin."""

    def __init__(self, jnp: Any):
        renames = {
            "asin": "arcsin",
            "acos": "arccos",
            "atan": "arctan",
            "atan2": "arctan2",
            "asinh": "arcsinh",
            "acosh": "arccosh",
            "atanh": "arctanh",
        }
        for name in _MATH_NAMES:
            setattr(self, name, getattr(jnp, renames.get(name, name)))
        self.pi, self.e, self.inf, self.nan = math.pi, math.e, math.inf, math.nan


class JaxExecutable(Executable):
    """A graph compiled by XLA through ``jax.jit``, or, where it cannot be, host code.

    A call returns, besides its results, an error flag (a Python error may be raised: the
    call runs again on the host, which raises it at the user's line, see
    `jax_runtime.check`) and the size the stacks of loop gradients needed. Stacks have a
    capacity per compilation (64 rows first); a call that needed more is compiled again with
    the next power of two that is enough, and runs again: `capacities` lists those compiled.
    A size known when tracing (a loop of known trip count) is traced for at once.
    """

    def __init__(self, graph: Graph, backend: JaxBackend):
        self.graph = graph
        self.host = PythonExecutable(generate(graph))
        self.source = self.host.source
        #: Whether calls run as one jitted XLA computation (else as the host code).
        self.jitted = False
        #: The thread tracing and compiling the program (`jax_background.Pending`), from
        #: the first call to the call that takes its outcome (`wait`).
        self.pending: Pending | None = None
        #: Why the program runs on the host (None when it is jitted).
        self.reason = jittable(graph)
        self.backend = backend
        #: The stack capacities compiled (one XLA computation each), smallest first.
        self.capacities: list[int] = []
        #: The call once the program is traced (`jax_fast.fast_path`), or None.
        self.fast: Any = None
        #: Where results come back to NumPy, their small arrays by dtype (`Packing`, set
        #: when JAX traces the program; None where nothing is packed).
        self.packing: Packing | None = None
        #: The aligned copies of large NumPy arguments, by leaf (`jax_fast`, `Staging`).
        self.staging: dict[int, Any] = {}
        #: The call of the arguments themselves once traced, where results are Python
        #: floats (`direct`), or None.
        self.direct_fn: Any = None
        #: The host code with its regions of array work jitted (`jax_regions`), once built.
        self.regions: PythonExecutable | None = None
        #: How many regions of array work the host code calls (`jax_regions`).
        self.region_count = 0
        #: The host code's regions of small arrays as machine code, where Numba is installed
        #: and no region is jitted (`native_regions.NativeRegions`), else None.
        self.native_regions: Any = None
        #: The program as the native backend runs it, where it has such regions (its whole
        #: machine code, `native_whole`, once ready), else None.
        self.native_exec: Any = None
        if self.reason is None:
            self._jit(graph)
        if not self.jitted:
            self._outline()

    def _outline(self) -> None:
        """Host code calling jitted regions of array work, for a program that is not jitted."""
        from . import jax_regions

        gen = CodeGenerator(self.graph)
        module = gen.generate()
        host = PythonExecutable(module)
        types = {name: getattr(node, "abstract", None) for node, name in gen.names.names.items()}
        jax, jnp = self.backend.jax, self.backend.jnp
        code, n = jax_regions.outline(
            module.source, types, module.globals, jax, _JaxMath(jnp), module.filename
        )
        if n:
            exec(code, module.globals)
            host.fn = module.globals[module.entry]
            self.regions, self.region_count = host, n
            return
        native = self.backend.native
        if native is None:
            return
        # No array large enough for a jit dispatch to pay: the program runs as on the native
        # backend, machine code whole where Numba takes it (a tree recursion and its
        # gradient, `native_whole`), else host code whose regions of small arrays (a tree's
        # node bodies) are machine code (`native_regions`).
        try:
            ex = native.compile(self.graph)
        except Exception as exc:  # pragma: no cover - a construct the generator mishandles
            self.reason = f"{self.reason}; not native code ({type(exc).__name__}: {exc})"
            return
        if ex.regions is not None:
            self.native_exec, self.native_regions = ex, ex.regions
            self.regions, self.region_count = ex.host, ex.region_count

    def _on_host(self, args: tuple[Any, ...]) -> Any:
        """A call as host code: with its jitted regions where there are some."""
        if self.regions is None:
            return self.host(self.backend.on_host(args))
        if self.native_exec is not None:
            return self.native_exec(self.backend.on_host(args))
        with self.backend.context():
            out = self.regions(self.backend.on_host(args))
        return map_arrays(out, self.backend.jax.Array, from_region)

    def _jit(self, graph: Graph) -> None:
        jax, jnp = self.backend.jax, self.backend.jnp
        rt.setup()
        try:
            module = JaxGenerator(graph).generate()
        except Unsupported as exc:
            self.reason = str(exc)
            return
        self.jax_source = module.source
        module.globals.update(np=jnp, math=_JaxMath(jnp), lax=jax.lax)
        exec(compile(module.source, module.filename, "exec"), module.globals)
        fn = module.globals[module.entry]
        params = [p.abstract for p in graph.parameters]
        out = graph.output.abstract
        self.params, self.out = params, out

        def flat(capacity: int, *leaves: Any, pack: bool = True) -> Any:
            with TRACING:  # the trace's state is global (`jax_background`)
                return trace(capacity, leaves, pack)

        def trace(capacity: int, leaves: tuple[Any, ...], pack: bool) -> Any:
            rt.Trace.start(capacity, leaves)
            it = iter(leaves)
            args = [unflatten(it, a, as_is) for a in params]
            rt.Trace.flags.append([])
            rt.Trace.needs.append([])
            try:
                result = fn(*args)
            finally:
                flags, needs = rt.Trace.flags.pop(), rt.Trace.needs.pop()
            leaves_out: list[Any] = []
            flatten(result, out, leaves_out)
            # What is known when tracing is no status to read back: flags known to be down,
            # stack sizes known to fit (a known size past the capacity traces the program
            # again with larger stacks, before XLA compiles it: `Outgrown`).
            flags = [f for f in flags if rt.concrete(f) is not False]
            known = [rt.concrete(n) for n in needs]
            if any(k is not None and k > capacity for k in known):
                raise Outgrown(max(k for k in known if k is not None))
            needs = [n for n, k in zip(needs, known) if k is None]
            status = None
            if flags or needs:
                # One number: the stack size needed, times 2, plus the error flag.
                status = jnp.asarray(0, dtype=np.int64)
                for n in needs:
                    status = jnp.maximum(status, jnp.asarray(n, dtype=np.int64))
                flag = jnp.asarray(False)
                for f in flags:
                    flag = flag | jnp.asarray(f, dtype=bool)
                status = status * 2 + flag.astype(np.int64)
            f64 = [jnp.asarray(x) for x in leaves_out]
            scalars = all(isinstance(a, AbstractScalar) for a in leaf_types(out))
            if (
                scalars
                and not self.backend.keep_on_device
                and leaves_out
                and all(x.dtype == np.float64 and x.shape == () for x in f64)
            ):
                # Float64 scalars (and the status, exact below 2**53) as one array: one
                # transfer from the device per call.
                parts = f64 + ([] if status is None else [status.astype(np.float64)])
                self.packed = "packed" if status is None else "packed+status"
                return jnp.stack(parts), None
            self.packed = None
            if pack and self.packs:
                packing = Packing(f64)
                self.packing = packing if packing else None
                if packing:
                    return packing.pack(f64, jnp), status
            return leaves_out, status

        self.flat = flat
        self.fn = jax.jit(flat, static_argnums=0, compiler_options=self._options(module.source))
        #: How results come back: None (as they are), "packed" (float64 scalars in one
        #: array), "packed+status" (and the status last); set when JAX traces the program.
        self.packed: str | None = None
        #: Whether small results are packed (`Packing`): where they come back to NumPy.
        self.packs = not self.backend.keep_on_device and self.backend.layout is None
        self.capacity = 64
        self.jitted = True
        self.traced = False

    def _options(self, source: str) -> dict[str, str] | None:
        """XLA's options for the program of generated JAX code `source`.

        On a GPU, XLA launches the kernels of a loop's body one by one unless they are at
        least `xla_gpu_graph_min_graph_size` (5), which it then launches as one CUDA graph
        per iteration. Myia's loop bodies are often smaller (`rnn`'s forward loop: a product,
        a ``tanh``, the counter): one graph per iteration from one kernel on. Measured on an
        H200, `rnn`'s primal (T = 1000): 10.8 -> 5.0 ms; `mlp_step`'s straight-line step, which
        has no loop, is slower so (82 -> 105 µs) and keeps XLA's default.
        """
        if self.backend.cpu or "jax_while(" not in source:
            return None
        return {"xla_gpu_graph_min_graph_size": "1"}

    def _leaves(self, args: tuple[Any, ...], copy: Any = aligned) -> list[Any]:
        """The leaves XLA takes for `args`; NumPy arrays, on a CPU, through `copy`."""
        leaves: list[Any] = []
        for v, a in zip(args, self.params):
            flatten(v, a, leaves)
        if self.backend.layout is not None:  # over a mesh: each leaf on its devices
            with self.backend.context():
                return self.backend.layout.place(leaves, self.params)
        int_array, cpu = self.backend.int_array, self.backend.cpu
        return [
            int_array(x) if type(x) is int else copy(x) if cpu and type(x) is np.ndarray else x
            for x in leaves
        ]

    def lowered_text(self, args: tuple[Any, ...]) -> str:
        """The StableHLO text XLA receives for a call with `args`."""
        self.wait()
        if not self.jitted:
            raise ValueError(f"this program runs on the host: {self.reason}")
        return self._lowered(self._leaves(args)).as_text()

    def compiled_text(self, args: tuple[Any, ...]) -> str:
        """The HLO text XLA compiled for a call with `args` (partitioned over a mesh)."""
        self.wait()
        if not self.jitted:
            raise ValueError(f"this program runs on the host: {self.reason}")
        lowered = self._lowered(self._leaves(args))
        with self.backend.context():
            return lowered.compile().as_text()

    def _lowered(self, leaves: list[Any]) -> Any:
        """The XLA computation lowered for `leaves`, with stacks as large as tracing says."""
        while True:
            try:
                with self.backend.context():
                    return self.fn.lower(self.capacity, *leaves)
            except Outgrown as grown:
                self.capacity = _bucket(grown.need)

    def export(self, args: tuple[Any, ...]) -> tuple[Any, list[Any], bool]:
        """The XLA computation of calls like ``self(args)``, exported with ``jax.export``.

        It takes the leaves of the arguments (arrays and scalars, in order) and returns the
        leaves of the result, then, where the program may flag an error or grow a stack, the
        status word (see `StableHLO`). Return the `jax.export.Exported`, the argument leaves'
        shapes and dtypes, and whether the status is the last result.
        """
        if self.backend.layout is not None:
            raise ValueError("a program over a mesh is exported without mesh= (one device)")
        self(args)
        self.wait()  # (compiled in the background: the next call runs XLA's computation)
        self(args)  # traced, checked, with stacks large enough for these arguments
        if not self.jitted:
            raise ValueError(f"this program runs on the host: {self.reason}")
        from jax import export as jax_export

        jax, jnp = self.backend.jax, self.backend.jnp
        capacity, flat = self.capacity, self.flat
        has_status = []

        def computation(*leaves: Any) -> tuple[Any, ...]:
            result, status = flat(capacity, *leaves, pack=False)
            if self.packed is not None:  # float64 scalars (and the status) in one array
                parts = [result[i] for i in range(result.shape[0])]
                status = parts.pop().astype(np.int64) if self.packed != "packed" else None
                result = parts
            has_status.append(status is not None)
            return (*result,) if status is None else (*result, jnp.asarray(status))

        leaves = self._leaves(args)
        specs = [jax.ShapeDtypeStruct(np.shape(x), np.result_type(x)) for x in leaves]
        with self.backend.context():
            exported = jax_export.export(jax.jit(computation))(*specs)
        return exported, specs, has_status[-1]

    def _run(self, leaves: list[Any]) -> Any:
        """Run the XLA computation, compiled again with larger stacks while they overflow."""
        while True:
            try:
                with self.backend.context():
                    result, status = self.fn(self.capacity, *leaves)
            except Outgrown as grown:  # known when tracing: grown before compiling
                self.capacity = _bucket(grown.need)
                continue
            if self.capacity not in self.capacities:
                self.capacities.append(self.capacity)
            if self.packed is not None:
                values = np.asarray(result).tolist()
                if self.packed == "packed":
                    return values, False
                result, status = values[:-1], int(values[-1])
            elif status is None:
                return self._unpacked(result), False
            else:
                status = int(np.asarray(status))
            need, flag = status >> 1, status & 1
            if need <= self.capacity:
                return self._unpacked(result), bool(flag)
            self.capacity = _bucket(need)

    def _unpacked(self, result: list[Any]) -> list[Any]:
        """The leaves of the results of the XLA computation, in order (`Packing`)."""
        return result if self.packing is None else self.packing.unpack(result)

    def direct(self) -> tuple[Any, bool]:
        """The call of the arguments themselves, where results are Python floats.

        It is there once the program is traced (`Executable.direct`); a call that flags an
        error or outgrows its stacks raises, and runs again the general way.
        """
        if not self.jitted:
            return None, True
        return self.direct_fn, self.traced

    def __call__(self, args: tuple[Any, ...]) -> Any:
        if self.fast is not None:
            return self.fast(args)
        out = self._call(args)
        if self.jitted and self.traced:
            self.fast, self.direct_fn = fast_path(self)
        return out

    def _call(self, args: tuple[Any, ...]) -> Any:
        out, on_host = self._computed(args)
        if on_host and self.backend.keep_on_device:
            # The host code computed NumPy arrays: as the XLA computation's results, they stay
            # on the device (a dict or a list of results, a call the host code runs).
            return self.backend.on_device(out)
        return out

    def _refuse(self, exc: Exception) -> None:
        """The generated code does something JAX cannot trace: the program runs on the host."""
        self.jitted = False
        self.reason = f"JAX could not trace it ({type(exc).__name__}: {exc})"
        self._outline()

    def _first_checked(self, result: list[Any]) -> bool:
        """Whether the program stays jitted after its first run, which computed `result`.

        XLA's result dtypes must be NumPy's (else the host code is the reference).
        """
        self.traced = True
        expected = [np.dtype(a.dtype) for a in leaf_types(self.out)]
        got = [np.dtype(getattr(v, "dtype", type(v))) for v in result]
        if got != expected:
            self.jitted = False
            self.reason = f"XLA's result dtypes {got} are not NumPy's {expected}"
        return self.jitted

    def wait(self) -> None:
        """Wait until XLA has compiled the program in the background, and take the outcome.

        Calls run the XLA computation from then on, or the host code where tracing failed
        (`reason` says why). Nothing to wait for with ``background=False``.
        """
        pending, self.pending = self.pending, None
        if pending is None:
            return
        pending.wait()
        if pending.error is not None:
            self._refuse(pending.error)  # type: ignore[arg-type]
        else:
            self._first_checked(pending.result[0])

    def _computed(self, args: tuple[Any, ...]) -> tuple[Any, bool]:
        """The result of a call, and whether the host code computed it."""
        if not self.jitted:
            return self._on_host(args), True
        if not self.traced and self.backend.background:
            # XLA compiles the program in a thread (`jax_background`); the host code runs
            # the calls until it is done.
            if self.pending is None:
                leaves = self._leaves(args)
                try:
                    return self.host(self.backend.on_host(args, deep=True)), True
                finally:
                    self.pending = Pending(self._run, leaves)
            if not self.pending.done:
                return self.host(self.backend.on_host(args, deep=True)), True
            self.wait()
            if not self.jitted:
                return self._on_host(args), True
        leaves = self._leaves(args)
        if self.traced:
            try:
                result, flag = self._run(leaves)
            except OverflowError:  # JAX's, for a Python int past int64: Python's ints then
                return self.host(self.backend.on_host(args)), True
        else:
            try:
                result, flag = self._run(leaves)
            except Exception as exc:
                self._refuse(exc)
                return self._on_host(args), True
            if not self._first_checked(result):
                return self.host(self.backend.on_host(args)), True
        if flag:
            # Python raises an error here (or computes what XLA cannot): the host code runs
            # the call, and raises the error at the user's line.
            return self.host(self.backend.on_host(args)), True
        return unflatten(iter(result), self.out, self.backend.convert), False


#: The most Python ints a backend keeps as device arrays (`JaxBackend.int_array`).
INT_ARRAYS = 256


class JaxBackend(Backend):
    """XLA through JAX: whole programs jitted where they can be, host code elsewhere."""

    name = "jax"

    def __init__(
        self,
        *,
        keep_on_device: bool = False,
        device: str | None = None,
        mesh: Any = None,
        batch_axis: Any = None,
        batch_argnums: Any = (),
        arg_specs: Any = None,
        background: bool | None = None,
    ):
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:  # pragma: no cover - depends on the environment
            raise MyiaError('backend="jax" needs JAX: pip install "myia[jax]"') from None
        self.jax, self.jnp = jax, jnp
        DEVICE_ARRAY_TYPES.add(type(jnp.zeros(())))  # a call's quick key reads their shapes
        self.keep_on_device = keep_on_device
        self.device = device or "cpu"
        try:
            devices = jax.devices(self.device)
        except RuntimeError:
            raise MyiaError(f"JAX has no {self.device!r} device on this machine") from None
        self.jax_device = devices[0] if device is not None else None
        #: JAX's default device (calls on it set no default device, `context`).
        self.first_device = jax.devices()[0]
        #: Whether calls run on a CPU device, which reads aligned NumPy arguments in place
        #: (`jax_values.aligned`).
        self.cpu = (self.jax_device or self.first_device).platform == "cpu"
        #: Whether an argument held ``jax.Array``s inside tuples or records (`on_host`).
        self.nested_arrays = False
        #: Python ints passed to XLA, as device arrays by value (`int_array`).
        self.ints: dict[int, Any] = {}
        self.seen_ints: set[int] = set()
        #: Where arguments live over the devices of `mesh` (`jax_sharding.MeshLayout`).
        self.layout = None
        if mesh is not None:
            if device is not None:
                raise MyiaError("give the JAX backend a device= or a mesh=, not both")
            from .jax_sharding import MeshLayout

            self.layout = MeshLayout(jax, mesh, batch_axis, batch_argnums, arg_specs)
        elif batch_argnums or arg_specs or batch_axis is not None:
            raise MyiaError("batch_axis=, batch_argnums= and arg_specs= need a mesh=")
        if background is None:
            background = os.environ.get("MYIA_JAX_BACKGROUND", "1") != "0"
        #: Whether XLA compiles a program in a thread while its first calls run the host
        #: code (`jax_background`); not over a mesh, whose processes call in step.
        self.background = background and mesh is None

    @functools.cached_property
    def native(self) -> Any:
        """The native backend that loads regions of machine code, or None without Numba."""
        if importlib.util.find_spec("numba") is None:
            return None
        from .native_backend import NativeBackend

        return NativeBackend()

    def _device_setting(self) -> Any:
        """The default device a call sets (None where JAX's is already the chosen one)."""
        device = self.jax_device
        if device is None:
            return None
        current = self.jax.config.jax_default_device
        if current is device or (current is None and device == self.first_device):
            return None
        return device

    def settled(self) -> bool:
        """Whether JAX's settings are already those of the calls: nothing to enter."""
        return self.jax.config.jax_enable_x64 and self._device_setting() is None

    def settled_test(self) -> Any:
        """`settled` as a function of nothing, the cheapest for this backend (a call's test)."""
        if self.jax_device is not None:
            return self.settled
        config = self.jax.config
        return lambda: config.jax_enable_x64

    def context(self) -> Any:
        """Where tracing and calls run: float64 enabled, on the chosen device.

        A setting JAX has already (float64 enabled in the user's process, the chosen device
        JAX's default) is not entered again: a call's cost, and the same key for JAX's cache
        of compiled computations as a call of the fast path (`settled`).
        """
        jax = self.jax
        device = self._device_setting()
        x64 = None if jax.config.jax_enable_x64 else jax.enable_x64(True)
        if device is None:
            return contextlib.nullcontext() if x64 is None else x64
        if x64 is None:
            return jax.default_device(device)
        stack = contextlib.ExitStack()
        stack.enter_context(x64)
        stack.enter_context(jax.default_device(device))
        return stack

    def int_array(self, value: int, now: bool = True) -> Any:
        """Python int `value` as an argument of XLA: a device array, made once per value.

        JAX copies a Python scalar argument to the device at every call (about 1.5 µs on a
        CPU, a good part of a scalar program's call); the ints a program is called with (loop
        counts, sizes) recur, and their arrays are kept (`INT_ARRAYS` of them). The array is
        the one JAX makes of the int itself (int64, weakly typed): the same computation
        runs. Making one costs more than the copy: unless `now` (a call that traces or
        runs the general way), it is made the second time the value is seen, and an int
        that changes at every call (a step count) is passed as it is, as is one beyond int64.
        """
        out = self.ints.get(value)
        if out is None:
            if not now and value not in self.seen_ints:
                if len(self.seen_ints) >= INT_ARRAYS:
                    self.seen_ints.clear()
                self.seen_ints.add(value)
                return value
            if len(self.ints) >= INT_ARRAYS:
                self.ints.clear()
            try:
                with self.context():
                    out = self.jnp.asarray(value)
            except OverflowError:
                return value
            self.ints[value] = out
        return out

    def on_host(self, args: tuple[Any, ...], deep: bool = False) -> tuple[Any, ...]:
        """`args` with their ``jax.Array``s as NumPy arrays, for the host code.

        Tuples and records are searched only once some argument held ``jax.Array``s in
        them (`abstract_of` met one), or where `deep` (the calls of a program that XLA
        compiles in a thread: a model kept on the device, whose host code would otherwise
        run JAX's operations one by one, each compiled): a tree of a recursion is not
        walked on every call.
        """
        array = self.jax.Array
        if (deep or self.nested_arrays) and any(holds(a, array) for a in args):
            return tuple(map_arrays(a, array, _from_device) for a in args)
        if any(isinstance(a, array) for a in args):
            return tuple(_from_device(a) if isinstance(a, array) else a for a in args)
        return args

    def on_device(self, value: Any) -> Any:
        """`value` (a result of the host code) with its arrays and numbers as ``jax.Array``s.

        Numbers are 0-d ``jax.Array``s, as the XLA computation's scalar results (`convert`),
        but a Python int that no int64 holds (``2 ** 70``, computed on the host after the
        device flagged the overflow) stays the exact Python int.
        """
        asarray = self.jnp.asarray

        def put(x: Any) -> Any:
            if type(x) is int and not _INT64_MIN <= x <= _INT64_MAX:
                return x
            return asarray(x)

        with self.context():
            return map_arrays(value, _NUMBERS, put)

    def convert(self, value: Any, a: Any) -> Any:
        """A leaf of a result as the user gets it (a ``jax.Array`` if kept on the device).

        Kept on the device, a scalar is a 0-d ``jax.Array``, as JAX returns it: the call
        does not wait for the device to read it back (a later call takes it back as the
        scalar, `jax_values.abstract`).
        """
        if self.keep_on_device:
            return value
        if self.layout is not None and isinstance(a, AbstractArray):
            return self.layout.to_host(value)
        return to_host(value, a)

    def compile(self, graph: Graph) -> Executable:
        return JaxExecutable(graph, self)

    def abstract_of(self, value: Any) -> Any:
        """The abstract value of an argument that is or holds ``jax.Array``s.

        A tuple or record holding some (a model kept on the device) has the abstract value of
        the same structure holding NumPy arrays of their shapes and dtypes.
        """
        array = self.jax.Array
        if not self.nested_arrays and not isinstance(value, array) and holds(value, array):
            self.nested_arrays = True
        return abstract(value, array)


#: The leaves of results that `JaxBackend.on_device` puts on the device.
_NUMBERS = (np.ndarray, np.number, np.bool_, bool, int, float)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _from_device(x: Any) -> Any:
    """A ``jax.Array`` argument as the host code takes it: a NumPy array, or scalar if 0-d."""
    return np.asarray(x) if x.ndim else np.asarray(x)[()]
