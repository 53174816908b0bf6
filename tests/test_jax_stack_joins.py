"""Stacks joined under XLA: an unassigned stack variable is the empty stack of any path.

A loop variable that no path has assigned yet starts as a placeholder of its type
(`myia.compile.jax_runtime.placeholder`), and a stack that enters a loop's state as
``stack_new()`` takes the loop variable's type (`jax_runtime.to_carry`). The type of such a
variable may be less precise than the values pushed on it (``stack[⊥]`` where ``()`` is
pushed: the iterations of an inner ``while`` loop in the second-order gradient of a search
loop). It was an empty `AnyStack` there, which a push turned into an `AnyStack` of ``()``;
joined with the `JaxStack` of ``()`` that another path pushed, it was a `Union` of both,
which a push of the stack on a stack of stacks could not read (``'Union' object has no
attribute 'buffers'``): the whole program ran on the host.
"""

from __future__ import annotations

import pytest

from myia.abstract.data import BOTTOM, AbstractScalar, AbstractStack, AbstractTuple
from myia.compile import jax_control as ctl
from myia.compile import jax_runtime as rt
from myia.compile import jax_skeletons as sk

jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def _x64():
    """Float64 and int64, as the backend traces (`JaxBackend.context`)."""
    from myia.compile.jax_backend import JaxBackend

    rt.setup()
    rt.Trace.start(8)
    with JaxBackend().context():
        yield


UNIT = AbstractTuple(())  # what a loop of no saved values pushes per iteration
F64 = AbstractScalar(float)


def test_an_unassigned_stack_of_unknown_element_is_the_empty_stack():
    assert rt.placeholder(AbstractStack(BOTTOM)) is rt.EMPTY
    assert rt.placeholder(AbstractStack(AbstractTuple((AbstractStack(BOTTOM),)))) is rt.EMPTY
    assert rt.to_carry(rt.EMPTY, AbstractStack(BOTTOM)) is rt.EMPTY
    with pytest.raises(rt.Unreachable):  # popped on a path never taken: that branch's zeros
        rt.stack_pop(rt.EMPTY)
    # A stack of arrays is still a stack of buffers of its type.
    assert isinstance(rt.placeholder(AbstractStack(F64)), rt.JaxStack)


def _pushes_of_both_branches(c, x):
    unassigned = rt.placeholder(AbstractStack(BOTTOM))
    stack = ctl.jax_cond(
        c,
        lambda: rt.stack_push(rt.stack_push(unassigned, (), UNIT), (), UNIT),
        lambda: rt.stack_push(rt.EMPTY, (), UNIT),
    )
    outer = rt.stack_push(rt.EMPTY, (x, stack), AbstractTuple((F64, AbstractStack(UNIT))))
    top, _ = outer.pop()
    return top[1].count


def test_an_unassigned_stack_joins_the_stack_another_branch_pushed():
    rt.Trace.flags.append([])
    rt.Trace.needs.append([])
    try:
        jaxpr = jax.make_jaxpr(_pushes_of_both_branches)(True, 1.0)
    finally:
        rt.Trace.flags.pop()
        rt.Trace.needs.pop()
    assert jax.core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, True, 1.0)[0] == 2
    assert jax.core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, False, 1.0)[0] == 1


def test_an_anystack_nothing_was_pushed_on_joins_a_stack():
    pushed = rt.JaxStack.new(UNIT).push(())
    empty = rt.AnyStack(None, [], rt.JaxStack.new(UNIT).count)
    a, b = sk.split(pushed, []), sk.split(empty, [])
    assert sk.merge(a, b) == a and sk.merge(b, a) == a
    assert sk._fits_in(b, a)
    out: list = []
    sk.fit(b, iter([empty.count]), a, out)
    assert isinstance(sk.join(a, iter(out)), rt.JaxStack)
