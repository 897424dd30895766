"""brainevent's backend name 'jax_raw' means 'jax'."""


class TestBackendAlias:
    def test_jax_raw_is_another_name_for_jax_and_other_names_pass_through(self):
        from eventjax.config import normalize_backend

        assert [normalize_backend(b) for b in ('jax_raw', 'jax', 'numba', 'mine')] == ['jax', 'jax', 'numba', 'mine']
