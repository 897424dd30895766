"""Run every kernel test class over each backend its primitive has on JAX's default platform.

On a GPU machine that is ``jax`` and ``warp`` on the gpu; here, on the cpu,
``jax``, ``numba`` and ``warp``.
"""

import jax

PLATFORM = 'gpu' if jax.default_backend() in ('gpu', 'cuda', 'rocm') else jax.default_backend()


def backends_of(prim):
    return prim.available_backends(PLATFORM)


def pytest_generate_tests(metafunc):
    prim = getattr(metafunc.cls, 'prim', None)
    if 'backend' in metafunc.fixturenames and prim is not None:
        metafunc.parametrize('backend', backends_of(prim))
