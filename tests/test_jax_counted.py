"""Counted loops on the JAX backend: loops whose trip count is known when traced.

A ``for`` loop over a range of known bounds, and the backward loop of its gradient, run as
``lax.fori_loop`` with their trip counts (`myia.compile.jax_counted`); every other loop as
``lax.while_loop``. Both give the NumPy backend's results.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.rnn import rnn_loss
from myia import MyiaShapeError, grad, myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")

import myia.compile.jax_counted as counted_loops  # noqa: E402


@pytest.fixture
def trips(monkeypatch):
    """The trip counts of the loops traced (None: a ``while_loop``)."""
    seen: list = []
    traced = counted_loops.traced

    def spy(*args):
        out = traced(*args)
        seen.append(out[2])
        return out

    monkeypatch.setattr(counted_loops, "traced", spy)
    return seen


def stepped(x, start, stop, step):
    y = x
    for i in range(start, stop, step):
        y = y * 0.9 + np.sin(y) * i
    return y


def down_to(x, n):
    i = n
    while i != 0:
        x = x * 1.1 + 0.5
        i = i - 1
    return x


def by_value(x):
    while x < 10.0:
        x = x * 1.5 + 0.1
    return x


def divides(x, n):
    y = x
    for i in range(n):
        y = y + 1.0 / (x - i)
    return y


rng = np.random.default_rng(0)
RNN = (
    rng.standard_normal((90, 3, 2)),
    rng.standard_normal((2, 4)) / 2,
    rng.standard_normal((4, 4)) / 2,
    np.zeros(4),
)


def test_a_loop_and_its_backward_loop_are_counted(trips):
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax")
    got = g(*RNN)
    expected = grad(rnn_loss, "Wx", "Wh", "b", backend="numpy")(*RNN)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert g.specialization(*RNN).executable.jitted
    # The forward loop (its first iteration peeled) and the backward loop, traced again when
    # 90 iterations overflow the stacks' first capacity.
    assert trips and all(n in (89, 90) for n in trips), trips


def test_gradient_of_a_long_counted_loop_checks():
    check_grad(rnn_loss, *RNN, wrt=("Wx", "Wh", "b"), backend="jax")


@pytest.mark.parametrize(
    "start,stop,step", [(0, 7, 1), (3, 3, 1), (5, 1, 1), (10, -3, -3), (1, 20, 4), (-2, 9, 5)]
)
def test_ranges(start, stop, step):
    args = (0.3, start, stop, step)
    assert myia(stepped, backend="jax")(*args) == pytest.approx(stepped(*args), rel=1e-12)
    expected = grad(stepped, "x", backend="numpy")(*args)
    assert grad(stepped, "x", backend="jax")(*args) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", [0, 1, 6])
def test_a_counter_down_to_zero(n):
    assert myia(down_to, backend="jax")(0.5, n) == pytest.approx(down_to(0.5, n), rel=1e-12)
    expected = grad(down_to, "x", backend="numpy")(0.5, n)
    assert grad(down_to, "x", backend="jax")(0.5, n) == pytest.approx(expected, rel=1e-12)


def test_value_dependent_loops_are_not_counted(trips):
    assert myia(by_value, backend="jax")(0.5) == pytest.approx(by_value(0.5))
    assert grad(by_value, backend="jax")(0.5) == pytest.approx(
        grad(by_value, backend="numpy")(0.5), rel=1e-12
    )
    assert None in trips


def test_an_error_in_a_counted_loop_is_raised_at_its_line():
    f = myia(divides, backend="jax")
    assert f(10.5, 3) == pytest.approx(divides(10.5, 3))
    with pytest.raises(ZeroDivisionError):
        f(2.0, 5)


# Statuses known when tracing -----------------------------------------------------------------
#
# After each call the status (an error flagged, the stack size needed) is read back from the
# device: a wait for the whole computation. Where it is known when tracing, there is none.


def _status(f, *args):
    ex = f.specialization(*args).executable
    with ex.backend.context():
        return ex.fn(ex.capacity, *ex._leaves(args))[1]


def test_a_gradient_of_known_sizes_and_indices_reads_no_status_back():
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax", keep_on_device=True)
    got = g(*RNN)  # 90 rows: past the stacks' first capacity, then traced again
    expected = grad(rnn_loss, "Wx", "Wh", "b", backend="numpy")(*RNN)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12, atol=1e-14)
    assert _status(g, *RNN) is None
    # 90 rows, known when tracing: traced for 128 at once, compiled once.
    assert g.specialization(*RNN).executable.capacities == [128]


def test_the_text_of_a_program_whose_stacks_outgrow_the_first_capacity():
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax")
    assert "stablehlo" in g.lowered_text(*RNN)
    assert g.specialization(*RNN).executable.capacity == 128


def powers(x, n):
    y = x
    for _ in range(n):
        y = y * x
    return y


def test_a_loop_of_unknown_trip_count_grows_its_stacks_from_its_status():
    g = grad(powers, "x", backend="jax", keep_on_device=True)
    assert g(1.01, 100) == pytest.approx(101 * 1.01**100, rel=1e-12)
    assert _status(g, 1.01, 100) is not None


def past_the_end(x):
    s = 0.0
    for t in range(x.shape[0] + 1):
        s = s + np.sum(x[t])
    return s


def test_an_index_known_out_of_bounds_still_raises():
    for options in ({}, {"keep_on_device": True}):
        with pytest.raises(IndexError, match="index 3 is out of bounds"):
            myia(past_the_end, backend="jax", **options)(np.ones((3, 2)))


def wraps(x, n):
    j = 0
    for _ in range(n):
        j = j + 2**62
    return x * j


def test_a_counter_known_past_int64_is_still_flagged():
    # Myia's ints are Python's: the call runs on the host, where 4 * 2**62 does not wrap.
    assert myia(wraps, backend="jax")(1.0, 4) == wraps(1.0, 4) == 2.0**64


def branches(x):
    return x * x if x > 0 else -x


def test_branches_that_flag_nothing_leave_no_status():
    g = grad(branches, backend="jax")
    assert g(3.0) == 6.0 and g(-3.0) == -1.0
    assert g.specialization(3.0).executable.packed == "packed"


def test_on_a_gpu_only_programs_with_loops_take_cuda_graphs_of_any_size():
    # XLA launches a loop body of fewer than 5 kernels one by one (rnn's primal on an H200:
    # 10.8 ms, 5.0 ms as one CUDA graph per iteration); a straight-line program is slower so.
    from types import SimpleNamespace

    from myia.compile.jax_backend import JaxExecutable

    gpu, cpu = (SimpleNamespace(backend=SimpleNamespace(cpu=c)) for c in (False, True))
    loop, straight = "s = jax_while(cond, body, s, types)", "y = np.tanh(x @ W)"
    assert JaxExecutable._options(gpu, loop) == {"xla_gpu_graph_min_graph_size": "1"}
    assert JaxExecutable._options(gpu, straight) is None
    assert JaxExecutable._options(cpu, loop) is None
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax")
    g(*RNN)
    assert "jax_while(" in g.specialization(*RNN).executable.jax_source


def one_step_ahead(x, h):
    for t in range(x.shape[0]):
        h = h * 0.9 + np.sum(x[t + 1])
    return h


def test_an_index_made_constant_by_the_optimizer_is_still_checked():
    # One iteration: the optimizer peels it, and ``x[t + 1]`` is ``x[1]``, a constant index
    # (found by differential fuzzing against the NumPy backend). The range's bounds are
    # known (0, 1, 1): the gradient's inference sees the constant index, out of bounds in
    # the one iteration that certainly runs, and says so at compile time, as for ``x[1]``.
    for options in ({}, {"keep_on_device": True}):
        with pytest.raises(IndexError, match="index 1 is out of bounds for axis 0 with size 1"):
            myia(one_step_ahead, backend="jax", **options)(np.ones((1, 3)), 0.5)
        with pytest.raises(MyiaShapeError, match="index 1 is out of bounds"):
            grad(one_step_ahead, "h", backend="jax", **options)(np.ones((1, 3)), 0.5)
    # In bounds, the constant index leaves no status to read back.
    f = myia(lambda x, h: h * np.sum(x[0 + 1]), backend="jax")
    assert f(np.ones((2, 3)), 0.5) == 1.5


def breaks_at(x, h, k):
    for t in range(k):
        h = h * 0.9 + np.sum(x[t]) * 0.1
        if t == 3:
            break
    return h


def test_loops_after_an_error_do_not_run():
    # The forward loop stops at x[2]'s error; the backward loop, from the state it left,
    # counted down past zero (2 ** 64 iterations: the call never returned). Found by
    # differential fuzzing against the NumPy backend.
    x = np.arange(6.0).reshape(2, 3)
    for options in ({}, {"keep_on_device": True}):
        g = grad(breaks_at, "h", backend="jax", **options)
        with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
            g(x, 0.5, 5)
        assert float(g(np.ones((5, 3)), 0.5, 5)) == pytest.approx(0.9**4, abs=1e-12)


def doubles_inside(x, h, k):
    for t in range(k):
        s = 0
        while s < 2:
            s = s + 1
            if h > 0:
                h = h * 2.0
        h = h * 0.9 + x[t + 3] * 0.1
    return h


def test_an_error_beside_an_inner_loop_that_branches_is_raised_in_the_gradient():
    # The loop's state held a variable no path had assigned yet (UNSET): reading its
    # ``shape`` raised `Unreachable`, and the whole branch holding the loop was traced as
    # never taken: the gradient returned 0.0 where the NumPy backend raises. Found by
    # differential fuzzing against the NumPy backend.
    g = grad(doubles_inside, "h", backend="jax")
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        g(np.ones(2), 1.7, 5)
    x = np.linspace(-1.0, 1.0, 9)
    assert g(x, 1.7, 5) == pytest.approx(grad(doubles_inside, "h", backend="numpy")(x, 1.7, 5))


def test_an_unassigned_alternative_does_not_hide_the_others():
    # A union whose first alternative is a variable no path has assigned yet (UNSET): the
    # others are still read (its attributes raise Unreachable, which made the whole value
    # unreachable: a branch traced as never taken).
    import jax.numpy as jnp

    from myia.abstract import to_abstract
    from myia.compile import jax_control
    from myia.compile import jax_runtime as rt

    union = rt.Union(jnp.asarray(1), [rt.UNSET, 2.0])
    assert jax_control.resolve(union, to_abstract(1.0)) == 2.0
    with pytest.raises(rt.Unreachable):
        jax_control.resolve(rt.UNSET, to_abstract(1.0))
