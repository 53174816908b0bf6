"""Named tuples (`typing.NamedTuple`, `collections.namedtuple`) in a researcher's programs."""

from __future__ import annotations

import collections
from typing import NamedTuple

import numpy as np
import pytest

from myia import grad, myia, tree_leaves, tree_map, value_and_grad, vmap
from myia.errors import MyiaError, MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["debug", "numpy", "jax"]


class Params(NamedTuple):
    w: float
    b: float


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0

    def apply(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale


class Model(NamedTuple):
    first: Layer
    last: Layer


Pair = collections.namedtuple("Pair", ["left", "right"])


def lin(p, x):
    return p.w * x + p.b


def layer(n_in, n_out, seed):
    rng = np.random.default_rng(seed)
    return Layer(rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_namedtuple_argument_read_by_its_fields(backend):
    assert myia(lin, backend=backend)(Params(2.0, 1.0), 3.0) == 7.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_namedtuple_is_a_namedtuple(backend):
    g = myia(grad(lin), backend=backend)(Params(2.0, 1.0), 3.0)
    assert type(g) is Params
    assert g == Params(3.0, 1.0)
    v, g2 = value_and_grad(lin, backend=backend)(Params(2.0, 1.0), 3.0)
    assert v == 7.0 and type(g2) is Params and g2 == Params(3.0, 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_indexing_unpacking_len_and_iteration(backend):
    def f(p, x):
        w, b = p
        total = 0.0
        for v in p:
            total = total + v
        return p[0] * x + p[-1] + w * b + len(p) + total + sum(p) + max(p)

    p = Params(2.0, 1.0)
    assert myia(f, backend=backend)(p, 3.0) == pytest.approx(f(p, 3.0))
    check_grad(f, p, 3.0, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_namedtuple_is_a_tuple(backend):
    def f(p):
        q = Params(1.0, 2.0)
        return (
            tuple(p),
            p + (5.0,),
            p == (2.0, 1.0),
            p == q,
            p < q,
            isinstance(p, tuple),
            isinstance(p, Params),
            p[:1],
            list(p),
            3.0 in p,
            p.count(2.0),
            p.index(1.0),
        )

    p = Params(2.0, 1.0)
    out = myia(f, backend=backend)(p)
    assert out == f(p)
    assert type(out[0]) is tuple and type(out[1]) is tuple and type(out[7]) is tuple


@pytest.mark.parametrize("backend", BACKENDS)
def test_construct_replace_and_return(backend):
    def f(p, x):
        q = Params(b=p.w * x, w=p.b)
        r = q._replace(b=x)
        return q, r, Params(*p), r._asdict(), Params._fields, r._fields

    p = Params(2.0, 1.0)
    q, r, s, d, fields, rfields = myia(f, backend=backend)(p, 3.0)
    assert type(q) is Params and q == Params(1.0, 6.0)
    assert type(r) is Params and r == Params(1.0, 3.0)
    assert type(s) is Params and s == p
    assert d == {"w": 1.0, "b": 3.0}
    assert fields == rfields == ("w", "b")


@pytest.mark.parametrize("backend", BACKENDS)
def test_defaults_and_methods(backend):
    def f(layer_, x):
        wider = Layer(layer_.W, layer_.b)  # scale's default
        return wider.apply(x) + layer_.apply(x)

    lay = layer(3, 2, 0)._replace(scale=0.5)
    x = np.ones((4, 3))
    np.testing.assert_allclose(myia(f, backend=backend)(lay, x), f(lay, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_of_nested_namedtuples_and_its_gradient(backend):
    def loss(model, x, y):
        h = model.first.apply(x)
        out = model.last.apply(h)
        return np.mean((out - y) ** 2)

    model = Model(layer(3, 4, 1), layer(4, 1, 2))
    x = np.random.default_rng(3).standard_normal((5, 3))
    y = np.ones((5, 1))
    g = myia(grad(loss), backend=backend)(model, x, y)
    assert type(g) is Model and type(g.first) is Layer and type(g.last) is Layer
    assert g.first.W.shape == (3, 4) and g.last.b.shape == (1,)
    check_grad(loss, model, x, y, wrt=0, backend=backend)
    # One SGD step, in Python, with the gradient's structure.
    step = tree_map(lambda p, d: p - 0.1 * d, model, g)
    assert type(step) is Model and type(step.first) is Layer
    assert myia(loss, backend=backend)(step, x, y) < myia(loss, backend=backend)(model, x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_namedtuples_inside_tuples_lists_and_collections_namedtuple(backend):
    def f(pairs, ps):
        total = 0.0
        for p in ps:
            total = total + p.w * p.b
        return pairs[0].left * pairs[1].right + total, Pair(pairs[0].right, total)

    pairs = (Pair(1.0, 2.0), Pair(3.0, 4.0))
    ps = [Params(1.0, 2.0), Params(3.0, 4.0)]
    out = myia(f, backend=backend)(pairs, ps)
    assert out == f(pairs, ps) and type(out[1]) is Pair

    def first(pairs, ps):
        return f(pairs, ps)[0]

    g = myia(grad(first), backend=backend)(pairs, ps)
    assert type(g) is tuple and type(g[0]) is Pair and g == (Pair(4.0, 0.0), Pair(0.0, 1.0))
    gs = myia(grad(first, 1), backend=backend)(pairs, ps)
    assert type(gs) is list and all(type(v) is Params for v in gs)
    assert gs == [Params(2.0, 1.0), Params(4.0, 3.0)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_namedtuple_through_a_loop_and_a_branch(backend):
    def f(p, n):
        i = 0
        while i < n:
            p = Params(p.w * 0.5 + p.b, p.b)
            i = i + 1
        if p.w > 1.0:
            p = p._replace(b=p.b * 2.0)
        return p.w + p.b

    p = Params(3.0, 0.5)
    assert myia(f, backend=backend)(p, 4) == pytest.approx(f(p, 4))
    check_grad(f, p, 4, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_inside_myia_code_and_tree_functions(backend):
    def inner(p, x):
        return (p.w * x + p.b) ** 2

    def f(p, x):
        g = grad(inner)(p, x)
        leaves = tree_leaves(g)
        doubled = tree_map(lambda v: 2.0 * v, g)
        return g, leaves, doubled

    p = Params(2.0, 1.0)
    g, leaves, doubled = myia(f, backend=backend)(p, 3.0)
    assert type(g) is Params and g == Params(42.0, 14.0)
    assert tuple(leaves) == (42.0, 14.0)
    assert type(doubled) is Params and doubled == Params(84.0, 28.0)


@pytest.mark.parametrize("backend", ["debug", "numpy"])
def test_vmap_over_a_namedtuple_with_in_axes_of_its_class(backend):
    def f(p, x):
        return p.w * x + p.b

    p = Params(np.arange(3.0), 1.0)
    x = np.ones(3)
    out = myia(vmap(f, in_axes=(Params(0, None), 0)), backend=backend)(p, x)
    np.testing.assert_allclose(out, np.arange(3.0) + 1.0)


def test_the_python_tree_functions_keep_the_class():
    p = Params(1.0, 2.0)
    assert tree_map(lambda v: v * 2, p) == Params(2.0, 4.0)
    assert type(tree_map(lambda v: v * 2, p)) is Params
    assert tree_leaves(Model(Layer(1, 2), Layer(3, 4))) == [1, 2, 1.0, 3, 4, 1.0]


def test_one_compilation_per_signature():
    f = myia(lin)
    f(Params(2.0, 1.0), 3.0)
    f(Params(5.0, 4.0), 1.0)
    assert len(f.compiled_signatures()) == 1
    f(Pair(1.0, 2.0), 3.0) if False else None
    assert "Params(w :: f64, b :: f64)" in str(f.compiled_signatures()[0])


def test_a_missing_field_is_an_error_at_the_users_line():
    def f(p):
        return p.c * 2.0

    with pytest.raises(MyiaTypeError, match="'Params' object has no attribute 'c'") as info:
        myia(f)(Params(1.0, 2.0))
    assert "return p.c * 2.0" in str(info.value)


def test_misuse_is_a_myia_error():
    def too_few(p):
        return Params(p.w)

    def bad_replace(p):
        return p._replace(c=1.0)

    def bad_index(p):
        return p[2]

    def bad_unpack(p):
        a, b, c = p
        return a

    for fn, line in [
        (too_few, "return Params(p.w)"),
        (bad_replace, "return p._replace(c=1.0)"),
        (bad_index, "return p[2]"),
    ]:
        with pytest.raises(MyiaError) as info:
            myia(fn)(Params(1.0, 2.0))
        assert line in str(info.value)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        myia(bad_unpack)(Params(1.0, 2.0))


def test_dataclasses_is_dataclass_is_false_for_a_namedtuple():
    import dataclasses

    def f(p):
        return dataclasses.is_dataclass(p)

    assert myia(f)(Params(1.0, 2.0)) is False


# Saving and the disk cache --------------------------------------------------------------------

PROGRAM = """
from typing import NamedTuple
import numpy as np

class Params(NamedTuple):
    w: float
    b: float = 0.5

    def predict(self, x):
        return self.w * x + self.b

def loss(p, x):
    w, _ = p
    return (p.predict(x) - 1.0) ** 2 + 0.0 * w * len(p) * p[1]

def main():
    import myia
    return list(myia.grad(loss)(Params(2.0), 3.0))
"""

RUN = """
import json
from myia import disk_cache
import prog
out = prog.main()
print(json.dumps({"out": out, "stats": disk_cache.STATS}))
"""


def _run(workdir, source=None):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    if source is not None:
        (workdir / "prog.py").write_text(source)
    root = Path(__file__).resolve().parent.parent
    env = dict(
        os.environ,
        PYTHONPATH=f"{root}{os.pathsep}{workdir}",
        MYIA_CACHE_DIR=str(workdir / "cache"),
        MYIA_CACHE_PROGRAMS="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    proc = subprocess.run(
        [sys.executable, "-c", RUN], env=env, cwd=workdir, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_disk_cache_checks_the_namedtuple_class(tmp_path):
    first = _run(tmp_path, PROGRAM)
    assert first["out"] == [2 * 5.5 * 3.0, 2 * 5.5] and first["stats"]["store"] == 1
    assert _run(tmp_path)["stats"]["hit"] == 1
    # A new default or a changed method is another program.
    changed = _run(tmp_path, PROGRAM.replace("b: float = 0.5", "b: float = 1.5"))
    assert changed["stats"]["hit"] == 0 and changed["out"] == [2 * 6.5 * 3.0, 2 * 6.5]
    changed = _run(tmp_path, PROGRAM.replace("self.w * x + self.b", "self.w * x"))
    assert changed["stats"]["hit"] == 0 and changed["out"] == [2 * 5.0 * 3.0, 0.0]


def test_save_and_load_a_gradient_of_a_namedtuple(tmp_path):
    import myia

    def loss(p, x):
        return (p.w * x + p.b) ** 2

    path = tmp_path / "loss.json"
    myia.save(grad(loss), str(path), Params(2.0, 1.0), 3.0)
    g = myia.load(str(path))(Params(2.0, 1.0), 3.0)
    assert type(g) is Params and g == Params(42.0, 14.0)
