"""The examples of the two seed pages, run as written after `import eventjax as brainevent`."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as brainevent


def test_seed_set_backend_example_runs_as_written():
    brainevent.set_backend('gpu', 'warp')
    assert brainevent.get_backend('gpu') == 'warp'
    brainevent.set_backend('gpu', None)  # clear
    assert brainevent.get_backend('gpu') is None


def test_seed_set_backend_is_reachable_as_config_set_backend():
    brainevent.config.set_backend('cpu', 'jax')
    assert brainevent.get_backend('cpu') == 'jax'


def test_seed_general_batching_rule_example_runs_as_written():
    from jax.interpreters import batching

    general_batching_rule = brainevent.general_batching_rule
    kernel = brainevent.XLACustomKernel('seed_prim')
    kernel.def_jax_kernel(lambda outs: lambda x: (x * 2,))
    my_prim = kernel.primitive
    batching.primitive_batchers[my_prim] = functools.partial(
        general_batching_rule, my_prim
    )
    x = jnp.arange(6.0).reshape(2, 3)
    out = jax.vmap(lambda v: kernel(v, outs=jax.ShapeDtypeStruct(v.shape, v.dtype)))(x)
    np.testing.assert_allclose(out, 2 * x)
