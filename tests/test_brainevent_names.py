"""Every brainevent name in docs/brainevent.rst works here, or fails with an error naming the eventjax spelling.

The page's table is parsed, and each brainevent name in it must appear in this
file, so a row added to the page without a test fails here.
"""

import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

PAGE = pathlib.Path(__file__).parent.parent / 'docs' / 'brainevent.rst'
DENSE = np.array([[0., 2., 0.], [3., 0., 4.]], np.float32)


@pytest.fixture(autouse=True)
def _jax_kernels():
    # Names are what is tested here, not kernels: the jax kernels avoid numba compiles.
    with ej.config.override(cpu='jax'):
        yield


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_every_brainevent_name_in_the_page_is_exercised_here():
    rows = re.findall(r'^\s+\* - ``([^`]+)``', PAGE.read_text(), flags=re.M)
    assert len(rows) >= 30
    source = pathlib.Path(__file__).read_text()
    missing = [r for r in rows if f'# be: {r}\n' not in source]
    assert not missing, f'rows of docs/brainevent.rst with no test here: {missing}'


class TestBackendNames:
    def test_set_backend_jax_raw_selects_jax(self):
        # be: config.set_backend('cpu', 'jax_raw')
        ej.config.set_backend('cpu', 'jax_raw')
        assert ej.get_backend('cpu') == 'jax'

    def test_per_call_backend_jax_raw_runs_the_jax_kernel(self):
        # be: backend='jax_raw'
        A = ej.CSR.fromdense(DENSE)
        out = ej.binary_csrmv(A.data, A.indices, A.indptr, jnp.array([True, False, True]), shape=(2, 3),
                              backend='jax_raw')
        _close(out, DENSE @ [1, 0, 1])

    def test_get_backend_and_clear_backends(self):
        # be: config.get_backend
        # be: config.clear_backends
        ej.config.set_backend('cpu', 'numba')
        assert ej.config.get_backend('cpu') == 'numba'
        ej.config.clear_backends()
        assert ej.config.get_backend('cpu') is None

    def test_numba_parallel_is_the_thread_count_seen_as_on_or_off(self):
        # be: config.set_numba_parallel
        # be: config.get_numba_parallel
        # be: config.get_numba_num_threads
        try:
            ej.config.set_numba_parallel(False)
            assert (ej.config.get_numba_parallel(), ej.config.get_numba_num_threads()) == (False, 1)
            ej.config.set_numba_parallel(True, num_threads=2)
            assert (ej.config.get_numba_parallel(), ej.config.get_numba_num_threads()) == (True, 2)
            with pytest.raises(ValueError, match='serial means one thread'):
                ej.config.set_numba_parallel(False, num_threads=4)
        finally:
            ej.config.set_numba_num_threads(None)


class TestPrimitives:
    def test_xla_custom_kernel_takes_a_doc(self):
        # be: XLACustomKernel(name, doc=...)
        p = ej.XLACustomKernel('be_doc_example', doc='Adds one.')
        assert p.__doc__ == 'Adds one.' and p.name == 'be_doc_example'

    def test_def_call_and_call_run_the_stored_function(self):
        # be: XLACustomKernel.def_call
        # be: XLACustomKernel.call
        p = ej.XLACustomKernel('be_call_example')
        p.def_jax_kernel(lambda outs: lambda x: (x + 1,))
        with pytest.raises(ValueError, match=r'def_call\(fn\)'):
            p.call(1.0)
        p.def_call(lambda x: p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))[0])
        _close(p.call(jnp.zeros(2)), [1, 1])

    def test_def_tags_and_the_registry_queries_find_primitives(self):
        # be: XLACustomKernel.def_tags
        # be: get_primitives_by_tags
        # be: get_registry
        # be: get_all_primitive_names
        p = ej.XLACustomKernel('be_tags_example')
        p.def_tags('toy', 'be')
        assert ej.get_primitives_by_tags({'toy', 'be'}) == {'be_tags_example': p}
        assert ej.get_registry()['be_tags_example'] is p
        assert 'be_tags_example' in ej.get_all_primitive_names()
        assert {'binary_csrmv', 'binary_csrmm'} == set(ej.get_primitives_by_tags({'csr', 'binary'}))

    def test_primitive_objects_are_reached_through_the_registry(self):
        # be: binary_csrmv_p.available_backends('cpu')
        assert 'jax' in ej.get_registry()['binary_csrmv'].available_backends('cpu')
        with pytest.raises(AttributeError, match=r"get_registry\(\)\['binary_csrmv'\]"):
            ej.binary_csrmv_p  # noqa: B018

    def test_the_machinery_names_are_the_same(self):
        # be: XLACustomKernel.def_kernel
        # be: XLACustomKernel.set_default
        # be: XLACustomKernel.available_backends
        # be: defjvp
        # be: general_batching_rule
        p = ej.XLACustomKernel('be_machinery_example')
        p.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 1,))
        p.def_kernel('b', 'cpu', lambda outs: lambda x: (x + 2,))
        p.set_default('cpu', 'b')
        assert p.available_backends('cpu') == ('a', 'b') and p.get_default('cpu') == 'b'
        assert callable(ej.defjvp) and callable(ej.general_batching_rule)


