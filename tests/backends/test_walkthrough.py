"""The READMEs' walk-throughs work as written: a toy backend and a toy operator family.

The code blocks of ``backends/README.md`` and ``kernels/README.md`` whose
first line names a file are written into a copy of the package, the one line
the backend README asks for is added to ``registry.py`` and its method to
``custom_kernel.py``, and a fresh process
checks the result against NumPy.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import eventjax

PACKAGE = pathlib.Path(eventjax.__file__).parent

CHECK = """
import warnings
import jax, jax.numpy as jnp, numpy as np
import eventjax as ej
from eventjax.kernels.toy import toy_densemm, toy_densemv

# The toy backend: a def_toy_kernel method, an availability report, a known name.
p = ej.XLACustomKernel('walkthrough_square')
p.def_jax_kernel(lambda outs: lambda x: (x * x,))
p.def_toy_kernel(lambda outs: lambda x: (np.square(x),))
assert p.available_backends('cpu') == ('jax', 'toy'), p.available_backends('cpu')
report = ej.backends_available()['toy']
assert report['cpu'].available and not report['gpu'].available and 'CPU only' in report['gpu'].reason
x = jnp.arange(4.0)
np.testing.assert_allclose(p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend='toy'), x * x)
with warnings.catch_warnings():
    warnings.simplefilter('error')
    ej.set_backend('cpu', 'toy')
ej.clear_backends()

# The toy operators, on both backends: values, jit, grad and vmap against NumPy.
rng = np.random.default_rng(0)
W = jnp.asarray(rng.normal(size=(3, 4)), jnp.float32)
v, u = jnp.asarray(rng.normal(size=4), jnp.float32), jnp.asarray(rng.normal(size=3), jnp.float32)
V = jnp.asarray(rng.normal(size=(5, 4)), jnp.float32)
for backend in ('jax', 'toy'):
    np.testing.assert_allclose(toy_densemv(W, v, backend=backend), W @ v, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(lambda W, u: toy_densemv(W, u, transpose=True, backend=backend))(W, u),
                               u @ W, rtol=1e-5)
    gw, gv = jax.grad(lambda W, v: toy_densemv(W, v, backend=backend).sum(), argnums=(0, 1))(W, v)
    np.testing.assert_allclose(gw, np.outer(np.ones(3), v), rtol=1e-5)
    np.testing.assert_allclose(gv, W.sum(0), rtol=1e-5)
    batched = jax.vmap(lambda v: toy_densemv(W, v, backend=backend))(V)
    np.testing.assert_allclose(batched, V @ W.T, rtol=1e-5)
    np.testing.assert_allclose(toy_densemm(W, V.T, backend=backend), W @ V.T, rtol=1e-5)
assert toy_densemv(W, v, backend='toy').dtype == jnp.float32
print('walkthrough ok')
"""

# The backend README's C++ kernel, checked under jit, vmap and grad.
CHECK_CPP = """
from eventjax.backends.native import build as native_build
if native_build.cpp_toolchain().path:
    np.testing.assert_allclose(y, [0.0, 1.0, 4.0, 9.0])
    sds = lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype)
    f = jax.jit(lambda x: square(x, outs=sds(x), backend='cpp'))
    np.testing.assert_allclose(f(x + 1), (x + 1) ** 2)
    np.testing.assert_allclose(jax.vmap(lambda x: square(x, outs=sds(x), backend='cpp'))(jnp.stack([x, 2 * x])),
                               np.stack([x ** 2, 4 * x ** 2]))
    np.testing.assert_allclose(jax.grad(lambda x: square(x, outs=sds(x), backend='cpp').sum())(x), 2 * x)
    print('cpp walkthrough ok')
"""


def _code_blocks(readme: pathlib.Path) -> dict[str, str]:
    """``{path inside the package: text}`` for every block whose first line is ``# eventjax/<path>``."""
    blocks = re.findall(r'```python\n# eventjax/(\S+)\n(.*?)```', readme.read_text(), re.S)
    return dict(blocks)


def test_the_readme_walkthroughs_add_a_backend_and_an_operator_family(tmp_path):
    copy = tmp_path / 'eventjax'
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns('__pycache__'))
    files = {**_code_blocks(PACKAGE / 'backends' / 'README.md'), **_code_blocks(PACKAGE / 'kernels' / 'README.md')}
    assert set(files) >= {'backends/toy.py', 'kernels/toy/toy_densemv.py', 'kernels/toy/__init__.py'}
    for rel, text in files.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text(text)
    # Step 2 of the backend walk-through: import the bridge, add one line to BRIDGES.
    registry = copy / 'backends' / 'registry.py'
    text = registry.read_text()
    text = re.sub(r'from eventjax\.backends import (native, numba,)', r'from eventjax.backends import toy, \1', text,
                  count=1)
    bridges = r'(BRIDGES: tuple\[Bridge, \.\.\.\] = \(\n(?:    .*\n)*?)\)'
    text, added = re.subn(bridges, r'\1    toy.BRIDGE,\n)', text)
    assert added == 1 and 'import toy, ' in text
    registry.write_text(text)
    # Step 3: the bridge's method, at the end of XLACustomKernel (the last thing in its module).
    method = re.search(r'```python\n# walkthrough: method\n(.*?)```', (PACKAGE / 'backends' / 'README.md').read_text(),
                       re.S)
    assert method, 'the backend README lost its method block'
    custom_kernel = copy / 'backends' / 'custom_kernel.py'
    custom_kernel.write_text(custom_kernel.read_text().rstrip('\n') + '\n\n' + method.group(1))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    readme_cpp = re.search(r'```python\n# walkthrough: cpp\n(.*?)```', (PACKAGE / 'backends' / 'README.md').read_text(),
                           re.S)
    assert readme_cpp, 'the backend README lost its cpp walk-through block'
    script = CHECK + readme_cpp.group(1) + CHECK_CPP
    run = subprocess.run([sys.executable, '-c', script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert 'walkthrough ok' in run.stdout
    from eventjax.backends.native import build as native_build

    assert 'cpp walkthrough ok' in run.stdout or not native_build.cpp_toolchain().path
