"""These tests need 4 devices: ``tests/test_multidevice.py`` runs them in a process of their own.

That process sets ``XLA_FLAGS=--xla_force_host_platform_device_count=4``
before JAX starts; in an ordinary run (one CPU device) nothing here is
collected.
"""

import jax

collect_ignore_glob = [] if jax.device_count() >= 4 else ['test_*.py']
