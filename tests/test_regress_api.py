"""Regressions of the API: what a function given to `myia`/`grad` is, and how it is called.

Each test is a program written the way a user writes it, compared with plain Python (and
gradients with finite differences).
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from myia import grad, myia, value_and_grad
from myia.testing import check_grad

# Source lookup: a function is parsed from its own code object ----------------------------

inc, dbl = (lambda x: x + 1), (lambda x: x * 2)
sq, neg = lambda x: x * x, lambda x: -x  # noqa: E731
adder = lambda a: lambda b: a + b  # noqa: E731


def two_lambdas_inside(x):
    return inc(x) + dbl(x) * 10


def lambdas_of_a_line(x):
    f, g = (lambda y: y + 1.0), (lambda y: y * 3.0)
    return f(x) * 100.0 + g(x)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_two_lambdas_on_one_line(backend):
    assert myia(dbl, backend=backend)(3) == 6
    assert myia(inc, backend=backend)(3) == 4
    assert myia(neg, backend=backend)(3.0) == -3.0
    assert myia(sq, backend=backend)(3.0) == 9.0
    assert myia(two_lambdas_inside, backend=backend)(3) == two_lambdas_inside(3)
    assert myia(lambdas_of_a_line, backend=backend)(2.0) == lambdas_of_a_line(2.0)
    assert myia(adder(2.0), backend=backend)(5.0) == 7.0


def test_two_lambdas_on_one_line_grad():
    assert grad(dbl)(3.0) == 2.0
    assert grad(neg)(3.0) == -1.0
    assert grad(sq)(3.0) == 6.0
    assert grad(lambdas_of_a_line)(2.0) == 103.0
    check_grad(lambdas_of_a_line, 0.5)


def renamed(x):
    def inner(x):
        return x * 100.0

    return x - 1.0 + 0.0 * inner(x)


def plain(x):
    return x + 0.5


renamed.__name__ = "inner"
renamed.__qualname__ = "inner"
plain.__name__ = "renamed"


def test_renamed_function_is_parsed_from_its_code():
    assert myia(renamed)(3.0) == 2.0
    assert myia(plain)(3.0) == 3.5
    assert grad(renamed)(3.0) == 1.0


# Decorated functions: the wrapper is compiled ---------------------------------------------


def doubled(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(x) * 2.0

    return wrapper


def shifted(by):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(x, y):
            return fn(x + by, y)

        return wrapper

    return deco


@doubled
def plus_one(x):
    return x + 1.0


@doubled
@doubled
def squared(x):
    return x * x


@shifted(1.0)
def mul(x, y):
    return x * y


def squaring(fn):
    # The usual decorator: it passes on whatever it is given.
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) ** 2

    return wrapper


@squaring
def squared_product(x, y):
    return x * y


@functools.lru_cache(maxsize=8)
def cached_half(x):
    return x * 0.5


def calls_decorated(x):
    return plus_one(x) + squared(x) + mul(x, 2.0)


def calls_wrappers(x):
    # A `*args, **kwargs` wrapper called with keywords, and an `lru_cache` function.
    return squared_product(x, 2.0) + squared_product(y=x, x=3.0) + cached_half(x) * x


@myia
def compiled_base(x):
    return x * 3.0


wrapped_compiled = doubled(compiled_base)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_wraps_decorated(backend):
    assert myia(plus_one, backend=backend)(1.0) == plus_one(1.0) == 4.0
    assert myia(squared, backend=backend)(3.0) == squared(3.0) == 36.0
    assert myia(mul, backend=backend)(1.0, 3.0) == mul(1.0, 3.0) == 6.0
    assert myia(calls_decorated, backend=backend)(1.5) == calls_decorated(1.5)
    assert myia(wrapped_compiled, backend=backend)(1.0) == 6.0
    # The wrapper's own signature (*args, **kwargs), not the wrapped function's.
    assert myia(squared_product, backend=backend)(2.0, 3.0) == squared_product(2.0, 3.0) == 36.0
    assert myia(squared_product, backend=backend)(2.0, y=3.0) == 36.0
    assert myia(calls_wrappers, backend=backend)(1.5) == calls_wrappers(1.5)


def test_wraps_with_varargs_grad():
    assert grad(calls_wrappers)(1.5) == pytest.approx(2 * 1.5 * 4.0 + 2 * 1.5 * 9.0 + 1.5)
    check_grad(calls_wrappers, 0.7)


def test_wraps_decorated_grad():
    assert grad(plus_one)(1.0) == 2.0
    assert grad(squared)(3.0) == 24.0
    assert grad(mul, "y")(1.0, 3.0) == 2.0
    check_grad(calls_decorated, 0.7)
    check_grad(mul, 0.3, -1.2)


# Stale globals: a new compilation reads the module as it is now ----------------------------

SCALE = 1.0


def helper(x):
    return x * SCALE


def scaled(x):
    return helper(x) + SCALE


def recursive_a(x, n):
    return x if n == 0 else recursive_b(x * SCALE, n - 1)


def recursive_b(x, n):
    return recursive_a(x + SCALE, n)


class Namespace:
    offset = 1.0


def via_attribute(x):
    return x + Namespace.offset


def test_new_compilation_reads_rebound_globals():
    global SCALE, helper
    old_helper = helper
    try:
        f = myia(scaled)
        assert f(2.0) == 3.0
        SCALE = 2.0
        assert f(2.0) == 3.0  # an existing specialization keeps its constants
        assert myia(scaled)(2.0) == scaled(2.0) == 6.0
        assert grad(scaled)(2.0) == 2.0
        assert myia(recursive_a)(1.0, 2) == recursive_a(1.0, 2)
        SCALE = 3.0
        assert myia(recursive_a)(1.0, 2) == recursive_a(1.0, 2)
        assert grad(recursive_a)(1.0, 2) == 9.0

        def helper(x):  # noqa: F811
            return x - SCALE

        assert myia(scaled)(2.0) == scaled(2.0) == 2.0
        assert grad(scaled)(2.0) == 1.0
        Namespace.offset = 5.0
        assert myia(via_attribute)(1.0) == 6.0
        Namespace.offset = 7.0
        assert myia(via_attribute)(1.0) == 8.0
    finally:
        SCALE = 1.0
        helper = old_helper
        Namespace.offset = 1.0


BAD = "not a number"


def uses_bad(x):
    return x + BAD


def test_error_for_a_bad_global_does_not_persist():
    global BAD
    from myia import MyiaError

    try:
        with pytest.raises(MyiaError):
            myia(uses_bad)(1.0)
        BAD = 2.0
        assert myia(uses_bad)(1.0) == 3.0
        assert grad(uses_bad)(1.0) == 1.0
    finally:
        BAD = "not a number"


grad_of_helper = grad(helper)


def uses_grad_global(x):
    return grad_of_helper(x)


def test_global_gradient_of_a_rebound_helper():
    global SCALE
    try:
        assert myia(uses_grad_global)(1.0) == 1.0
        assert grad_of_helper(1.0) == 1.0
        SCALE = 4.0
        assert myia(uses_grad_global)(1.0) == 4.0
        assert myia(grad_of_helper)(1.0) == 4.0
    finally:
        SCALE = 1.0


def test_unchanged_function_is_not_parsed_again():
    from myia.frontend import parse
    from myia.frontend.cache import new_compilation

    first = parse(recursive_a)
    new_compilation()
    assert parse(recursive_a) is first
    assert parse(recursive_b) is parse(recursive_b)


def test_closures_made_per_call_leave_the_parse_cache():
    """A function no longer referenced (a closure made per step) takes its graph with it."""
    import gc

    from myia.frontend import cache

    def scaled(k):
        def f(x):
            return x * k + 1.0

        return f

    before = len(cache._cache)
    for i in range(20):
        assert myia(scaled(float(i)))(2.0) == 2.0 * i + 1.0
    gc.collect()
    assert len(cache._cache) <= before + 1


# Reflected operators: a method returning NotImplemented passes the turn --------------------


@dataclasses.dataclass
class Meters:
    v: float

    def __add__(self, o):
        if isinstance(o, Meters):
            return Meters(self.v + o.v)
        return NotImplemented

    def __mul__(self, o):
        return NotImplemented

    def __rmul__(self, o):
        return Meters(self.v * o)

    def __lt__(self, o):
        if isinstance(o, Meters):
            return self.v < o.v
        return NotImplemented

    def __eq__(self, o):
        if isinstance(o, Meters):
            return self.v == o.v
        return NotImplemented


@dataclasses.dataclass
class Feet:
    v: float

    def __radd__(self, o):
        return Meters(o.v + self.v * 0.3)

    def __rsub__(self, o):
        return o.v - self.v * 0.3

    def __gt__(self, o):
        return self.v * 0.3 > o.v

    def __rmatmul__(self, o):
        return o.v * self.v

    def __rpow__(self, o):
        return o.v**self.v

    def __rtruediv__(self, o):
        return o.v / self.v

    def __rfloordiv__(self, o):
        return o.v // self.v

    def __rmod__(self, o):
        return o.v % self.v


@dataclasses.dataclass
class Plain:
    v: float

    def __add__(self, o):
        return NotImplemented


def add(a, b):
    return a + b


def arith(a, b):
    return (a - b, a @ b, a**b, a / b, a // b, a % b)


def times(a, k):
    return k * a


def less(a, b):
    return (a < b, b > a)


def equal(a, b):
    return (a == b, a != b)


def reflected_loss(x):
    m = Meters(x) + Feet(2.0 * x)
    return (3.0 * m).v + (Meters(x) - Feet(x))


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_reflected_operators(backend):
    m, f = Meters(1.5), Feet(2.0)
    cases = [
        (add, (m, f)),
        (add, (m, m)),
        (arith, (m, f)),
        (times, (m, 3.0)),
        (less, (m, f)),
        (less, (m, m)),
        (equal, (m, m)),
        (equal, (m, f)),
    ]
    for fn, args in cases:
        assert myia(fn, backend=backend)(*args) == fn(*args), fn.__name__


def test_reflected_operators_unsupported():
    for args in [(Plain(1.0), 2.0), (Plain(1.0), Plain(2.0)), (Meters(1.0), 2.0)]:
        with pytest.raises(TypeError) as python:
            add(*args)
        with pytest.raises(TypeError) as compiled:
            myia(add)(*args)
        assert str(compiled.value) == str(python.value)


def test_reflected_operators_grad():
    assert grad(reflected_loss)(1.0) == pytest.approx(3.0 * 1.6 + 0.7)
    check_grad(reflected_loss, 0.8)


# *args, **kwargs and keyword-only parameters ------------------------------------------------


def star(*args):
    return args


def first_and_rest(x, *rest):
    return x + len(rest)


def options(x, *args, scale=1.0, shift=0, **rest):
    return (x * scale + shift, args, rest)


def keyword_only(x, *, training=False, rate=0.5):
    return x * rate if training else x


def keywords(x, **kw):
    return x * kw["a"] + kw["b"]


def calls_keywords(x):
    return keywords(x, b=x, a=2.0) + options(x, 1, 2, scale=3.0, c=x)[0]


def calls_star(x):
    return star(x, 2 * x) + star() + (first_and_rest(x, 1, 2, 3),)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_varargs_at_the_entry_point(backend):
    def run(fn, *args, **kwargs):
        got = myia(fn, backend=backend)(*args, **kwargs)
        assert got == fn(*args, **kwargs)
        assert type(got) is type(fn(*args, **kwargs))

    run(star, 5)
    run(star)
    run(star, 1, 2.0, (3, 4))
    run(first_and_rest, 1.0)
    run(first_and_rest, 1.0, 2, 3)
    run(options, 2.0)
    run(options, 2.0, 1, scale=2.0, z=1, w=(1.0, 2))
    run(keyword_only, 3.0)
    run(keyword_only, 3.0, training=True)
    run(keyword_only, 3.0, rate=0.25, training=True)
    run(keywords, 2.0, a=3.0, b=1)
    run(calls_keywords, 2.0)
    run(calls_star, 2.0)


def test_varargs_wrong_calls_are_type_errors():
    from myia import MyiaTypeError

    with pytest.raises(MyiaTypeError, match="too many positional"):
        myia(keyword_only)(3.0, 1.0)
    with pytest.raises(MyiaTypeError, match="unexpected keyword"):
        myia(keyword_only)(3.0, dropout=True)


def test_varargs_grad():
    assert grad(keyword_only)(3.0, training=True) == 0.5
    assert grad(keyword_only, "rate")(3.0, rate=0.25, training=True) == 3.0
    assert grad(keywords)(2.0, a=3.0, b=1.0) == 3.0
    assert grad(calls_keywords)(2.0) == 6.0
    assert grad(first_and_rest)(1.0, 2, 3) == 1.0
    check_grad(calls_keywords, 0.7)


# Keyword calls on a function chosen at run time ---------------------------------------------


def minus(a, b):
    return a - b


def plus(a, b):
    return a + b


def swapped(b, a):
    return a * b


def pick_keywords(x, y):
    fn = minus if x < 0 else plus
    return fn(a=x, b=y) + fn(y, b=x)


def pick_with_if(x, y):
    if x < 0:
        fn = minus
    else:
        fn = plus
    return fn(b=y, a=x)


def pick_different(x, y):
    fn = minus if x < 0 else swapped
    return fn(a=x, b=y)


@pytest.mark.parametrize("x", [-1.5, 2.0])
def test_keyword_call_on_a_function_chosen_at_run_time(check, x):
    check(pick_keywords, x, 3.0)
    check(pick_with_if, x, 3.0)


def test_keyword_call_on_a_function_chosen_at_run_time_grad():
    check_grad(pick_keywords, -1.5, 3.0)
    check_grad(pick_keywords, 2.0, 3.0)
    check_grad(pick_with_if, -1.5, 3.0)


@pytest.mark.parametrize("x", [-1.5, 2.0])
def test_keyword_call_on_functions_binding_differently(x):
    # Each function chosen binds the keywords to its own parameters.
    assert myia(pick_different)(x, 3.0) == pytest.approx(pick_different(x, 3.0))
    check_grad(pick_different, x, 3.0)


# grad's parameters: positions, names, tuples, argnums ---------------------------------------


def prod3(x, y, z=2.0):
    return x * y * y * z


def grad_in_code(x, y):
    return grad(prod3, (0, 1))(x, y)[1] + grad(prod3, argnums=1)(x, y) + grad(prod3, (1,))(x, y)[0]


def test_grad_parameter_spellings():
    x, y = 2.0, 3.0
    assert grad(prod3, (0, 1))(x, y) == (18.0, 24.0)
    assert grad(prod3, [0, 1])(x, y) == (18.0, 24.0)
    assert grad(prod3, (1,))(x, y) == (24.0,)
    assert grad(prod3, argnums=1)(x, y) == 24.0
    assert grad(prod3, argnums=(0, 1))(x, y) == (18.0, 24.0)
    assert grad(prod3, ("x", "z"))(x, y) == (18.0, 18.0)
    assert grad(prod3, 0, "y")(x, y) == (18.0, 24.0)
    assert value_and_grad(prod3, argnums=(1,))(x, y) == (36.0, (24.0,))
    assert myia(grad_in_code)(x, y) == 3 * 24.0


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: grad(prod3, wrt="y"), "unexpected keyword argument 'wrt'"),
        (lambda: grad(prod3, 1.5), "position .* or name"),
        (lambda: grad(prod3, (0, None)), "position .* or name"),
        (lambda: grad(prod3, 0, argnums=1), "both"),
        (lambda: grad(3.0), r"grad\(\) expects a function, not float 3.0"),
        (lambda: myia(3.0), r"myia\(\) expects a function, not float 3.0"),
        (lambda: myia(Meters), "not the class Meters"),
        (lambda: myia(object()), "expects a function, not object"),
        (lambda: myia(id), "expects a Python function, not builtin_function_or_method"),
        (lambda: grad(prod3, 5)(1.0, 2.0), "no argument at position 5"),
        (lambda: grad(prod3, "q")(1.0, 2.0), "'q' is not a parameter"),
    ],
)
def test_grad_and_myia_mistakes_are_clear(make, match):
    from myia import MyiaTypeError

    with pytest.raises(MyiaTypeError, match=match):
        make()


# Partial applications, bound methods, builtins, lru_cache, callable objects -----------------


@dataclasses.dataclass
class Model:
    w: float
    b: float

    def predict(self, x):
        return self.w * x * x + self.b

    def __call__(self, x):
        return self.predict(x) * 2.0


model = Model(3.0, 1.0)
half_prod = functools.partial(prod3, 0.5)
model_predict = model.predict


def uses_partial_inside(x):
    p = functools.partial(prod3, x)
    q = functools.partial(prod3, x, 2.0)
    return p(x * 3.0) + q(x)


def uses_global_partials(x):
    return half_prod(x) + model_predict(x) + half_prod(x, 3.0)


@functools.lru_cache(maxsize=32)
def cached_square(x):
    return x * x


@functools.cache
def cached_cube(x):
    return x * x * x


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_callables_given_to_myia(backend):
    import math

    import numpy as np

    def same(fn, *args, **kwargs):
        assert myia(fn, backend=backend)(*args, **kwargs) == pytest.approx(fn(*args, **kwargs))

    same(functools.partial(prod3, 2.0), 3.0)
    same(functools.partial(prod3, y=2.0), 3.0)
    same(functools.partial(prod3, 2.0, z=1.0), 3.0)
    same(model.predict, 2.0)
    same(model, 2.0)
    same(np.sin, 1.0)
    same(math.exp, 0.5)
    same(np.maximum, 1.0, 2.0)
    same(cached_square, 3.0)
    same(cached_cube, 3.0)
    same(uses_partial_inside, 2.0)
    same(uses_global_partials, 2.0)
    a = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(myia(np.tanh, backend=backend)(a), np.tanh(a))


def test_callables_given_to_grad():
    import math

    assert grad(functools.partial(prod3, 2.0))(3.0) == 24.0
    assert grad(functools.partial(prod3, 2.0), "z")(3.0) == 18.0
    assert grad(functools.partial(prod3, y=2.0))(3.0) == 8.0
    assert grad(model.predict)(2.0) == 12.0
    assert grad(model)(2.0) == 24.0
    assert grad(math.sin)(0.5) == pytest.approx(math.cos(0.5))
    assert grad(cached_square)(3.0) == 6.0
    check_grad(uses_partial_inside, 0.7)
    check_grad(uses_global_partials, 0.7)


# Returning a function from the entry point --------------------------------------------------


def make_scaler(a):
    return lambda x: a * x


def make_pair(a):
    def inc(x):
        return x + a

    return (a, inc)


def test_returning_a_function_is_a_clear_type_error():
    from myia import MyiaTypeError

    for fn in (make_scaler, make_pair):
        with pytest.raises(MyiaTypeError, match="returns a function") as info:
            myia(fn)(2.0)
        assert "test_regress_api.py" in str(info.value)
        assert "return" in str(info.value)
    # Inside compiled code, returned functions are called as usual.
    assert myia(lambda x: make_scaler(x)(3.0) + make_pair(x)[1](1.0))(2.0) == 9.0


grad_of_partial = grad(functools.partial(prod3, 2.0))
compiled_method = myia(model.predict)


def uses_compiled_partials(x):
    return grad_of_partial(x) + compiled_method(x)


def test_compiled_partial_applications_called_from_myia_code():
    assert myia(uses_compiled_partials)(3.0) == 24.0 + model.predict(3.0)


def test_functions_of_a_notebook_cell():
    """A cell's source is in `linecache` (as IPython and Jupyter put it): it is found there."""
    import linecache

    source = (
        "def cell_helper(x):\n"
        "    return x * 3.0\n"
        "\n"
        "f, g = (lambda x: cell_helper(x) + 1.0), (lambda x: x - 1.0)\n"
    )
    name = "<ipython-input-7-regress>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace: dict = {}
    exec(compile(source, name, "exec"), namespace)
    assert myia(namespace["f"])(2.0) == 7.0
    assert myia(namespace["g"])(2.0) == 1.0
    assert grad(namespace["f"])(2.0) == 3.0


def test_partial_of_a_myia_function():
    compiled = myia(prod3)
    assert myia(functools.partial(compiled, 2.0))(3.0) == 36.0
    assert grad(functools.partial(compiled, 2.0))(3.0) == 24.0
    assert myia(myia(functools.partial(prod3, 2.0)))(3.0) == 36.0
