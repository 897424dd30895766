#!/usr/bin/env bash
# eventjax's GPU checks, for a machine with an NVIDIA GPU and no network access:
#   a GPU build of warp-lang 1.19 is unpacked from .gpu/a/ and .gpu/b/ (an xz tar split in parts,
#   made beforehand on a machine with network access), then the GPU tests of the bridges and of
#   every kernel family run with JAX's default platform = gpu (the cuda backend's C++/CUDA kernels
#   built with the toolkit's nvcc, numba_cuda's kernels compiled to PTX by numba-cuda), then a
#   short timing. Results go to $OUT (default /tmp/gpu-out).
# numba-cuda's wheels go in .gpu/numba_cuda/ beforehand
#   (pip download --no-deps --only-binary=:all: -d .gpu/numba_cuda 'numba-cuda>=0.30,<0.31'
#    'cuda-bindings>=13,<14' 'cuda-core>=0.5,<2' 'cuda-pathfinder>=1.4,<2' 'nvidia-cuda-nvrtc>=13,<14');
#   without them the numba_cuda tests skip, saying numba-cuda is not installed.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" /tmp/site
cat $(ls .gpu/a/part_* .gpu/b/part_* 2>/dev/null | sort -t_ -k2 -u) | xz -d | tar xf - -C /tmp/site || { echo "cannot unpack warp"; exit 2; }
export PYTHONPATH=/tmp/site:$PWD/src:$PWD
export NUMBA_CACHE_DIR=/tmp/numba_cache PYTHONUNBUFFERED=1
# several test processes share one GPU: none may grab most of its memory up front
export XLA_PYTHON_CLIENT_PREALLOCATE=false
if ls .gpu/numba_cuda/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/numba_cuda/*.whl || echo "cannot install numba-cuda"
  # numba-cuda's .pth (which makes `numba.cuda` its package) runs only from a site folder
  printf 'import site\nsite.addsitedir("/tmp/site")\n' > /tmp/site/sitecustomize.py
fi
nvidia-smi -L
python3 -c "import jax, jaxlib, warp, numba, sys; print(sys.version.split()[0], 'jax', jax.__version__, 'warp', warp.__version__, 'numba', numba.__version__); print(jax.devices())"
python3 -c "import eventjax as ej; s = ej.backends_available(); print({b: {p: bool(v) for p, v in d.items()} for b, d in s.items()})"
python3 -m pytest -q -p no:cacheprovider -o addopts="" \
  "tests/backends/test_warp_bridge.py::TestGpu" "tests/backends/test_pallas_bridge.py::TestGpuCompiled" \
  "tests/backends/test_native_bridge.py::TestCudaBuild" "tests/backends/test_numba_cuda_bridge.py" \
  2>&1 | tee "$OUT/bridges.log" | tail -15
timeout 330 python3 -m pytest -q -p no:cacheprovider -o addopts="" -n 6 tests/kernels -k "warp or jax or cuda" \
  2>&1 | tee "$OUT/kernels.log" | tail -40
timeout 60 python3 tools/gpu_timing.py 2>&1 | tee "$OUT/timing.log"
timeout 120 python3 tools/gpu_numba_cuda_timing.py 2>&1 | tee "$OUT/numba_cuda_timing.log"
