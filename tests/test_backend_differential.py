"""Every backend against the NumPy backend, on programs written as users write them.

Each program of `PROGRAMS` runs on ``backend="numpy"``, ``"jax"`` and ``"native"`` (machine
code compiled before the first call returns), twice: the results must be the same values of
the same kinds (a signed zero keeps its sign), or the same error, with the same message and
the same Myia traceback through the user's lines. `GRADIENTS` are compared the same way.
The programs are those a differential fuzzing of the backends found wrong.
"""

from __future__ import annotations

import math
import traceback

import numpy as np
import pytest
from helpers import own_cache_dir  # noqa: F401 (a fixture)

from myia import grad, myia

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

pytest.importorskip("jax")
pytest.importorskip("numba")

BACKENDS = ["jax", "native"]


def counting(k, n):
    for _ in range(n):
        k = k + 1
    return k


def counting_down(k, n):
    while n > 0:
        k = k - 1
        n = n - 1
    return 1 - k


def flip(k, n):
    for _ in range(n):
        k = 1 - k
    return k


def counting_three(k):
    for _ in range(3):  # a trip count known when tracing: lax.fori_loop
        k = k + 2
    return k


def up_to(k, n):
    while k <= n:  # k wraps around past int64 in XLA: the loop must stop at the flag
        k = k + 3
    return k


def doubling(k, n):
    for _ in range(n):
        k = k * 2
    return k


def summing(k, n):
    for i in range(n):
        k = k + k - i
    return k


def negating(k, n):
    for i in range(n):
        k = abs(-k + i)
    return k


def compare(n, x):
    return n == x, n < x, n > x, x <= n, x != n


def int_divide(a, b):
    return a // b, a % b


def float_mod(x, y):
    return x % y, x // y


def mod_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + (x - i) % 2.0 + (x - i) // 2.0
    return s


def scale(x):
    return x * 0.1, x + 1, x / 3


def of_0d(x):
    return np.float64(3.0) * x, np.exp(x)


def log_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.log(x - i)
    return s


def raise_in_loop(x, n):
    i = 0
    while i < n:
        if x > 50:
            raise ValueError(f"x={x} too large at {i}")
        x = x * 2
        i += 1
    return x


def early_return(x, n):
    for i in range(n):
        x = x * 1.5
        if x > 100.0:
            return x - i
    return -x


def past_int32(x):
    return x + 2**31


def mixed_int32(x, k):
    return x * k, x < k


def int_power(k, x):
    return np.power(k, x), x**k


def bitwise_with_int(k, x):
    return k & x, x | k, x ^ k, np.maximum(x, k), np.minimum(k, x)


def named_bitwise_with_int(k, x):
    return np.bitwise_and(k, x), np.left_shift(x, k), np.right_shift(k, x), np.less(x, k)


def clip_to_int(x, k):
    return np.clip(x, 0, k)


def powers_in_loop(x, n):
    s = x
    for i in range(n):
        s = s + x ** (i - 2)  # negative at first: NumPy's ValueError at the user's line
    return s


def casts_to_ints(x):
    return (
        x.astype(np.uint8),
        x.astype(np.int8),
        x.astype(np.int32),
        x.astype(np.int64),
        x[0].astype(np.uint16),
    )


def signs(x, s):
    return np.sign(x), np.sign(s), np.sign(x * 2.0)


OUT_OF_RANGE = [-3.5, 300.5, -129.0, 1e20, -1e20, np.nan, np.inf, -np.inf, 3e9, -0.5, 2.0**63]

