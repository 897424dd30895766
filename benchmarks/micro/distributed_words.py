"""Received spikes into the event product: unpack then the bool product, or the packed product on the words.

One step of the multi-process exchange on a one-device mesh (the gather
moves the same ``n / 8`` bytes either way, so what differs is the work
after it): ``all_gather_spikes`` then ``binary_csrmv`` against
``all_gather_spike_words`` then ``binary_csrmv_packed``, 100 synapses per
neuron, the events family's arrays, timed in alternating blocks::

    python -m benchmarks.micro.distributed_words                 # n 100000, rates 0.02 0.001, numba
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import eventjax as ej
from benchmarks.events_arrays import events_problem
from benchmarks.timing import interleaved_us
from eventjax import distributed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--n', type=int, default=100_000)
    parser.add_argument('--rates', nargs='+', type=float, default=[0.02, 0.001])
    parser.add_argument('--backend', default='numba')
    args = parser.parse_args(argv)
    n, mesh = args.n, Mesh(jax.devices()[:1], ('p',))
    for rate in args.rates:
        data, indices, indptr, spikes = (jnp.asarray(a) for a in events_problem(n, np.random.default_rng(0), rate,
                                                                                 k=100))

        def unpacked(d, i, p, s):
            full = distributed.all_gather_spikes(s, 'p')
            return ej.binary_csrmv(d, i, p, full, shape=(n, n), transpose=True, backend=args.backend,
                                   validate=False)

        def packed(d, i, p, s):
            words = distributed.all_gather_spike_words(s, 'p')
            return ej.binary_csrmv_packed(d, i, p, words, shape=(n, n), transpose=True, backend=args.backend,
                                          validate=False)

        calls = []
        for fn in (unpacked, packed):
            f = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=(P(), P(), P(), P('p')), out_specs=P(),
                                      check_vma=False))
            compiled = f.lower(data, indices, indptr, spikes).compile()
            operands = (data, indices, indptr, spikes)
            calls.append(lambda c=compiled, a=operands: c(*a).block_until_ready())
        a, b = jax.device_get(calls[0]()), jax.device_get(calls[1]())
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
        us = interleaved_us(calls, budget_s=1.0, max_calls=400)
        print(f'n={n} rate={rate:.1%} {args.backend}: unpack + bool {us[0]:.1f} us, packed words {us[1]:.1f} us '
              f'({us[1] / us[0]:.2f}x)')


if __name__ == '__main__':
    main()
