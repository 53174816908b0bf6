"""``vmap`` batches the typed graph: compared with a Python loop of ``f``, with JAX, on backends.

Each function is run batched inside Myia code on the generated-code backend and on the
reference interpreter's; where the batched graph must have no loop over the examples, the
generated code is checked for one.
"""

import importlib.util
from dataclasses import dataclass

import numpy as np
import pytest

from myia import grad, hessian, jacfwd, jacrev, myia, vmap
from myia.errors import MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"] + (["jax"] if importlib.util.find_spec("jax") else [])
RNG = np.random.default_rng(0)
W = RNG.normal(size=(3, 2))
XS = RNG.normal(size=(5, 3))


def _loop(f, in_axes, args, out_axis=0):
    """``f`` on each example of `args`, stacked (the specification of vmap)."""
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    rows = [
        f(*(a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)))
        for i in range(n)
    ]
    if isinstance(rows[0], tuple):
        return tuple(np.stack(col, axis=out_axis) for col in zip(*rows))
    return np.stack(rows, axis=out_axis)


def _close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _batched(fn, backend, *args, loop_free=True):
    """``fn(*args)`` compiled for `backend`; with the numpy backend, checks it has no loop."""
    f = myia(fn, backend=backend)
    out = f(*args)
    if backend == "numpy" and loop_free:
        src = f.generated_code(*args)
        assert "while" not in src and "for " not in src, src
    return out


def elementwise(u, v):
    return np.tanh(u) * v + np.sum(u * u) - 1.0


def mat(u, w):
    return np.sin(u @ w), w.T @ u, u @ u


def reductions(m):
    return np.max(m, axis=0) + np.sum(m, axis=1)[:, None].T[0, 0], np.mean(m)


def branch(x):
    if x > 0.5:
        y = x * 2.0
    else:
        y = np.sin(x) - 1.0
    return y + 1.0


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-10 * a:
        x = 0.5 * (x + a / x)
    return x


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_with_an_unbatched_operand(backend):
    v = RNG.normal(size=3)
    got = _batched(lambda a, b: vmap(elementwise, in_axes=(0, None))(a, b), backend, XS, v)
    _close(got, _loop(elementwise, (0, None), (XS, v)))
    # a per-example scalar against a per-example vector (ranks aligned past the batch axis)
    s = RNG.normal(size=5)
    got = _batched(lambda a, b: vmap(lambda x, t: x * t + t)(a, b), backend, XS, s)
    _close(got, _loop(lambda x, t: x * t + t, (0, 0), (XS, s)))


def keyed(x, y, k=3.0, z=1.0):
    return np.tanh(x) * y + k * z


def keyed_loss(w):
    return np.sum(vmap(keyed)(w, z=w[:, 0], y=w))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_keywords_are_batched_on_axis_0_as_at_the_top_level(backend):
    """``vmap(g)(x, y=...)`` in Myia code: in_axes are the positional ones, keywords axis 0."""
    if backend == "jax":
        pytest.importorskip("jax")
    ys, zs = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    loop = _loop(lambda x, y, z: keyed(x, y, z=z), (0, 0, 0), (XS, ys, zs))
    got = _batched(lambda a, b, c: vmap(keyed)(a, z=c, y=b), backend, XS, ys, zs)
    _close(got, loop)
    _close(vmap(keyed)(XS, z=zs, y=ys), loop)  # the same at the top level
    # in_axes: the positional arguments' (here the batch of x on axis 1); k: its default
    f = lambda a, b, c: vmap(keyed, in_axes=(1,))(a, y=b, z=c)  # noqa: E731
    _close(_batched(f, backend, XS.T, ys, zs), loop)
    f = lambda a, b, c: vmap(keyed, in_axes=(None, 0))(a, b, k=2.0 * c, z=c)  # noqa: E731
    want = _loop(lambda y, c: keyed(XS[0], y, 2.0 * c, z=c), (0, 0), (ys, zs))
    _close(_batched(f, backend, XS[0], ys, zs), want)
    if backend == "numpy":
        check_grad(keyed_loss, XS)
    with pytest.raises(MyiaTypeError, match="in_axes has 2 entries for 1 positional"):
        myia(lambda a: vmap(keyed, in_axes=(0, 0))(a, y=a, z=a), backend=backend)(XS)
    # ``**kwargs``: a dict of the keywords, each batched on axis 0; ``*args``: refused.
    _close(vmap(lambda x, **kw: x * kw["y"])(XS, y=XS), XS * XS)
    with pytest.raises(MyiaTypeError, match="taking \\*args cannot be batched"):
        vmap(lambda x, *a: x * a[0])(XS, y=XS)