# (function, arguments)
PROGRAMS = [
    (counting, (5, 3)),
    (counting, (2**63 - 2, 3)),  # past int64: Python's int goes on (machine code wrapped)
    (counting_down, (-(2**63) + 1, 2)),
    (counting_down, (2**63 - 2, 2)),
    (flip, (5, 3)),
    (flip, (-(2**63), 1)),
    (counting_three, (5,)),
    (counting_three, (2**63 - 5,)),
    (up_to, (5, 12)),
    (up_to, (2**63 - 5, 2**63 - 1)),
    (doubling, (3, 5)),
    (doubling, (-(2**61), 2)),  # -2**63 fits in int64
    (doubling, (2**61, 2)),  # 2**63 does not
    (doubling, (3, 70)),
    (summing, (3, 5)),
    (summing, (2**61, 3)),
    (negating, (-5, 3)),
    (negating, (-(2**63), 1)),
    (compare, (3, 3.0)),
    (compare, (2**53 + 1, float(2**53))),  # Python compares exactly (XLA: the int rounded)
    (compare, (-(2**53) - 1, -float(2**53))),
    (int_divide, (7, -2)),
    (int_divide, (-(2**63), -1)),  # Python's 2 ** 63 (XLA's wrapped around)
    (float_mod, (-0.0, 2.0)),  # Python's 0.0 and -0.0 (XLA's -0.0 and 0.0)
    (float_mod, (-4.0, 2.0)),
    (float_mod, (4.0, -2.0)),
    (float_mod, (np.array([-0.0, 4.0, -4.0, 0.0, -2.0]), np.array([2.0, -2.0, 2.0, -5.0, -5.0]))),
    (float_mod, (np.array([-0.0, -4.0], np.float32), np.float32(2.0))),
    (scale, (np.ones(2, np.float32),)),  # float32 (machine code computed x * 0.1 in float64)
    (of_0d, (np.array(2.0),)),  # NumPy scalars (machine code's were Python floats)
    (mod_in_loop, (4.0, 5)),
    (log_in_loop, (2.5, 5)),  # ValueError at the user's line, in the loop
    (raise_in_loop, (3, 10)),
    (raise_in_loop, (3.0, 3)),
    (early_return, (1.1, 3)),
    (past_int32, (np.int32(5),)),  # NumPy's OverflowError (XLA wrapped the constant around)
    (past_int32, (np.array([1, 2], np.int32),)),
    (mixed_int32, (np.int32(5), 3)),
    (mixed_int32, (np.int32(5), 2**31)),  # an argument past int32: NumPy's OverflowError
    (mixed_int32, (np.array([1, 2], np.int32), -(2**31) - 1)),
    (mixed_int32, (np.uint8(5), -1)),
    # A negative exponent of NumPy integers: NumPy's ValueError (XLA's power returned garbage);
    # exponents of 64 and more: XLA's multiplied six squares only, NumPy's wraps around.
    (int_power, (3, np.array([3, -4], np.int32))),
    (int_power, (3, np.array([3, 4], np.int32))),
    (int_power, (70, np.array([3, 5], np.int32))),
    (int_power, (-1, np.int8(3))),
    (int_power, (300, np.int8(3))),  # 300 is past int8: NumPy's OverflowError
    (powers_in_loop, (np.array([2, 3], np.int64), 4)),
    (powers_in_loop, (np.array([2, 3], np.int64), 1)),
    # A Python int past a narrower dtype in & | ^, maximum, minimum, clip: NumPy's
    # OverflowError (XLA wrapped it around: -2 & uint8 was ``254 & x``).
    (bitwise_with_int, (-2, np.array([250, 3], np.uint8))),
    (bitwise_with_int, (300, np.int8(5))),
    (bitwise_with_int, (6, np.array([250, 3], np.uint8))),
    (named_bitwise_with_int, (300, np.array([250, 3], np.uint8))),  # NumPy's OverflowError
    (named_bitwise_with_int, (3, np.array([250, 3, 9], np.uint8))),  # shifts past the width: 0
    (named_bitwise_with_int, (-2, np.int8(7))),  # right_shift(-2, 7) is -1, left_shift by -2 0
    (clip_to_int, (np.array([250, 3], np.uint8), 300)),  # NumPy clips to 255 here
    (clip_to_int, (np.array([250, 3], np.uint8), -1)),  # and raises here
    (clip_to_int, (np.array([250, 3], np.uint8), 7)),
    # Floats out of an integer's range cast to it: the host's NumPy values (x86: -3.5 is 253
    # as uint8, NaN the most negative int32); XLA's saturated (0, 255) and made NaN 0.
    (casts_to_ints, (np.array(OUT_OF_RANGE),)),
    (casts_to_ints, (np.array(OUT_OF_RANGE, np.float32),)),
    (signs, (np.array([-0.0, 0.0, np.nan, -2.0]), -0.0)),  # NumPy's 0.0 (XLA's -0.0)
    (signs, (np.array([-0.0, 3.0], np.float32), np.float32(-0.0))),
]


