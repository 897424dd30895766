"""Going back and forth between two configurations compiled before: compiles and memory per flip.

The experiment of stress scenario 9 (``stress/config_cycle.py``), timed:
two jitted functions over a 2,000 x 2,000 CSR matrix (5% stored), warmed
under ``set_backend('cpu', 'numba')`` and ``'jax'``, then 1,000 flips with
one call of each after every flip. Compilations are counted from JAX's
monitoring events, not inferred from timings.
"""

from __future__ import annotations

import time

from stress.config_cycle import flip_cycle

FLIPS = 1_000


def main() -> None:
    start = time.perf_counter()
    figures = flip_cycle(FLIPS, seconds=3600.0, workers=0)
    seconds = time.perf_counter() - start - figures['warm_seconds']
    print(f'\n== {figures["flips"]} flips between two warm configurations (numba <-> jax, 2,000 x 2,000 CSR 5%) ==')
    print(f'{"compiles after warm-up":32s}{figures["compiles"]:>10d}')
    print(f'{"traces after warm-up":32s}{figures["traces"]:>10d}')
    print(f'{"RSS growth":32s}{figures["rss_growth_mib"]!s:>10s} MiB')
    print(f'{"per flip (switch + 2 calls)":32s}{seconds / max(figures["flips"], 1) * 1e3:>10.2f} ms')
    if figures['errors']:
        print('wrong results:', *figures['errors'][:5], sep='\n  ')


if __name__ == '__main__':
    main()