class TestEvents:
    def test_binary_array_is_event_array(self):
        # be: BinaryArray
        # be: EventArray
        assert ej.BinaryArray is ej.EventArray
        _close(ej.BinaryArray(jnp.array([True, False])) @ jnp.asarray(DENSE), DENSE[0])

    def test_binary_csrmv_indexed_reads_weights_through_perm(self):
        # be: binary_csrmv_indexed(data, indices, indptr, perm, v, shape=..., workspace=..., transpose=...)
        A = ej.CSR.fromdense(DENSE)
        perm = jnp.array([2, 1, 0], jnp.int32)
        out = ej.binary_csrmv_indexed(A.data[::-1], A.indices, A.indptr, perm, jnp.array([True, True]),
                                      shape=(2, 3), transpose=True)
        _close(out, DENSE.sum(0))

    def test_csr_slice_rows(self):
        # be: csr_slice_rows(data, indices, indptr, row_indices, shape=...)
        A = ej.CSR.fromdense(DENSE)
        _close(ej.csr_slice_rows(A.data, A.indices, A.indptr, jnp.array([1, 0]), shape=(2, 3)), DENSE[::-1])

    def test_bitpack_and_bit_packed_binary(self):
        # be: bitpack(x, axis)
        # be: BitPackedBinary
        words = ej.bitpack(jnp.array([True, False, True]), 0)
        assert words.tolist() == [5] and ej.BitPackedBinary is ej.BitPackedEvents
        _close(ej.BitPackedBinary(words, 2) @ jnp.asarray(DENSE), DENSE[0])

    def test_compact_binary_is_packed_words_and_an_index_list(self):
        # be: CompactBinary.from_array(x)
        ev = ej.CompactBinary.from_array(jnp.array([False, True]), 1)
        assert ej.CompactBinary is ej.CompactEvents
        assert ev.ids.tolist() == [1] and int(ev.count) == 1 and ev.words.tolist() == [2]
        A = ej.CSR.fromdense(DENSE)
        _close(ev @ A, DENSE[1])
        _close(A.T @ ev, DENSE[1])

    def test_binary_csrmm_indexed_reads_weights_through_perm(self):
        # be: binary_csrmm_indexed(data, indices, indptr, perm, B, shape=..., workspace=..., transpose=...)
        A = ej.CSR.fromdense(DENSE)
        perm = jnp.array([2, 1, 0], jnp.int32)
        B = jnp.array([[True, False], [True, True]])
        out = ej.binary_csrmm_indexed(A.data[::-1], A.indices, A.indptr, perm, B, shape=(2, 3), transpose=True)
        _close(out, DENSE.T @ np.asarray(B, np.float32))


