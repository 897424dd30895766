"""`eventjax info --kernel NAME` prints, per platform, the kernel that runs and each wrap around it, with file and
line; every file:line it prints names the function it says."""

import pathlib
import re

import pytest

import eventjax as ej
from eventjax.cli import main
from eventjax.kernels.common.chain import kernel_chain

ROOT = pathlib.Path(ej.__file__).resolve().parent.parent
HOP = re.compile(r'^  (\S+):(\d+)  (\S+): (.*)$')


@pytest.fixture(autouse=True)
def _loaded():
    ej.get_registry()  # the standard primitives register when first used


def _hops(lines, platform):
    start = next(i for i, line in enumerate(lines) if line.startswith(f'{platform}: '))
    out = []
    for line in lines[start + 1:]:
        m = HOP.match(line)
        if not m:
            break
        out.append((m.group(1), int(m.group(2)), m.group(3), m.group(4)))
    return lines[start], out


def _names_it(path, line, label):
    """Line ``line`` of ``path`` defines (or assigns) the last part of ``label``."""
    text = (ROOT / path).read_text().splitlines()[line - 1]
    name = label.rsplit('.', 1)[-1]
    return re.search(rf'\bdef {name}\b|\b{name}\b[\w, ]*=', text) is not None


def test_numba_on_the_cpu_is_the_bridge_adapter_then_the_family_kernel():
    head, hops = _hops(kernel_chain('binary_csrmv', 'numba'), 'cpu')
    assert head.startswith('cpu: numba')
    assert [path for path, *_ in hops] == ['eventjax/backends/numba/__init__.py', 'eventjax/kernels/csr/numba_impl.py']
    assert hops[-1][3] == 'the kernel generator'
    for path, line, label, _ in hops:
        assert _names_it(path, line, label), (path, line, label)


def test_each_wrap_of_a_declaration_is_shown_where_it_applies():
    _, numba = _hops(kernel_chain('csr_on_pre', 'numba'), 'cpu')
    _, jax_cpu = _hops(kernel_chain('csr_on_pre', 'jax'), 'cpu')
    # numba repairs inside its kernels and takes the bounds as an operand; the jax kernel gets the repair in JAX.
    assert numba[0][3] == 'the declaration: bounds as operand'
    assert jax_cpu[0][3] == 'the declaration: prepare in JAX'
    assert jax_cpu[0][0] == 'eventjax/kernels/common/operator.py'
    for path, line, label, _ in numba + jax_cpu:
        assert _names_it(path, line, label), (path, line, label)


def test_a_platform_without_the_backend_says_what_it_has():
    lines = kernel_chain('binary_csrmv', 'numba')
    assert any(line.startswith('tpu: no numba kernel (registered: jax') for line in lines)


def test_without_a_backend_each_platform_shows_the_kernel_a_call_picks():
    lines = kernel_chain('csrmv')
    with ej.config.override(cpu='jax'):
        overridden = kernel_chain('csrmv')
    assert next(line for line in overridden if line.startswith('cpu: ')).startswith('cpu: jax')
    assert len(lines) > 3


def test_unknown_names_get_a_clear_error():
    with pytest.raises(ValueError, match="'binary_csrm' is not a registered primitive. Did you mean 'binary_csrmv'"):
        kernel_chain('binary_csrm')
    with pytest.raises(ValueError, match="binary_csrmv has no 'nope' kernel on any platform"):
        kernel_chain('binary_csrmv', 'nope')


def test_the_command_prints_the_chain(capsys):
    assert main(['info', '--kernel', 'binary_csrmv', '--backend', 'numba']) == 0
    out = capsys.readouterr().out
    assert 'cpu: numba' in out and 'eventjax/kernels/csr/numba_impl.py:' in out
    assert main(['info', '--kernel', 'nope']) == 2
    assert 'is not a registered primitive' in capsys.readouterr().err
    assert main(['info', '--backend', 'numba']) == 2

