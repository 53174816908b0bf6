"""A corpus of user mistakes: each gives a `MyiaError` at the user's line, with no internal frame.

Each case is a small program written to a module file of its own (so that its source can be
found), with the faulty line marked ``# HERE``. The program's entry point ``f`` is compiled
with ``myia`` (or ``grad``) and called; the error must be a `MyiaError` subclass, not an
internal error, whose message names the file, the marked line and its source text, and
whose formatted Python traceback shows no file of the Myia package.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
import traceback

import numpy as np
import pytest

import myia
from myia import (
    MyiaError,
    MyiaInternalError,
    MyiaSyntaxError,
    MyiaTypeError,
    grad,
)

PACKAGE = os.path.dirname(os.path.abspath(myia.__file__))

# (name, source, arguments, how): `how` is "myia" or "grad".
CASES: list[tuple[str, str, tuple, str]] = []
# The class of error a case must raise, where the corpus says (name -> class).
KINDS: dict[str, type] = {}


def case(name, source, args=(1.5,), how="myia", kind=None):
    CASES.append((name, source, args, how))
    if kind is not None:
        KINDS[name] = kind


# Unknown names ----------------------------------------------------------------------------------

for name in ["undefined", "xx", "np_", "foo_bar", "tmp1", "alpha", "Beta", "z9", "result", "acc"]:
    case(f"unknown-name-{name}", f"def f(x):\n    return x + {name}  # HERE\n")
    case(f"unknown-call-{name}", f"def f(x):\n    y = {name}(x)  # HERE\n    return y\n")
for attr in ["sinn", "exq", "frobnicate", "tanhh", "summ"]:
    src = f"import numpy as np\ndef f(x):\n    return np.{attr}(x)  # HERE\n"
    case(f"unknown-np-attr-{attr}", src)

for i, (mod, fn) in enumerate(
    [("os", "getcwd"), ("time", "time"), ("random", "random"), ("sys", "getsizeof")]
):
    src = f"import {mod}\ndef f(x):\n    return {mod}.{fn}() + x  # HERE\n"
    case(f"unsupported-function-{i}", src)

# Wrong types ------------------------------------------------------------------------------------

BINOPS = ["+", "-", "*", "/", "//", "%", "**", "<", ">", "<=", ">="]
for i, op in enumerate(BINOPS):
    for j, other in enumerate(['"a"', "(1, 2)", "None", "[x]", '{"k": x}']):
        case(f"binop-{i}-{j}", f"def f(x):\n    return x {op} {other}  # HERE\n")
for i, op in enumerate(["-", "+", "~"]):
    for j, other in enumerate(['"a"', "None"]):
        case(f"unary-{i}-{j}", f"def f(x):\n    y = {other}\n    return {op}y  # HERE\n")
for i, other in enumerate(['"a"', "None", "(1.0,)"]):
    case(
        f"helper-type-{i}",
        f"def h(a):\n    return a * 2.0  # HERE\ndef f(x):\n    return h({other}) + x\n",
    )
for i, fn in enumerate(["math.sin", "math.exp", "math.log", "math.sqrt", "math.tanh"]):
    case(f"math-tuple-{i}", f"import math\ndef f(x):\n    return {fn}((x, x))  # HERE\n")
for i, fn in enumerate(["np.sum", "np.exp", "np.log", "np.tanh"]):
    case(f"np-str-{i}", f'import numpy as np\ndef f(x):\n    return {fn}("abc") + x  # HERE\n')
case("index-float", "def f(x):\n    t = (x, x)\n    return t[x]  # HERE\n")
case("index-out-of-range", "def f(x):\n    t = (x, x)\n    return t[5]  # HERE\n")
case("attr-of-float", "def f(x):\n    return x.foo  # HERE\n")
case("call-float", "def f(x):\n    return x(1.0)  # HERE\n")
case("call-tuple", "def f(x):\n    return (x, x)(1)  # HERE\n")
# A slice's step of zero (Python's ValueError): it was an internal error.
case("slice-step-zero-array", "def f(x):\n    return x[::0]  # HERE\n", (np.ones(3),))
case("slice-float-array", "def f(x):\n    return x[0.5:2]  # HERE\n", (np.ones(3),))
case("slice-step-zero-tuple", "def f(x):\n    t = (x, x)\n    return t[::0]  # HERE\n")
# A math function of an array of several elements: Python's TypeError (it was elementwise).
for i, fn in enumerate(["math.sin", "math.exp", "math.sqrt", "math.floor", "float", "int"]):
    src = f"import math\ndef f(x):\n    return {fn}(x)  # HERE\n"
    case(f"math-of-array-{i}", src, (np.ones((2, 3)),), kind=MyiaTypeError)

for name in ["undefined", "xx", "foo_bar", "tmp1", "alpha", "Beta", "z9", "result", "acc", "w"]:
    case(
        f"unknown-name-helper-{name}",
        f"def h(a):\n    return a * {name}  # HERE\ndef f(x):\n    return h(x) + 1.0\n",
    )
for i, op in enumerate(BINOPS):
    case(
        f"binop-loop-{i}",
        f'def f(x):\n    for i in range(3):\n        x = x {op} "s"  # HERE\n    return x\n',
    )
    case(
        f"binop-branch-{i}",
        f"def f(x):\n    if x > 0:\n        x = x {op} None  # HERE\n    return x\n",
    )
for i, fn in enumerate(["sin", "cos", "exp", "log", "sqrt", "tanh"]):
    case(f"math-str-{i}", f'import math\ndef f(x):\n    return math.{fn}("s") + x  # HERE\n')
case("setattr-float", "def f(x):\n    x.attr = 1.0  # HERE\n    return x\n")

# Wrong arity ------------------------------------------------------------------------------------

for n in range(1, 4):
    params = ", ".join(f"a{k}" for k in range(n))
    for m in range(0, 5):
        if m == n:
            continue
        call = ", ".join(["x"] * m)
        case(
            f"arity-{n}-{m}",
            f"def h({params}):\n    return a0\ndef f(x):\n    return h({call})  # HERE\n",
        )
for i, fn in enumerate(["math.sin", "math.exp", "math.tanh"]):  # (math.log(x, base) is right)
    case(f"math-arity-{i}", f"import math\ndef f(x):\n    return {fn}(x, x)  # HERE\n")
case("len-two", "def f(x):\n    t = (x,)\n    return len(t, t)  # HERE\n")
case("abs-two", "def f(x):\n    return abs(x, x)  # HERE\n")
case("max-none", "def f(x):\n    return max() + x  # HERE\n")
case("min-none", "def f(x):\n    return min() * x  # HERE\n")
case(  # (it was accepted: Python's TypeError)
    "posonly-keyword",
    "def h(a, /, b):\n    return a + b\ndef f(x):\n    return h(a=x, b=x)  # HERE\n",
)
case("kw-unknown", "def h(a):\n    return a\ndef f(x):\n    return h(b=x)  # HERE\n")

# Syntax outside the subset ----------------------------------------------------------------------

SYNTAX = {
    "try": "    try:  # HERE\n        y = x\n    except Exception:\n        y = x\n    return y\n",
    "with": "    with x:  # HERE\n        y = x\n    return y\n",
    "global": "    global G  # HERE\n    return x\n",
    "yield": "    yield x  # HERE\n",
    "del": "    y = x\n    del y  # HERE\n    return x\n",
    "import": "    import os  # HERE\n    return x\n",
    "class": "    class A:  # HERE\n        pass\n    return x\n",
    "await": "    await x  # HERE\n",
}
for key, body in SYNTAX.items():
    case(f"syntax-{key}", f"def f(x):\n{body}")

# Mutation ---------------------------------------------------------------------------------------

MUTATIONS = [
    # (An append to a list the function builds and nothing else sees is a rebinding.)
    "xs = [x]\n    ys = xs\n    xs.append(x)  # HERE\n    return ys",
    "xs = [x]\n    xs[0] = x  # HERE\n    return x",
    "xs = [x]\n    xs.pop()  # HERE\n    return x",
    "xs = [x]\n    xs.extend([x])  # HERE\n    return x",
    "xs = [x]\n    xs.insert(0, x)  # HERE\n    return x",
    'd = {"a": x}\n    d["b"] = x  # HERE\n    return x',
    'd = {"a": x}\n    d.pop("a")  # HERE\n    return x',
    'd = {"a": x}\n    d.setdefault("b", x)  # HERE\n    return x',
    'd = {"a": x}\n    d.update({"b": x})  # HERE\n    return x',
    "xs = [x]\n    xs[0] += x  # HERE\n    return x",
]
for i, body in enumerate(MUTATIONS):
    case(f"mutation-{i}", f"def f(x):\n    {body}\n", kind=MyiaSyntaxError)
# A mutating method whose result is used: refused as a mutation too, not as an attribute.
MUTATION_VALUES = [
    "xs = [x, x]\n    y = xs.pop()  # HERE\n    return y",
    "xs = [x, x]\n    return xs.pop(0) + x  # HERE",
    'd = {"a": x}\n    return d.pop("a")  # HERE',
    'd = {"a": x}\n    y = d.setdefault("b", x)  # HERE\n    return y',
    'd = {"a": x}\n    k, v = d.popitem()  # HERE\n    return v',
    "xs = [x]\n    ys = xs.append(x)  # HERE\n    return x",
    'd = {"a": x}\n    return getattr(d, "setdefault")("a", x)  # HERE',
]
for i, body in enumerate(MUTATION_VALUES):
    case(f"mutation-value-{i}", f"def f(x):\n    {body}\n", kind=MyiaSyntaxError)

# Shapes -----------------------------------------------------------------------------------------

SHAPES = [
    ((np.ones(3), np.ones(4)), "return a + b  # HERE"),
    ((np.ones((2, 3)), np.ones((2, 3))), "return a @ b  # HERE"),
    ((np.ones((2, 3)), np.ones(4)), "return np.dot(a, b)  # HERE"),
    ((np.ones(3), np.ones(4)), "return a * b  # HERE"),
    ((np.ones((2, 3)), np.ones((3, 2))), "return a - b  # HERE"),
    ((np.ones(6), np.ones(1)), "return np.reshape(a, (4, 2)) + b  # HERE"),
]
for i, (args, line) in enumerate(SHAPES):
    case(f"shape-{i}", f"import numpy as np\ndef f(a, b):\n    {line}\n", args)

# Branches and control flow ----------------------------------------------------------------------

for i, other in enumerate(['"a"', "(x, x)", "[x]"]):  # (x or None is an `int | None`)
    case(
        f"branch-types-{i}",
        f"def f(x):\n    if x > 0:  # HERE\n        return x\n    return {other}\n",
    )
case("raise-int", "def f(x):\n    raise 3  # HERE\n")
# A variable assigned on some paths only: Python's error at the read where it is unassigned
# (`test_unassigned_variables`).
UNBOUND = [
    "    if x > 0:\n        y = x\n    return y  # HERE\n",
    "    if x > 0:\n        y = x\n    z = x + 1.0\n    return y * z  # HERE\n",
    "    for i in range(int(x) - 5):\n        y = x * i\n    return y  # HERE\n",
    "    while x > 0:\n        x = x - 1.0\n        last = x\n    return last  # HERE\n",
    "    if x > 0:\n        y = x\n    return abs(y)  # HERE\n",
    "    if False:\n        y = x\n    return y  # HERE\n",
    "    for i in range(0):\n        y = x\n    return y  # HERE\n",
    "    if x > 0:\n        y = x\n    return (y, x)  # HERE\n",
    "    if x > 0:\n        y = x\n    z = x * 2.0\n"
    "    ys = [y + 1.0 for _ in range(3)]  # HERE\n    return z + ys[0]\n",
    "    if x > 0:\n        y = x\n    z = x * 2.0\n    g = lambda a: a + y  # HERE\n"
    "    return g(z)\n",
    "    if x > 0:\n        y = x\n    elif x < -1:\n        y = -x\n    return y + 1.0  # HERE\n",
]

# Gradient misuse --------------------------------------------------------------------------------

for i, ret in enumerate(["(x, x)", '"a"', "None"]):
    case(f"grad-returns-{i}", f"def f(x):\n    return {ret}  # HERE\n", how="grad")
for i, ret in enumerate(["x + undefined", 'x + "a"', "x(1)"]):
    case(f"grad-body-{i}", f"def f(x):\n    return {ret}  # HERE\n", how="grad")
# jvp with more tangents than primals (they were dropped), grad with respect to a function
# (its gradient was an internal value, `Env(0)`).
case(
    "jvp-tangents-length",
    "from myia import jvp\ndef g(x):\n    return x * 2.0\n"
    "def f(x):\n    return jvp(g, (x,), (x, x))  # HERE\n",
)
case(
    "grad-wrt-function",
    "import math\nfrom myia import grad\ndef g(x, h):\n    return h(x)\n"
    "def f(x):\n    return grad(g, 'h')(x, math.sin)  # HERE\n",
)
case(  # (keywords are batched on axis 0, those **kwargs collects too, not with *args)
    "vmap-keyword-of-varargs-inside-myia",
    "from myia import vmap\ndef g(x, *a):\n    return x * a[0]\n"
    "def f(x):\n    return vmap(g)(x, y=x)  # HERE\n",
    (np.ones(3),),
)
case(
    "vmap-keyword-only-missing-inside-myia",
    "from myia import vmap\ndef g(x, *, y):\n    return x * y\n"
    "def f(x):\n    return vmap(g)(x)  # HERE\n",
    (np.ones(3),),
)
case(
    "grad-inside-unknown-wrt",
    "from myia import grad\ndef h(p):\n    return p * p\n"
    "def f(x):\n    return grad(h, 'q')(x)  # HERE\n",
)

# Bad arguments at the entry point (no user line: the call itself is the mistake) ----------------

ENTRY = [
    (np.array(["a", "b"]),),
    (np.array([object(), object()], dtype=object),),
    ({1, 2},),
    (object(),),
    (b"bytes",),
    (1.0, 2.0),
    (),
]
for i, args in enumerate(ENTRY):
    case(f"entry-arg-{i}", "def f(x):\n    return x\n", args)


def load(tmp_path, name, source):
    path = tmp_path / f"mistake_{name.replace('-', '_')}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError:  # `await` outside an async function: Python refuses it itself
        pytest.skip("Python refuses this program before Myia sees it")
    return module, str(path)


# Cases that still fail one of the checks, with what is wrong (see issue 22).
KNOWN = {
    # filled from running the corpus: name -> reason
}


def test_corpus_size():
    assert len(CASES) >= 200, len(CASES)


@pytest.mark.parametrize("name,source,args,how", CASES, ids=[c[0] for c in CASES])
def test_mistake(tmp_path, name, source, args, how):
    if name in KNOWN:
        pytest.xfail(KNOWN[name])
    module, path = load(tmp_path, name, source)
    fn = grad(module.f) if how == "grad" else myia.myia(module.f)
    with pytest.raises(MyiaError) as info:
        fn(*args)
    err = info.value
    assert not isinstance(err, MyiaInternalError), str(err)
    assert isinstance(err, KINDS.get(name, MyiaError)), str(err)
    text = "".join(traceback.format_exception(err))
    assert PACKAGE not in text, text
    assert "in <module>" not in str(err), str(err)  # every frame names its function
    if "# HERE" in source:
        line = next(i for i, t in enumerate(source.splitlines(), 1) if "# HERE" in t)
        src = source.splitlines()[line - 1].split("# HERE")[0].strip()
        assert f'File "{path}", line {line}' in str(err), str(err)
        assert src in str(err), str(err)


@pytest.mark.parametrize("how", ["myia", "grad", "jax"])
@pytest.mark.parametrize("k", range(len(UNBOUND)))
def test_unassigned_variables(tmp_path, k, how):
    """A variable assigned on some paths only is read as Python reads it.

    Where a path assigned it, its value (and its gradient); where none did, Python's error
    (``UnboundLocalError``) with its message, at the read, in the user's file (no frame of
    the package). A closure that captures such a variable is refused.
    """
    module, path = load(tmp_path, f"unbound_{k}", f"def f(x):\n{UNBOUND[k]}")
    fn = (
        grad(module.f)
        if how == "grad"
        else myia.myia(module.f, backend=how.replace("myia", "numpy"))
    )
    line = next(i for i, t in enumerate(UNBOUND[k].splitlines(), 2) if "# HERE" in t)
    if "lambda" in UNBOUND[k]:
        # A closure capturing a variable that some paths leave unassigned: refused.
        with pytest.raises(MyiaSyntaxError, match="closures capture the values") as info:
            fn(1.5)
        assert f'File "{path}", line {line}' in str(info.value)
        return
    if how == "grad" and ("if False" in UNBOUND[k] or "(y, x)" in UNBOUND[k]):
        # No path returns a float (every path raises, or it returns a tuple): no gradient.
        said = "never returns: every path raises" if "if False" in UNBOUND[k] else "float scalar"
        with pytest.raises(MyiaTypeError, match=said) as info:
            fn(1.5)
        assert PACKAGE not in "".join(traceback.format_exception(info.value))
        return
    for x in (7.5, -1.5, -0.5):
        try:
            expected = module.f(x)
        except NameError as exc:
            with pytest.raises(NameError) as info:
                fn(x)
            if " for " not in UNBOUND[k]:
                # (A comprehension's body reads a free variable before Python 3.12, PEP 709: a
                # NameError where Myia, as Python 3.12, reads the local variable.)
                assert type(info.value) is type(exc) and str(info.value) == str(exc)
            text = "".join(traceback.format_exception(info.value))
            assert PACKAGE not in text, text
            assert f'File "{path}", line {line}' in text, text
            continue
        if how == "grad":
            expected = (module.f(x + 1e-6) - module.f(x - 1e-6)) / 2e-6
            assert abs(fn(x) - expected) < 1e-6 * max(1.0, abs(expected))
        else:
            assert fn(x) == expected


# Arguments that contain themselves or are nested deeply -----------------------------------------


@dataclasses.dataclass
class Node:
    value: float
    next: Node | None


def first(x):
    return x


def test_cyclic_arguments():
    xs = [1.0]
    xs.append(xs)
    a = Node(1.0, None)
    a.next = Node(2.0, a)
    for arg, said in [(xs, "nested too deeply or contains itself"), (a, "Node contains itself")]:
        with pytest.raises(MyiaTypeError, match=said) as info:
            myia.myia(first)(arg)
        assert PACKAGE not in "".join(traceback.format_exception(info.value))


def test_deep_tuple_argument():
    t = 1.0
    for _ in range(400):
        t = (t,)
    assert myia.myia(first)(t) == t
    assert myia.myia(first)(t) == t  # the second call takes the cached specialization


def test_non_numeric_arrays():
    for arr in [np.array(["a", "b"]), np.array([None, 1], dtype=object)]:
        with pytest.raises(MyiaTypeError, match="not supported|no Myia type"):
            myia.myia(first)(arr)


def test_internal_error_keeps_its_cause():
    from myia.boundary import boundary

    def broken():
        try:
            raise KeyError("x")
        except KeyError as exc:
            raise MyiaInternalError("KeyError: 'x'") from exc

    with pytest.raises(MyiaInternalError, match="internal error in Myia") as info:
        boundary(broken)()
    assert isinstance(info.value.__cause__, KeyError)
