"""A backend name nobody has warns, wherever it is given: set_backend and override alike."""

import os
import subprocess
import sys
import warnings

import pytest

import eventjax as ej
from eventjax.errors import UnknownBackendWarning


class TestOverride:
    def test_a_typo_in_override_warns_like_set_backend(self):
        with pytest.warns(UnknownBackendWarning, match=r"override\(cpu='nunba'\).*Did you mean 'numba'"):
            with ej.config.override(cpu='nunba'):
                pass

    def test_the_warning_points_at_the_callers_line(self):
        with pytest.warns(UnknownBackendWarning) as record:
            with ej.config.override(gpu='wrap'):
                pass
        assert record[0].filename == __file__

    def test_a_known_backend_in_override_is_silent(self):
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            with ej.config.override(cpu='jax', gpu='warp'):
                pass

    def test_a_typo_warns_once_per_platform_and_name(self):
        with pytest.warns(UnknownBackendWarning):
            with ej.config.override(tpu='palas'):
                pass
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            with ej.config.override(tpu='palas'):
                pass


# A fresh process: no test primitive with a cpu pallas kernel, interpret mode off.
_FRESH = """
import warnings
import eventjax as ej
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    ej.set_backend('cpu', 'pallas')
    ej.set_backend('gpu', 'pallas')
    ej.set_backend('cpu', 'warp')
print(ej.get_backend('cpu'))
for w in caught:
    print(type(w.message).__name__, '|', w.message)
"""


def test_a_backend_no_primitive_has_on_the_platform_is_loud():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), EVENTJAX_PALLAS_INTERPRET='0')
    out = subprocess.run([sys.executable, '-c', _FRESH], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    warned = [line for line in out if line.startswith('UnknownBackendWarning')]
    # set_backend('cpu', 'pallas') warns, naming why and the backends that exist on the cpu;
    # gpu pallas (a backend eventjax serves there) and cpu warp stay silent.
    assert len(warned) == 1, out
    assert "'pallas' kernel for 'cpu'" in warned[0] and 'interpret mode' in warned[0]
    assert 'numba' in warned[0] and 'jax' in warned[0]
