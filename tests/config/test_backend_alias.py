"""brainevent's backend name 'jax_raw' means 'jax': an alias the jax bridge declares."""


class TestBackendAlias:
    def test_jax_raw_is_another_name_for_jax_and_other_names_pass_through(self):
        from eventjax.config import normalize_backend

        assert [normalize_backend(b) for b in ('jax_raw', 'jax', 'numba', 'mine')] == ['jax', 'jax', 'numba', 'mine']

    def test_the_aliases_are_the_ones_the_bridges_declare(self):
        from eventjax.backends.registry import backend_aliases
        from eventjax.config import normalize_backend
        from eventjax.config.snapshot import register_backend_aliases

        try:
            register_backend_aliases({**backend_aliases(), 'mine': 'numba'})
            assert (normalize_backend('mine'), normalize_backend('jax_raw')) == ('numba', 'jax')
        finally:
            register_backend_aliases(backend_aliases())
        assert normalize_backend('mine') == 'mine'