class TestCSR:
    def test_csr_from_a_tuple_and_a_shape(self):
        # be: CSR((data, indices, indptr), shape=...)
        # be: CSR.todense
        # be: CSR.fromdense
        A = ej.CSR.fromdense(DENSE)
        B = ej.CSR((A.data, A.indices, A.indptr), shape=(2, 3))
        _close(B.todense(), DENSE)

    def test_scalar_arithmetic_maps_the_weights(self):
        # be: csr * 2.0
        # be: 2.0 * csr
        # be: csr / 2.0
        # be: -csr
        A = ej.CSR.fromdense(DENSE)
        _close((A * 2.0).todense(), DENSE * 2)
        _close((2.0 * A).todense(), DENSE * 2)
        _close((A / 2.0).todense(), DENSE / 2)
        _close((-A).todense(), -DENSE)
        with pytest.raises(TypeError, match='with_data'):
            A * jnp.ones(3)

    def test_with_data_keeps_the_structure(self):
        # be: CSR.with_data
        A = ej.CSR.fromdense(DENSE)
        _close(A.with_data(jnp.array([1., 1., 1.])).todense(), DENSE != 0)

    def test_transpose_is_the_dot_t_view(self):
        # be: CSR.transpose()
        # be: CSR.T
        A = ej.CSR.fromdense(DENSE)
        _close(A.transpose().todense(), DENSE.T)
        _close(A.T @ jnp.array([1., 1.]), DENSE.T @ [1, 1])

    def test_tocoo_lists_the_entries(self):
        # be: CSR.tocoo
        coo = ej.CSR.fromdense(DENSE).tocoo()
        dense = np.zeros((2, 3), np.float32)
        np.add.at(dense, (np.asarray(coo.row), np.asarray(coo.col)), np.asarray(coo.data))
        _close(dense, DENSE)

    def test_csc_stores_columns_and_its_transpose_is_a_csr(self):
        # be: CSC((data, indices, indptr), shape=...)
        # be: CSC.T
        A = ej.CSC.fromdense(DENSE)
        assert A.shape == (2, 3) and np.asarray(A.indptr).shape == (4,)
        _close(A.todense(), DENSE)
        _close(A @ jnp.array([1., 2., 3.]), DENSE @ [1, 2, 3])
        _close(ej.EventArray(jnp.array([True, True])) @ A, DENSE.sum(0))
        assert type(A.T) is ej.CSR
        _close(jax.jit(lambda a: a.with_data(a.data * 2).todense())(A), DENSE * 2)

    def test_the_operators_take_brainevents_keywords(self):
        # be: binary_csrmv(..., v=...)
        # be: csrmv
        # be: csrmm
        # be: binary_csrmm
        A = ej.CSR.fromdense(DENSE)
        spikes = jnp.array([True, False, True])
        _close(ej.binary_csrmv(A.data, A.indices, A.indptr, v=spikes, shape=(2, 3)), DENSE @ [1, 0, 1])
        with pytest.raises(TypeError, match='pass only spikes='):
            ej.binary_csrmv(A.data, A.indices, A.indptr, v=spikes, spikes=spikes, shape=(2, 3))
        _close(ej.csrmv(A.data, A.indices, A.indptr, v=jnp.ones(3), shape=(2, 3)), DENSE.sum(1))
        _close(ej.csrmm(A.data, A.indices, A.indptr, B=jnp.ones((3, 2)), shape=(2, 3)), DENSE @ np.ones((3, 2)))
        _close(ej.binary_csrmm(A.data, A.indices, A.indptr, B=jnp.ones((3, 2), bool), shape=(2, 3)),
               DENSE @ np.ones((3, 2)))


