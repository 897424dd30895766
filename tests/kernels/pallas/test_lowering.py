"""The compiled paths: every pallas kernel lowers for cuda (Triton) and for tpu (Mosaic).

Lowering for another platform needs no device, so these run here; the last
test runs the compiled kernels and needs a GPU.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

M, N, K = 6, 5, 3


def _operands(op, transpose):
    """Operands of ``op`` with an events/float vector (mv) or matrix (mm) of the right length."""
    rows = M if transpose else N
    x = jnp.ones((rows, 2) if op.endswith('mm') else (rows,), jnp.float32)
    if 'dense' in op:
        return (jnp.ones((M, N), jnp.float32), x > 0), {}
    if 'csr' in op:
        indptr = jnp.arange(M + 1, dtype=jnp.int32)
        return (jnp.ones(M), jnp.arange(M, dtype=jnp.int32) % N, indptr, x), {'shape': (M, N)}
    return (jnp.ones((M, K)), jnp.zeros((M, K), jnp.int32), x), {'shape': (M, N)}


OPS = ['binary_densemv', 'binary_densemm', 'csrmv', 'csrmm', 'binary_csrmv', 'binary_csrmm',
       'fcnmv', 'fcnmm', 'binary_fcnmv', 'binary_fcnmm']


def _lowered(op, transpose, platform):
    args, kw = _operands(op, transpose)
    f = jax.jit(lambda *a: getattr(ej, op)(*a, transpose=transpose, backend='pallas', **kw))
    return f.trace(*args).lower(lowering_platforms=(platform,)).as_text()


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('op', OPS)
def test_lowers_to_one_triton_call_on_cuda(op, transpose):
    """Each operator becomes a Triton kernel; only the transposed sparse ones use atomics."""
    text = _lowered(op, transpose, 'cuda')
    assert text.count('xla.gpu.triton') == 1
    assert ('atomic_rmw' in text) == (transpose and 'dense' not in op)


@pytest.mark.parametrize('transpose', [False, True])
def test_dense_lowers_to_mosaic_on_tpu(transpose):
    """binary_densemv has a tpu kernel: it lowers to one Mosaic custom call."""
    assert _lowered('binary_densemv', transpose, 'tpu').count('tpu_custom_call') == 1


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('op', [op for op in OPS if 'dense' not in op])
def test_sparse_operators_lower_to_mosaic_on_tpu(op, transpose):
    """The CSR and FCN products have tpu kernels: Mosaic custom calls (a matrix runs one per column)."""
    assert _lowered(op, transpose, 'tpu').count('tpu_custom_call') >= 1


@pytest.mark.skipif(jax.default_backend() not in ('gpu', 'cuda'), reason='needs a GPU (compiled Triton kernels)')
@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('op', OPS)
def test_compiled_on_the_gpu_matches_jax(op, transpose):
    """The compiled Triton kernels give what the jax backend gives."""
    args, kw = _operands(op, transpose)
    fn = getattr(ej, op)
    got = fn(*args, transpose=transpose, backend='pallas', **kw)
    want = fn(*args, transpose=transpose, backend='jax', **kw)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('op', ['binary_csrmv', 'binary_fcnmv'])
def test_sparse_operators_default_to_their_tpu_kernels_on_tpu(op):
    """Without backend=, a tpu lowering takes the pallas kernel (faster than jax on the chip); the cpu keeps jax."""
    args, kw = _operands(op, True)
    f = jax.jit(lambda *a: getattr(ej, op)(*a, transpose=True, **kw))
    # One Mosaic kernel, or two for the CSR scatter (rows as stored, rows cut into pieces).
    assert f.trace(*args).lower(lowering_platforms=('tpu',)).as_text().count('tpu_custom_call') == \
        (2 if 'csr' in op else 1)
    assert 'tpu_custom_call' not in f.trace(*args).lower(lowering_platforms=('cpu',)).as_text()
