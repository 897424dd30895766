"""A small end-to-end tour of eventjax: one custom primitive, two backends, three ways to choose.

Run with ``make demo``.
"""

import jax
import jax.numpy as jnp

import eventjax as ej

# A primitive with two kernels for the CPU that give different answers, so
# the result shows which one ran.
saxpy = ej.XLACustomKernel('demo_saxpy')
saxpy.def_jax_kernel(lambda outs, a: lambda x, y: (a * x + y,))
saxpy.def_kernel('halved', 'cpu', lambda outs, a: lambda x, y: ((a * x + y) / 2,))

x = jnp.arange(4.0)
y = jnp.ones(4)
out = jax.ShapeDtypeStruct(x.shape, x.dtype)
f = jax.jit(lambda x, y: saxpy(x, y, outs=out, a=2.0))

print('backends on cpu      :', saxpy.available_backends('cpu'))
print('default              :', f(x, y))
ej.set_backend('cpu', 'halved')
print("set_backend('halved'):", f(x, y))
with ej.config.override(cpu='jax'):
    print("override(cpu='jax')  :", f(x, y))
print("per call backend='jax':", saxpy(x, y, outs=out, a=2.0, backend='jax'))
ej.clear_backends()
print('vmap (general rule)  :', jax.vmap(lambda x: saxpy(x, y, outs=out, a=2.0))(jnp.stack([x, x])).tolist())
print('config version       :', ej.config.snapshot().version)