class TestDense:
    def test_dense_operators_have_the_same_names(self):
        # be: binary_densemv
        # be: binary_densemm
        W, s = jnp.asarray(DENSE), jnp.array([True, False, True])
        _close(ej.binary_densemv(W, spikes=s), DENSE @ [1, 0, 1])
        _close(ej.binary_densemm(W, s[:, None]), (DENSE @ [1, 0, 1])[:, None])

    def test_dense_class_is_a_plain_array_here(self):
        # be: Dense
        with pytest.raises(AttributeError, match=r'EventArray\(spikes\) @ W'):
            ej.Dense  # noqa: B018

    def test_coo_builds_a_matrix_and_converts_to_csr(self):
        # be: COO
        # be: CSR.fromcoo
        coo = ej.CSR.fromdense(DENSE).tocoo()
        A = ej.COO((coo.data, coo.row, coo.col), shape=(2, 3))
        _close(A.todense(), DENSE)
        _close(A.T.todense(), DENSE.T)
        _close(ej.CSR.fromcoo(A).todense(), DENSE)
        _close(A @ jnp.array([1., 2., 3.]), DENSE @ [1, 2, 3])

    def test_index_conversions_have_brainevents_names_and_results(self):
        # be: coo2csr
        # be: csr_to_coo_index
        # be: coo_to_csc_index
        # be: csr_to_csc_index
        # be: csc_to_csr_index
        rows, cols = np.array([0, 2, 1, 0, 2]), np.array([0, 3, 1, 2, 0])
        indptr, indices, order = ej.coo2csr(rows, cols, shape=(3, 4))
        np.testing.assert_array_equal(indptr, [0, 2, 3, 5])
        np.testing.assert_array_equal(indices, [0, 2, 1, 3, 0])
        np.testing.assert_array_equal(ej.csr_to_coo_index(indptr, indices)[0], [0, 0, 1, 2, 2])
        cptr, crows, corder = ej.csr_to_csc_index(indptr, indices, shape=(3, 4))
        np.testing.assert_array_equal(cptr, [0, 2, 3, 4, 5])
        np.testing.assert_array_equal(crows, [0, 2, 1, 0, 2])
        np.testing.assert_array_equal(ej.coo_to_csc_index(rows, cols, shape=(3, 4))[0], cptr)
        back_ptr, back_cols, _ = ej.csc_to_csr_index(cptr, crows, shape=(3, 4))
        np.testing.assert_array_equal(back_ptr, indptr)
        np.testing.assert_array_equal(back_cols, [0, 2, 1, 0, 3])  # by way of the columns: sorted in each row


class TestFixedNumConn:
    W = jnp.array([[1., 2.], [3., 4.]])
    IDX = jnp.array([[0, 2], [1, 2]])

    def test_fixed_post_num_conn_is_a_row_per_presynaptic_neuron(self):
        # be: FixedPostNumConn
        # be: FixedNumPerPre
        dense = np.array([[1., 0., 2.], [0., 3., 4.]], np.float32)
        _close(ej.FixedPostNumConn((self.W, self.IDX), shape=(2, 3)).todense(), dense)
        _close(ej.FixedNumPerPre(self.W, self.IDX, shape=(2, 3)).todense(), dense)

    def test_fixed_pre_num_conn_is_a_row_per_postsynaptic_neuron(self):
        # be: FixedPreNumConn
        # be: FixedNumPerPost
        # indices[j] are the presynaptic sources of postsynaptic neuron j: W[indices[j, c], j] = data[j, c].
        dense = np.array([[1., 0.], [0., 3.], [2., 4.]], np.float32)
        A = ej.FixedPreNumConn((self.W, self.IDX), shape=(3, 2))
        assert A.shape == (3, 2)
        _close(A.todense(), dense)
        _close(ej.FixedNumPerPost(self.W, self.IDX, shape=(3, 2)).todense(), dense)
        _close(ej.EventArray(jnp.array([True, False, True])) @ A, dense.T @ [1, 0, 1])
        _close(jax.jit(lambda a: a.todense())(A), dense)

    def test_data_and_with_data(self):
        # be: FixedNumConn.data
        # be: FixedNumConn.with_data
        A = ej.FixedNumConn((self.W, self.IDX), shape=(2, 3))
        assert A.data is A.weights
        _close(A.with_data(1.0).todense(), [[1, 0, 1], [0, 1, 1]])
        _close((A * 2.0).data, self.W * 2)

    def test_the_fcn_operators_take_brainevents_keywords(self):
        # be: fcnmv(..., vector=...)
        # be: fcnmm(..., matrix=...)
        # be: binary_fcnmm(..., matrix=...)
        # be: binary_fcnmv
        dense = np.array([[1., 0., 2.], [0., 3., 4.]], np.float32)
        _close(ej.fcnmv(self.W, self.IDX, vector=jnp.ones(3), shape=(2, 3)), dense.sum(1))
        _close(ej.fcnmm(self.W, self.IDX, matrix=jnp.ones((3, 2)), shape=(2, 3)), dense @ np.ones((3, 2)))
        _close(ej.binary_fcnmm(self.W, self.IDX, matrix=jnp.ones((3, 2), bool), shape=(2, 3)),
               dense @ np.ones((3, 2)))
        _close(ej.binary_fcnmv(self.W, self.IDX, spikes=jnp.ones(3, bool), shape=(2, 3)), dense.sum(1))


