"""The benchmarks' tests run under the rules of tests/: strict dtype promotion, a clean global config per test."""

from tests.conftest import _clean_global_backends  # noqa: F401  (an autouse fixture)
