"""A numba kernel's fingerprint covers everything its compiled handler embeds, by value."""

import threading
import types

import numpy as np
import pytest

pytest.importorskip('numba')
import numba  # noqa: E402
import numba.extending  # noqa: E402

from eventjax.backends.numba.keying import describe_kernel, kernel_fingerprint  # noqa: E402


def scale_by(s):
    @numba.njit
    def scale(x, out):
        out[...] = x * s

    return scale


def with_globals(**values):
    """A fresh njit kernel reading the global ``G`` from its own globals dict."""
    glb = {'np': np, **values}
    exec('def k(x, out):\n    out[...] = x * G\n', glb)
    return numba.njit(glb['k'])


@numba.njit
def countdown(n):
    return 0 if n == 0 else countdown(n - 1)


class TestClosures:
    def test_closures_over_equal_arrays_share_a_fingerprint(self):
        assert kernel_fingerprint(scale_by(np.array(2.0))) == kernel_fingerprint(scale_by(np.array(2.0)))

    def test_closures_over_different_arrays_differ(self):
        assert kernel_fingerprint(scale_by(np.array(2.0))) != kernel_fingerprint(scale_by(np.array(3.0)))

    @pytest.mark.parametrize(
        'other',
        [np.array([1, 2], np.int64), np.array([[1], [2]], np.int32), np.asfortranarray(np.ones((2, 2), np.int32))],
        ids=['dtype', 'shape', 'layout'],
    )
    def test_arrays_with_the_same_bytes_but_another_dtype_shape_or_layout_differ(self, other):
        base = np.array([1, 2], np.int32) if other.ndim == 1 or other.shape == (2, 1) else np.ones((2, 2), np.int32)
        assert kernel_fingerprint(scale_by(base)) != kernel_fingerprint(scale_by(other))

    def test_scalars_of_another_type_differ(self):
        assert kernel_fingerprint(scale_by(1)) != kernel_fingerprint(scale_by(1.0))

    def test_a_called_njit_helper_counts_by_its_own_closure(self):
        def caller(helper):
            @numba.njit
            def k(x, out):
                helper(x, out)

            return k

        assert kernel_fingerprint(caller(scale_by(2.0))) != kernel_fingerprint(caller(scale_by(3.0)))


class TestGlobals:
    def test_a_global_array_counts_by_value(self):
        a, b = with_globals(G=np.array(2.0)), with_globals(G=np.array(3.0))
        assert kernel_fingerprint(a) != kernel_fingerprint(b)
        assert kernel_fingerprint(a) == kernel_fingerprint(with_globals(G=np.array(2.0)))

    def test_an_attribute_of_a_user_module_counts_by_value(self):
        def kernel_reading(w):
            mod = types.ModuleType('eventjax_test_user_module')
            mod.W = w
            glb = {'mod': mod}
            exec('def k(x, out):\n    out[...] = x * mod.W\n', glb)
            return numba.njit(glb['k'])

        assert kernel_fingerprint(kernel_reading(np.ones(2))) != kernel_fingerprint(kernel_reading(np.zeros(2)))

    def test_an_attribute_of_a_user_module_held_in_a_closure_cell_counts_by_value(self):
        mod = types.ModuleType('eventjax_test_cell_module')

        def kernel_reading(k):
            mod.K = k
            m = mod

            @numba.njit
            def kern(x, out):
                out[...] = x * m.K

            return kern

        assert kernel_fingerprint(kernel_reading(2.0)) != kernel_fingerprint(kernel_reading(3.0))
        assert kernel_fingerprint(kernel_reading(2.0)) == kernel_fingerprint(kernel_reading(2.0))

    def test_a_recursive_kernel_is_fingerprinted_without_looping(self):
        assert kernel_fingerprint(countdown) is not None

    def test_a_kernel_calling_a_recursive_function_is_keyed_but_not_portable(self):
        @numba.njit
        def calls_countdown(x, out):
            out[...] = x + countdown(3)

        fingerprint, portable = describe_kernel(calls_countdown)
        assert fingerprint is not None and not portable
        assert describe_kernel(scale_by(2.0))[1]


def calling_overloaded(times):
    """A kernel calling a stub whose @overload multiplies by ``times``: kernels and stubs alike but for it."""

    def stub(x):
        return x

    @numba.extending.overload(stub)
    def _impl(x):
        return lambda x: x * times

    @numba.njit
    def kernel(x, out):
        out[...] = stub(x)

    return kernel


