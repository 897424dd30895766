"""The route of one call drawn on docs/architecture.rst is the code's: every place it names is defined where it
says, the places are few and never repeat a file, a traced call passes them in order, and the end of the route is
the chain `eventjax info --kernel` prints."""

import importlib
import inspect
import pathlib
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.chain import kernel_chain
from eventjax.kernels.csr.binary_csrmv import binary_csrmv

ROOT = pathlib.Path(__file__).parent.parent
SRC = ROOT / 'src' / 'eventjax'
PAGE = (ROOT / 'docs' / 'architecture.rst').read_text()
# `    3 kernels/common/operator.py     Declaration.bind`
STEP = re.compile(r'^    (\d) (\S+\.py)\s+(.+)$', re.MULTILINE)


def _route():
    """``(number, file, names)`` per step; a name is ``(defined, run)``: ``standard (its numba_kg)`` names the
    module's ``standard``, whose inner ``numba_kg`` is what a call runs."""
    section = PAGE[PAGE.index('How a call flows'):]
    steps = []
    for number, path, text in STEP.findall(section):
        names = []
        for item in re.split(r',\s*', text.strip()):
            its = re.search(r'\(its (\w+)\)', item)
            defined = re.sub(r'\([^)]*\)', '', item).strip()
            names.append((defined, its.group(1) if its else defined.rsplit('.', 1)[-1]))
        steps.append((int(number), path, names))
    return steps


def _defined(path, dotted):
    module = importlib.import_module('eventjax.' + path.removesuffix('.py').removesuffix('/__init__').replace('/', '.'))
    obj = module
    for part in dotted.split('.'):
        obj = getattr(obj, part)
    return pathlib.Path(inspect.getsourcefile(obj)).resolve() == (SRC / path).resolve()


def test_the_route_is_short_and_passes_each_file_once():
    steps = _route()
    assert [n for n, _, _ in steps] == list(range(1, len(steps) + 1))
    assert len(steps) <= 8
    files = [path for _, path, _ in steps]
    assert len(set(files)) == len(files), files


def test_every_place_drawn_defines_what_it_names():
    for _, path, names in _route():
        assert (SRC / path).is_file(), path
        for defined, _ in names:
            assert _defined(path, defined), (path, defined)


def test_the_route_ends_in_the_chain_info_prints():
    lines = kernel_chain('binary_csrmv', 'numba')
    start = lines.index(next(line for line in lines if line.startswith('cpu: numba')))
    printed = [line.split()[0].split(':')[0].removeprefix('eventjax/') for line in lines[start + 1:]
               if line.startswith('  ')]
    drawn = [path for _, path, _ in _route()]
    assert drawn[-len(printed):] == printed


def test_a_traced_call_passes_the_places_in_the_order_drawn():
    calls = []

    def profile(frame, event, arg):
        if event == 'call':
            calls.append((frame.f_code.co_filename, frame.f_code.co_name))

    n = 37  # a shape no other test lowers, so the call lowers here
    data, indices = jnp.ones(n, jnp.float32), jnp.arange(n, dtype=jnp.int32) % 5
    indptr = jnp.asarray(np.arange(n + 1, dtype=np.int32))
    spikes = jnp.zeros(n, bool).at[3].set(True)
    sys.setprofile(profile)
    try:
        jax.jit(lambda d: binary_csrmv(d, indices, indptr, spikes, shape=(n, 5), transpose=True,
                                       backend='numba')).lower(data)
    finally:
        sys.setprofile(None)
    position = 0
    for _, path, names in _route():
        for _, run in names:
            wanted = (str((SRC / path).resolve()), run)
            found = next((i for i in range(position, len(calls))
                          if (str(pathlib.Path(calls[i][0]).resolve()), calls[i][1]) == wanted), None)
            assert found is not None, f'{path}: {run} is not called after the step before'
            position = found