HANDLER = r'''
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
static ffi::Error Twice(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = 2 * x.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_names_twice, Twice,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
'''


class TestNativeKernels:
    def test_load_cpp_inline_registers_name_dot_function(self):
        # be: load_cpp_inline
        from eventjax.backends.native import build as native_build

        if not native_build.cpp_toolchain().path:
            pytest.skip('no C++ compiler')
        mod = ej.load_cpp_inline('eventjax_names', HANDLER, ['eventjax_names_twice'])
        assert mod.targets == {'eventjax_names_twice': 'eventjax_names.eventjax_names_twice'}
        x = jnp.arange(3.0)
        out = jax.ffi.ffi_call(mod.targets['eventjax_names_twice'], jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        _close(out, [0.0, 2.0, 4.0])
        with pytest.raises(TypeError, match='argument specs'):
            ej.load_cpp_inline('eventjax_names_spec', HANDLER, {'eventjax_names_twice': ['arg', 'ret']})

    def test_load_cuda_inline_and_file_build_for_the_gpu(self, tmp_path):
        # be: load_cuda_inline
        # be: load_cuda_file
        from eventjax.backends.native import build as native_build

        if not native_build.cuda_toolchain().path:
            pytest.skip('nvcc is not installed')
        mod = ej.load_cuda_inline('eventjax_names_cuda', HANDLER, ['eventjax_names_twice'])
        assert mod.targets['eventjax_names_twice'] == 'eventjax_names_cuda.eventjax_names_twice'
        path = tmp_path / 'twice.cu'
        path.write_text(HANDLER)
        assert ej.load_cuda_file(path, ['eventjax_names_twice']).path == mod.path  # same content, same build

    def test_def_cuda_raw_kernel_registers_the_gpu_cuda_kernel(self):
        # be: XLACustomKernel.def_cuda_raw_kernel
        p = ej.XLACustomKernel('names_cuda_raw')
        p.def_cuda_raw_kernel(lambda outs: lambda x: (x,))
        assert p.available_backends('gpu') == ('cuda',)

    def test_numba_cuda_names_register_and_wrap_numba_cuda_kernels(self):
        # be: XLACustomKernel.def_numba_cuda_kernel
        # be: numba_cuda_kernel
        p = ej.XLACustomKernel('names_numba_cuda')
        p.def_numba_cuda_kernel(lambda outs: ej.numba_cuda_kernel(None, outs[0], launch_dims=4))
        assert p.available_backends('gpu') == ('numba_cuda',)
        f = ej.numba_cuda_kernel(None, jax.ShapeDtypeStruct((4,), jnp.float32), launch_dims=4)
        assert callable(f)
        with pytest.raises(ej.errors.KernelSpecError, match='launch_dims or \\(grid, block\\)'):
            ej.numba_cuda_kernel(None, jax.ShapeDtypeStruct((4,), jnp.float32))


class TestPlasticity:
    # A CSR of shape (2, 3): row 0 stores columns 0 and 2, row 1 stores column 1. Weights start inside the bounds,
    # where bounding the touched entries (eventjax) and clipping every weight (brainevent) agree.
    W = jnp.array([0.5, 0.2, 0.9], jnp.float32)
    IDX, PTR = jnp.array([0, 2, 1]), jnp.array([0, 2, 3])
    PRE_TRACE, POST_TRACE = jnp.array([0.3, -0.4], jnp.float32), jnp.array([0.1, 0.2, 0.3], jnp.float32)

    def test_csr_updates_take_brainevents_signatures(self):
        # be: update_csr_on_binary_pre
        # be: csr_on_pre
        # be: update_csr_on_binary_post
        # be: csr2csc_on_post
        pre = jnp.array([True, False])
        want = [0.6, 0.5, 0.9]
        _close(ej.update_csr_on_binary_pre(self.W, self.IDX, self.PTR, pre, self.POST_TRACE, shape=(2, 3)), want)
        _close(ej.csr_on_pre(self.W, self.IDX, self.PTR, pre, self.POST_TRACE, 0.0, 0.55, shape=(2, 3)),
               [0.55, 0.5, 0.9])
        rows, cols_ptr, pos = ej.csr_column_view(self.IDX, self.PTR, shape=(2, 3))
        post = jnp.array([False, True, True])
        _close(ej.update_csr_on_binary_post(self.W, rows, cols_ptr, pos, self.PRE_TRACE, post, shape=(2, 3)),
               [0.5, 0.5, 0.5])
        _close(ej.csr2csc_on_post(self.W, rows, cols_ptr, pos, self.PRE_TRACE, post, 0.45, 1.0, shape=(2, 3)),
               [0.5, 0.5, 0.5])

    def test_dense_updates_take_brainevents_signatures(self):
        # be: update_dense_on_binary_pre
        # be: dense_on_pre
        # be: update_dense_on_binary_post
        # be: dense_on_post
        W = jnp.full((2, 3), 0.5, jnp.float32)
        pre, post = jnp.array([False, True]), jnp.array([True, False, False])
        _close(ej.update_dense_on_binary_pre(W, pre, self.POST_TRACE), [[.5, .5, .5], [.6, .7, .8]])
        _close(ej.dense_on_pre(W, pre, self.POST_TRACE, None, 0.75), [[.5, .5, .5], [.6, .7, .75]])
        _close(ej.update_dense_on_binary_post(W, self.PRE_TRACE, post), [[.8, .5, .5], [.1, .5, .5]])
        _close(ej.dense_on_post(W, self.PRE_TRACE, post, 0.2), [[.8, .5, .5], [.2, .5, .5]])

    def test_fixed_connection_updates_take_brainevents_signatures(self):
        # be: update_fixed_post_conn_on_binary_pre
        # be: update_fixed_pre_conn_on_binary_post
        data, idx = jnp.full((2, 2), 0.5, jnp.float32), jnp.array([[0, 2], [1, 2]])
        _close(ej.update_fixed_post_conn_on_binary_pre(data, idx, jnp.array([True, False]), self.POST_TRACE,
                                                       shape=(2, 3)), [[.6, .8], [.5, .5]])
        # Stored per postsynaptic neuron (2 of them) with presynaptic sources among 3.
        _close(ej.update_fixed_pre_conn_on_binary_post(data, idx, jnp.array([0.1, 0.2, 0.3]), jnp.array([False, True]),
                                                       None, 0.7, shape=(3, 2)), [[.5, .5], [.7, .7]])

    def test_containers_update_on_pre_and_post(self):
        # be: CSR.update_on_pre
        # be: CSR.update_on_post
        # be: FixedNumPerPre.update_on_pre
        A = ej.CSR((self.W, self.IDX, self.PTR), shape=(2, 3))
        _close(A.update_on_pre(jnp.array([True, False]), self.POST_TRACE).data, [0.6, 0.5, 0.9])
        _close(A.update_on_post(self.PRE_TRACE, jnp.array([False, True, True])).data, [0.5, 0.5, 0.5])
        F = ej.FixedNumPerPre(jnp.full((2, 2), 0.5, jnp.float32), jnp.array([[0, 2], [1, 2]]), shape=(2, 3))
        _close(F.update_on_pre(jnp.array([True, False]), self.POST_TRACE, 0.0, 0.7).data, [[.6, .7], [.5, .5]])
        _close(F.update_on_post(self.PRE_TRACE, jnp.array([False, False, True])).data, [[.5, .8], [.5, .1]])


class TestDelaysAndGradedEvents:
    def test_csr_delay_deliver_and_its_layout(self):
        # be: csr_delay_deliver
        # be: CSRDelayLayout
        # be: csr_delay_deliver_layout
        A = ej.CSR.fromdense(DENSE)
        delays = np.array([1, 2, 1], np.int32)
        ring = jnp.zeros((3, 3))
        spikes = jnp.array([True, True])
        out = ej.csr_delay_deliver(ring, spikes, A.data, A.indices, A.indptr, delays, 0, shape=(2, 3))
        _close(out, [[0, 0, 0], [0, 2, 4], [3, 0, 0]])
        layout = ej.CSRDelayLayout.build(A.data, A.indices, A.indptr, delays, shape=(2, 3))
        _close(ej.csr_delay_deliver_layout(ring, spikes, layout, 0), out)

    def test_weighted_array_is_graded_events(self):
        # be: WeightedArray
        x = ej.WeightedArray(jnp.array([0., 2.]))
        _close(x @ ej.CSR.fromdense(DENSE), 2 * DENSE[1])


class TestPerSynapse:
    def test_csr_and_csc_forms_are_weight_times_row_or_column(self):
        # be: csrmv_dt2t(y, w, indices, indptr, shape=..., transpose=...)
        # be: csrmm_dt2t(y, w, indices, indptr, shape=..., transpose=...)
        # be: cscmv_dt2t
        # be: cscmm_dt2t
        A = ej.CSR.fromdense(DENSE)
        y = jnp.array([1., 10.])
        _close(ej.csrmv_dt2t(y, A.data, A.indices, A.indptr, shape=(2, 3)), [2., 30., 40.])
        _close(ej.csrmm_dt2t(y[None], A.data[None], A.indices, A.indptr, shape=(2, 3)), [[2., 30., 40.]])
        C = ej.CSC.fromdense(DENSE)
        _close(ej.cscmv_dt2t(y, C.data, C.indices, C.indptr, shape=(2, 3)), [30., 2., 40.])
        _close(ej.cscmm_dt2t(y[None], C.data, C.indices, C.indptr, shape=(2, 3)), [[30., 2., 40.]])

    def test_fcn_forms_have_the_shape_of_indices(self):
        # be: fcnmv_dt2t(weights, indices, y, shape=..., transpose=...)
        # be: fcnmm_dt2t
        w, idx = jnp.array([[0.5, 1.0], [1.5, 2.0]]), jnp.array([[0, 1], [1, 2]])
        _close(ej.fcnmv_dt2t(w, idx, jnp.array([1., 2., 3.]), shape=(2, 3), transpose=True), [[0.5, 2.], [3., 6.]])
        _close(ej.fcnmm_dt2t(w, idx, jnp.array([[10., 20.]]), shape=(2, 3), transpose=False),
               [[[5., 10.], [30., 40.]]])

    def test_jit_forms_give_one_value_per_generated_connection(self):
        # be: jitsmv_dt2t(weight, prob, y, seed, shape=..., transpose=..., corder=...)
        # be: jitumv_dt2t(w_low, w_high, prob, y, seed, shape=...)
        # be: jitnmv_dt2t(w_loc, w_scale, prob, y, seed, shape=...)
        y = jnp.array([1., 10.])
        _close(ej.jitsmv_dt2t(0.5, 1.0, y, 0, shape=(2, 2), corder=False), [0.5, 0.5, 5., 5.])
        _close(ej.jitumv_dt2t(2.0, 2.0, 1.0, y, 0, shape=(2, 2), transpose=True), [2., 20., 2., 20.])
        _close(ej.jitnmv_dt2t(1.0, 0.0, 1.0, y, 0, shape=(2, 2)), [1., 1., 10., 10.])

    def test_container_dt2t(self):
        # be: CSR.dt2t(y, w)
        A = ej.CSR.fromdense(DENSE)
        _close(A.dt2t(jnp.array([1., 10.]), jnp.ones(3)), [1., 10., 10.])
        _close(A.dt2t_transposed(jnp.array([1., 2., 3.])), [4., 3., 12.])