def closure_in_broken_loop(x, y):
    def g(a):
        return a * y

    for _ in range(3):
        if x > 5.0:
            break
        x = g(x)
    return x


def float_of_a_carried_sum(w, b, x):
    for _ in range(2):
        x = w * x
        b = b + float(np.sum(x))
    return b


GRADIENTS = [
    # The start values of `x` (an argument) were read as one row, `x`'s first: the loop left
    # out their push (they are the end values one iteration behind, `jax_lags`) and passed
    # the buffer on, which made it look like an argument's broadcast row (`rt.uniform`).
    (float_of_a_carried_sum, (np.array([0.5, -0.3]), 0.2, np.array([1.0, 2.0]))),
    (closure_in_broken_loop, (0.3, -0.7)),  # XLA's gradient was 0: `y` read as a placeholder
    (early_return, (1.1, 3)),
    (early_return, (1.1, 30)),
    (mod_in_loop, (4.5, 5)),
]


def outcome(f, args):
    """``f(*args)``, or its error as the user sees it (class, message, Myia traceback)."""
    try:
        return f(*args)
    except Exception as exc:
        return "".join(traceback.format_exception_only(exc))


def same(got, expected):
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
    elif isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-12)
        assert math.copysign(1, got) == math.copysign(1, expected), (got, expected)
    else:
        assert got == expected


def compiled(make, fn, backend):
    if backend == "native":
        return make(fn, backend=backend, background=False)
    return make(fn, backend=backend)


def _ids(table):
    return [f"{p[0].__name__}-{i}" for i, p in enumerate(table)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", PROGRAMS, ids=_ids(PROGRAMS))
def test_same_as_numpy(fn, args, backend):
    with np.errstate(all="ignore"):
        expected = outcome(myia(fn), args)
        f = compiled(myia, fn, backend)
        for _ in range(2):  # the second call runs what the first compiled
            same(outcome(f, args), expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", GRADIENTS, ids=_ids(GRADIENTS))
def test_same_gradient_as_numpy(fn, args, backend):
    expected = outcome(grad(fn), args)
    g = compiled(grad, fn, backend)
    for _ in range(2):
        same(outcome(g, args), expected)


def test_checks_keep_programs_compiled():
    """Checks, not refusals: an int compared with a float, an int division, a counter's
    loop are still XLA's (and the loop machine code)."""
    assert myia(compare, backend="jax").specialization(3, 3.0).executable.jitted
    assert myia(int_divide, backend="jax").specialization(7, 2).executable.jitted
    x = np.array([3, 4], np.int32)
    for fn, args in [(int_power, (3, x)), (bitwise_with_int, (6, x)), (clip_to_int, (x, 7))]:
        assert myia(fn, backend="jax").specialization(*args).executable.jitted
    for fn, args in [(doubling, (3, 5)), (summing, (3, 5)), (negating, (-5, 3))]:
        assert myia(fn, backend="jax").specialization(*args).executable.jitted
    for args in [(5, 3), (2**63 - 2, 3)]:
        assert myia(counting, backend="jax").specialization(*args).executable.jitted
        f = myia(counting, backend="native", background=False)
        f(*args)
        assert f.specialization(*args).executable.native


def _while_lines(fn, *args):
    text = myia(fn, backend="jax").lowered_text(*args)
    return [line for line in text.splitlines() if "stablehlo.while" in line]


def test_a_counters_check_is_made_after_its_loop():
    """A counter's step past int64 is tested once after the loop, carried by no iteration:
    it wrapped around where it ends on the other side of its start."""
    for fn, args in [(counting, (5, 3)), (counting_down, (5, 2))]:
        (loop,) = _while_lines(fn, *args)
        assert "tensor<i1>" not in loop
    # The loop's own counter (``k <= n``, ``k += 3``) may wrap around and not end the loop:
    # its flag is carried, and ends it.
    (loop,) = _while_lines(up_to, 5, 12)
    assert loop.count("tensor<i1>") == 1