def kwonly(x, *, y, z=2.0):
    return np.tanh(x) * y + z


def kwonly_loss(w):
    return np.sum(vmap(kwonly)(w, y=np.sin(w))) + np.sum(vmap(kwonly)(w, z=w, y=w))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_keyword_only_parameters_are_batched_on_axis_0(backend):
    """As JAX's: keyword-only arguments given are batched on axis 0, their defaults are not."""
    if backend == "jax":
        pytest.importorskip("jax")
    ys, zs = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    loop = _loop(lambda x, y, z: kwonly(x, y=y, z=z), (0, 0, 0), (XS, ys, zs))
    loop2 = _loop(lambda x, y: kwonly(x, y=y), (0, 0), (XS, ys))
    _close(_batched(lambda a, b, c: vmap(kwonly)(a, z=c, y=b), backend, XS, ys, zs), loop)
    _close(_batched(lambda a, b: vmap(kwonly)(a, y=b), backend, XS, ys), loop2)
    _close(vmap(kwonly)(XS, z=zs, y=ys), loop)  # the same at the top level
    _close(vmap(kwonly)(XS, y=ys), loop2)
    # in_axes: the positional arguments' (here x is not batched)
    got = _batched(lambda a, b: vmap(kwonly, in_axes=None)(a, y=b), backend, XS[0], ys)
    _close(got, _loop(lambda y: kwonly(XS[0], y=y), (0,), (ys,)))
    # a closure: its variables are not batched
    f = lambda a, b, s: vmap(lambda x, *, y: kwonly(x, y=y * s))(a, y=b)  # noqa: E731
    _close(
        _batched(f, backend, XS, ys, 2.0),
        _loop(lambda x, y: kwonly(x, y=2.0 * y), (0, 0), (XS, ys)),
    )
    if backend == "numpy":
        check_grad(kwonly_loss, XS)
    with pytest.raises(MyiaTypeError, match="missing required argument 'y'"):
        myia(lambda a: vmap(kwonly)(a), backend=backend)(XS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_and_reductions(backend):
    got = _batched(lambda a, w: vmap(mat, in_axes=(0, None))(a, w), backend, XS, W)
    _close(got, _loop(mat, (0, None), (XS, W)))
    ms = RNG.normal(size=(4, 3, 2))
    got = _batched(lambda m: vmap(reductions)(m), backend, ms)
    _close(got, _loop(reductions, (0,), (ms,)))


def test_in_axes_out_axes_and_nested_vmap():
    a = RNG.normal(size=(3, 4))
    got = vmap(lambda u: u * 2.0 + np.sum(u), in_axes=1, out_axes=1)(a)
    _close(got, _loop(lambda u: u * 2.0 + np.sum(u), (1,), (a,), out_axis=1))
    m = RNG.normal(size=(2, 3, 4))
    got = _batched(lambda m: vmap(vmap(lambda u: np.sum(u * u)))(m), "numpy", m)
    _close(got, (m * m).sum(-1))
    got = vmap(vmap(lambda u, w: u @ w, in_axes=(0, None)), in_axes=(0, None))(m, a.T)
    _close(got, m @ a.T)


def test_against_jax_vmap():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        want = jax.vmap(lambda u, w: jax.numpy.sin(u @ w), in_axes=(0, None))(XS, W)
        want_t = jax.vmap(lambda u: u * 2.0, in_axes=1, out_axes=1)(XS)
        want_g = jax.vmap(
            jax.grad(lambda w, x: jax.numpy.sum(jax.numpy.tanh(x @ w) ** 2)), in_axes=(None, 0)
        )(W, XS)
    _close(vmap(lambda u, w: np.sin(u @ w), in_axes=(0, None))(XS, W), np.asarray(want))
    _close(vmap(lambda u: u * 2.0, in_axes=1, out_axes=1)(XS), np.asarray(want_t))
    _close(vmap(grad(loss), in_axes=(None, 0))(W, XS), np.asarray(want_g))


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_gradients(backend):
    got = _batched(lambda w, x: vmap(grad(loss), in_axes=(None, 0))(w, x), backend, W, XS)
    assert got.shape == (5, 3, 2)
    _close(got, _loop(grad(loss), (None, 0), (W, XS)))
    for i in range(2):  # each example's gradient against finite differences
        check_grad(loss, W, XS[i], wrt=0)


def test_gradient_of_a_vmap_against_finite_differences():
    check_grad(lambda a: np.sum(vmap(lambda u: np.sum(np.sin(u) * u))(a) ** 2), XS[:3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_branch_on_a_batched_value_selects_per_example(backend):
    xs = np.array([0.1, 0.7, 2.0, 0.3, -1.0])
    got = _batched(lambda a: vmap(branch)(a), backend, xs)
    _close(got, _loop(branch, (0,), (xs,)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_with_a_trip_count_per_example(backend):
    a = np.array([0.5, 4.0, 1e6, 2.0, 30.0])
    f = myia(lambda a: vmap(newton_sqrt)(a), backend=backend)
    _close(f(a), _loop(newton_sqrt, (0,), (a,)))
    if backend == "numpy":
        src = f.generated_code(a)
        # one loop, over the batch at once, not one per example
        assert src.count("while") == 1 and "vmap_loop" not in src, src
    # the gradient of the batched loop, not a loop over the examples
    g = myia(lambda a: vmap(grad(newton_sqrt))(a), backend=backend)
    _close(g(a), 0.5 / np.sqrt(a))
    if backend == "numpy":
        assert "vmap_loop" not in g.generated_code(a)


def scaled(w, x):
    y = x
    while np.abs(y) > 1.0:
        y = y * w
    return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_example_gradients_of_a_loop_wrt_an_unbatched_argument(backend):
    xs = np.array([3.0, 0.5, 10.0, -4.0])
    f = myia(lambda w, xs: vmap(grad(scaled, 0, 1), in_axes=(None, 0))(w, xs), backend=backend)
    got = f(0.5, xs)
    _close(got, _loop(grad(scaled, 0, 1), (None, 0), (0.5, xs)))
    if backend == "numpy":
        assert "vmap_loop" not in f.generated_code(0.5, xs)
    for x in xs[:2]:
        check_grad(scaled, 0.5, x)


def test_a_primitive_without_a_rule_runs_per_example():
    xs = RNG.normal(size=(4, 3))
    got = vmap(lambda u: np.cumsum(u) * 2.0)(xs)
    _close(got, np.cumsum(xs, axis=1) * 2.0)


def test_lists_cannot_be_batched():
    with pytest.raises(MyiaTypeError, match="list"):
        myia(lambda n: vmap(lambda x: [x] * n)(np.ones(3)))(2)
    with pytest.raises(MyiaTypeError, match="list"):
        vmap(lambda xs: xs[0], in_axes=0)([np.ones(2), np.ones(3)])


def test_batches_of_different_sizes_are_type_errors():
    with pytest.raises(MyiaTypeError, match="different sizes"):
        vmap(lambda t: t[0] + t[1])((np.ones(2), np.ones(3)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_closure_is_batched_with_the_values_it_reads_unbatched(backend):
    def fn(xs, k, w):
        def f(x):
            return np.tanh(x @ w) * k

        return vmap(f)(xs)

    got = _batched(fn, backend, XS, 2.0, W)
    _close(got, np.tanh(XS @ W) * 2.0)
    check_grad(lambda xs, k, w: np.sum(vmap(lambda x: np.tanh(x @ w) * k)(xs)), XS, 2.0, W)


def test_a_loop_state_untouched_by_the_batch_stays_unbatched():
    a = np.array([0.5, 4.0, 9.0])
    f = myia(lambda a: vmap(newton_sqrt)(a))
    _close(f(a), np.sqrt(a))
    # only `x` changes: `a` is not selected per example (where(c, a, a) => a); the body's
    # arguments are, for the examples that are done (by the first that is not's)
    selects = [ln for ln in f.generated_code(a).splitlines() if "where(" in ln]
    assert len([ln for ln in selects if "array_getitem" not in ln]) == 1, selects


@dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray


def layer_loss(layer, x):
    return np.sum(np.tanh(x @ layer.w + layer.b) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_records_are_batched_by_their_fields(backend):
    layer = Layer(W, np.ones(2))
    got = _batched(
        lambda p, x: vmap(grad(layer_loss), in_axes=(None, 0))(p, x), backend, layer, XS
    )
    want = [grad(layer_loss)(layer, x) for x in XS]
    _close(got.w, np.stack([g.w for g in want]))
    _close(got.b, np.stack([g.b for g in want]))
    layers = Layer(np.stack([W, 2 * W]), np.ones((2, 2)))
    got = _batched(lambda p, x: vmap(layer_loss, in_axes=(0, None))(p, x), backend, layers, XS[0])
    _close(
        got, [layer_loss(Layer(W, np.ones(2)), XS[0]), layer_loss(Layer(2 * W, np.ones(2)), XS[0])]
    )


def test_gradients_through_a_batched_loop_and_branch():
    check_grad(lambda a: np.sum(vmap(newton_sqrt)(a)), np.array([0.5, 4.0, 9.0, 30.0]))
    check_grad(lambda a: np.sum(vmap(branch)(a) ** 2), np.array([0.1, 0.7, 2.0, 0.3]))


def test_the_per_example_loop_keeps_each_example_to_itself():
    # an infinity in one example's result does not reach the others' (no masked sums)
    xs = np.array([[1.0, 2.0], [0.0, 1.0], [4.0, 1.0]])
    with np.errstate(divide="ignore"):
        want = np.cumsum(1.0 / xs, axis=1)
        got = vmap(lambda u: np.cumsum(1.0 / u))(xs)
    _close(got, want)
    # the gradient of a function run once per example, against finite differences
    check_grad(lambda a: np.sum(vmap(lambda u: np.cumsum(u * u))(a)), xs + 1.0)
    a = np.array([0.5, 4.0, 9.0])
    _close(vmap(grad(newton_sqrt))(a), 0.5 / np.sqrt(a))


def test_axes_per_element_of_a_tuple():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))

    def f(pair, s):
        return pair[0] * s, np.sum(pair[1]) * s

    got = vmap(f, in_axes=((1, 0), None), out_axes=(1, 0))((a, b), 2.0)
    want = _loop(lambda u, v: f((u, v), 2.0), (1, 0), (a, b))
    _close(got, (want[0].T, want[1]))
    with pytest.raises(MyiaTypeError, match="do not match"):
        vmap(f, in_axes=((1, 0, 0), None))((a, b), 2.0)


def test_an_axis_out_of_range_is_a_type_error_at_the_call():
    def f(xs):
        return vmap(lambda x: x * 2.0, in_axes=2)(xs)  # the vmap call

    with pytest.raises(MyiaTypeError, match="in_axes 2 is not an axis") as info:
        myia(f)(np.ones((2, 3)))
    assert any("test_vmap.py" in str(fr.location) for fr in info.value.frames)


@pytest.mark.parametrize("backend", BACKENDS)
def test_einsum(backend):
    def f(u, w):
        return np.einsum("i,ij->j", u, w) + np.einsum("ij,ij", w, w)

    got = _batched(lambda a, w: vmap(f, in_axes=(0, None))(a, w), backend, XS, W)
    _close(got, _loop(f, (0, None), (XS, W)))
    ws = np.stack([W, 2 * W, 3 * W])
    got = _batched(lambda a, w: vmap(f, in_axes=(None, 0))(a, w), backend, XS[0], ws)
    _close(got, _loop(f, (None, 0), (XS[0], ws)))


def power_sum(w, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + w**i
        i = i + 1
    return s


def with_power_sum(x, w, n):
    return x * power_sum(w, n) + power_sum(x, n)


def _mapped_power_sum(axes):
    return lambda xs, n: vmap(with_power_sum, in_axes=axes)(xs, 0.3, n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loops_with_a_batched_or_an_unbatched_trip_count(backend):
    xs, ns = np.array([0.5, 1.5, 2.0]), np.array([1, 3, 5])
    for axes, n in (((0, None, None), 4), ((0, None, 0), ns)):
        f = myia(_mapped_power_sum(axes), backend=backend)
        _close(f(xs, n), _loop(with_power_sum, axes, (xs, 0.3, n)))
        if backend == "numpy":  # loops over the batch at once, not over the examples
            assert "vmap_loop" not in f.generated_code(xs, n)


def safe_sqrt(x):
    if x > 0.0:
        return np.sqrt(x)
    return 0.0 * x


def lookup(x, i):
    if i < 3:
        return x[i] * 2.0
    return -1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_side_of_a_branch_sees_only_its_own_examples(backend):
    xs = np.array([0.0, 4.0, -1.0, 9.0])
    # the derivative of sqrt at 0 is not computed where the example does not take that side
    f = myia(lambda xs: grad(lambda xs: np.sum(vmap(safe_sqrt)(xs)))(xs), backend=backend)
    with np.errstate(all="raise"):
        _close(f(xs), [0.0, 0.25, 0.0, 1.0 / 6.0])
    _close(vmap(grad(safe_sqrt))(xs), [0.0, 0.25, 0.0, 1.0 / 6.0])
    # an index out of range on the side an example does not take is never used
    is_ = np.array([0, 5, 2, 7])
    g = myia(lambda x, is_: vmap(lookup, in_axes=(None, 0))(x, is_), backend=backend)
    _close(g(np.arange(3.0), is_), [0.0, -1.0, 4.0, -1.0])
    # every example on one side: only that side runs
    _close(g(np.arange(3.0), np.array([0, 1])), [0.0, 2.0])


def _per_example_jacobians(x, c):
    return (
        vmap(jacfwd(lambda v: np.tanh(v * c)))(x),
        vmap(jacrev(lambda v: np.tanh(v * c)))(x),
        vmap(hessian(lambda v: np.sum(np.tanh(v * c) ** 2)))(x),
    )


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_vmap_of_a_jacobian_of_a_closure(backend):
    # jacfwd(f) of a closure is a closure taking *args: its specialization takes them as one
    # tuple, which its free variables (lifted) follow. Batched, the arguments were passed
    # one by one ("tuple indexing expects a tuple", with no user line).
    x = np.array([[0.3, 0.7], [0.1, 0.2]])
    got = myia(_per_example_jacobians, backend=backend)(x, 2.0)
    for i, row in enumerate(x):
        d = 2.0 * (1.0 - np.tanh(2.0 * row) ** 2)
        np.testing.assert_allclose(got[0][i], np.diag(d), rtol=1e-12)
        np.testing.assert_allclose(got[1][i], np.diag(d), rtol=1e-12)
    t = np.tanh(2.0 * x)
    np.testing.assert_allclose(
        np.diagonal(got[2], axis1=1, axis2=2), 8.0 * (1 - t**2) * (1 - 3 * t**2), rtol=1e-10
    )
    if backend == "numpy":
        check_grad(lambda x, c: np.sum(_per_example_jacobians(x, c)[0] ** 2), x, 2.0)