class TestOverloads:
    def test_the_implementation_behind_an_overload_counts(self):
        assert kernel_fingerprint(calling_overloaded(2.0)) != kernel_fingerprint(calling_overloaded(3.0))

    def test_equal_overloads_share_a_fingerprint(self):
        assert kernel_fingerprint(calling_overloaded(2.0)) == kernel_fingerprint(calling_overloaded(2.0))


class TestUfuncHelpers:
    @staticmethod
    def caller_of(body, kind='vectorize'):
        """A kernel calling a ``@numba.vectorize`` (or guvectorize) helper defined by ``body`` in a user module."""
        mod = types.ModuleType('eventjax_test_ufunc_helpers')
        exec(f'import numba\n{body}\n', mod.__dict__)
        glb = {'mod': mod, 'helper': mod.helper}
        exec('def k(x, out):\n    out[...] = helper(x)\n', glb)
        return numba.njit(glb['k'])

    def test_a_vectorize_helper_counts_by_its_code_not_its_name(self):
        body = '@numba.vectorize\ndef helper(x):\n    return x + {}'
        one, hundred = self.caller_of(body.format(1.0)), self.caller_of(body.format(100.0))
        assert kernel_fingerprint(one) != kernel_fingerprint(hundred)
        assert kernel_fingerprint(one) == kernel_fingerprint(self.caller_of(body.format(1.0)))

    def test_a_vectorize_helper_counts_by_its_options(self):
        plain = self.caller_of('@numba.vectorize\ndef helper(x):\n    return x + 1.0')
        fast = self.caller_of('@numba.vectorize(fastmath=True)\ndef helper(x):\n    return x + 1.0')
        assert kernel_fingerprint(plain) != kernel_fingerprint(fast)

    def test_a_guvectorize_helper_counts_by_its_code(self):
        body = '@numba.guvectorize("(n)->(n)")\ndef helper(x, o):\n    o[:] = x + {}'
        one, two = self.caller_of(body.format(1.0)), self.caller_of(body.format(2.0))
        assert kernel_fingerprint(one) != kernel_fingerprint(two)


class TestStability:
    def test_the_fingerprint_names_no_address(self):
        text = repr(kernel_fingerprint(scale_by(np.arange(3.0))))
        assert ' at 0x' not in text and '0x7f' not in text

    def test_options_count(self):
        k = scale_by(2.0)
        checked = numba.njit(boundscheck=True)(k.py_func)
        assert kernel_fingerprint(k) != kernel_fingerprint(checked)

    def test_locals_declarations_count(self):
        def total(x, out):
            acc = 0
            for v in x:
                acc += v
            out[0] = acc

        as_int = numba.njit(locals={'acc': numba.int64})(total)
        as_float = numba.njit(locals={'acc': numba.float64})(total)
        assert kernel_fingerprint(as_int) != kernel_fingerprint(as_float)
        assert kernel_fingerprint(as_int) == kernel_fingerprint(numba.njit(locals={'acc': numba.int64})(total))

    def test_fastmath_flags_count_and_keep_the_kernel_cacheable(self):
        k = scale_by(2.0)
        flags = numba.njit(fastmath={'reassoc', 'contract'})(k.py_func)
        fingerprint, portable = describe_kernel(flags)
        assert portable and fingerprint is not None
        assert fingerprint == kernel_fingerprint(numba.njit(fastmath={'contract', 'reassoc'})(k.py_func))
        assert fingerprint != kernel_fingerprint(numba.njit(fastmath={'reassoc'})(k.py_func))
        assert fingerprint != kernel_fingerprint(k)


class TestUnknownValues:
    def test_an_object_of_an_unknown_class_has_no_fingerprint(self):
        class Opaque:
            pass

        assert kernel_fingerprint(scale_by(Opaque())) is None

    def test_a_library_object_without_a_faithful_repr_has_no_fingerprint(self):
        assert kernel_fingerprint(scale_by(threading.Lock())) is None

    def test_a_kernel_made_by_exec_in_no_importable_module_is_keyed_but_not_portable(self):
        # numba re-imports a disk-cached function's module in the next
        # process; code run by exec under a made-up name cannot be re-imported.
        namespace = {'__name__': '<dynamic>', 'numba': numba}
        exec('@numba.njit\ndef k(x, out):\n    out[0] = x[0]\n', namespace)
        fingerprint, portable = describe_kernel(namespace['k'])
        assert fingerprint is not None and not portable
        assert describe_kernel(scale_by(2.0))[1]
