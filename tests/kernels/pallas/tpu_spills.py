"""The pallas TPU scatter keeps its scalars in SMEM at 100,000 rows and more: checked in libtpu's compile for a v5e.

libtpu keeps the scalars a kernel spills in the SMEM its arrays leave; with
too little left it spills them to HBM, each spill and fill a DMA that the
kernel waits for (a CSR ``s @ W`` at 100,000 rows in one program took 6x the
FCN product's time so). Run in a process of its own, like ``tpu_compile``
(``make test-tpu`` does, through ``test_tpu_compile.py``)::

    JAX_PLATFORMS= TPU_ACCELERATOR_TYPE=v5litepod-1 TPU_WORKER_HOSTNAMES=localhost \\
        python -m tests.kernels.pallas.tpu_spills

libtpu writes the final bundles of every program it compiles to a temporary
folder, which is searched for those DMAs. Exit status 1 if any.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import tempfile

ROWS, K = 100_000, 100
_SPILLS = ('dma.smem_to_hbm', 'dma.hbm_to_smem')


def _spills(folder: pathlib.Path) -> int:
    return sum(path.read_text(errors='replace').count(op) for path in folder.glob('*final_bundles.txt')
               if 'schedule-analysis' not in path.name for op in _SPILLS)


def main() -> int:
    folder = pathlib.Path(tempfile.mkdtemp(prefix='eventjax-spills-'))
    # Read when libtpu starts, so set before JAX does.
    os.environ['LIBTPU_INIT_ARGS'] = (f'{os.environ.get("LIBTPU_INIT_ARGS", "")} --xla_jf_dump_to={folder} '
                                      '--xla_jf_dump_llo_text=true --xla_jf_dump_llo_pass_label_regex=final_bundles')
    import jax  # noqa: PLC0415 - after the environment is set
    import jax.numpy as jnp  # noqa: PLC0415
    from jax.experimental import topologies  # noqa: PLC0415

    import eventjax as ej  # noqa: PLC0415
    from tests.kernels.pallas.tpu_compile import TOPOLOGY  # noqa: PLC0415

    device = jax.sharding.SingleDeviceSharding(topologies.get_topology_desc(TOPOLOGY, 'tpu').devices[0])

    def spec(shape, dtype):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=device)

    def csr(m):
        return (lambda s, w, i, p: ej.binary_csrmv(w, i, p, s, shape=(m, m), transpose=True, backend='pallas',
                                                   validate=False),
                [spec((m * K,), jnp.float32), spec((m * K,), jnp.int32), spec((m + 1,), jnp.int32)])

    def fcn(m):
        return (lambda s, w, i: ej.binary_fcnmv(w, i, s, shape=(m, m), transpose=True, backend='pallas',
                                                validate=False),
                [spec((m, K), jnp.float32), spec((m, K), jnp.int32)])

    # 200,000 FCN rows: past one program's rows, in blocks.
    cases = [('binary_csrmv s @ W', ROWS, csr), ('binary_fcnmv s @ W', ROWS, fcn),
             ('binary_fcnmv s @ W', 2 * ROWS, fcn)]
    failed = 0
    try:
        for name, m, case in cases:
            for path in folder.iterdir():
                path.unlink()
            fn, operands = case(m)
            jax.jit(fn).trace(spec((m,), jnp.bool_), *operands).lower(lowering_platforms=('tpu',)).compile()
            count = _spills(folder)
            failed += count > 0
            print(f'{name}, {m:,} rows, {K} entries a row: {count} scalar spills to HBM', flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print('no spills to HBM' if not failed else f'{failed} of {len(cases)} kernels spill scalars to HBM')
    return 1 if failed else 0


if __name__ == '__main__':
    from tests.kernels.pallas.tpu_compile import ENV

    os.environ.update(ENV)
    sys.exit(main())
