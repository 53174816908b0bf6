"""Transformations a researcher composes, built on Myia's reverse and forward modes.

They are vjp, jvp, jacobians, hessian, vmap, `stop_gradient`, `checkpoint`, and tree utilities.
Each is written in Myia's Python subset (the ``*_`` functions: `trees`, `derivatives`,
`checkpointing`, `vmapping`) and is what the public name means inside ``@myia`` code; at the
top level, the public function (`jacobians`, `vmapping`, `checkpointing`) compiles a small
entry that calls it (`entries`: one compilation per function transformed and argument
signature, cached).
Everything is a transformation of the typed IR before running, through every construct
`grad` differentiates (branches, loops with any trip count, recursion, closures):

- ``vjp(f, *primals)`` is ``(f(*primals), vjp_fn)``; ``vjp_fn(ct)`` is the gradient of
  ``<f(*xs), ct>`` at the primals (it runs the forward pass again: nothing is stored between
  the two calls).
- ``jvp(f, primals, tangents)`` is ``(f(*primals), J t)``: forward mode, ``f``'s tangent
  graph (`myia.grad.forward`) called on the primals and tangents (``jvp_of(f)``).
- ``jacrev`` stacks one `vjp` per output element, in a loop that runs in compiled code;
  ``jacfwd`` is the `jvp` along each input element, batched by `vmap` (one program for
  every column where the tangent program can be batched, a compiled loop otherwise);
  ``hessian`` is ``jacfwd(grad(f))`` (forward over reverse; ``jacfwd(jacrev(f))`` for an
  ``f`` that is not scalar, as JAX's). Their ``argnums`` is a position
  or a tuple of them; arguments and outputs may be structures (a block per pair of leaves).
- ``checkpoint(f)`` is ``f``, whose forward pass a gradient runs again in its backward pass
  instead of keeping its intermediate values: calls go through `myia.grad.lib.checkpointed`,
  to which the J transform gives its own forward graph.
- ``vmap(f, in_axes, out_axes)`` is ``f``'s graph batched (`myia.grad.batching`): each
  primitive computes every example at once, a branch on a batched value selects per example,
  a loop on one runs until every example is done.
"""

from .checkpointing import checkpoint, checkpoint_, stop_gradient, stop_gradient_
from .derivatives import hessian_, jacfwd_, jacrev_, jvp_, vjp_
from .jacobians import hessian, jacfwd, jacrev, jvp, vjp
from .trees import tree_leaves, tree_leaves_, tree_map, tree_map_
from .vmapping import vmap, vmap_


def _register() -> None:
    from ..operations.mapping import MAPPING

    MAPPING.update(
        {
            stop_gradient: stop_gradient_,
            checkpoint: checkpoint_,
            vjp: vjp_,
            jvp: jvp_,
            jacrev: jacrev_,
            jacfwd: jacfwd_,
            hessian: hessian_,
            vmap: vmap_,
            tree_map: tree_map_,
            tree_leaves: tree_leaves_,
        }
    )


_register()

__all__ = [
    "checkpoint",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stop_gradient",
    "tree_leaves",
    "tree_map",
    "vjp",
    "vmap",
]
