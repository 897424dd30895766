"""An ASGI service for eventjax: event-driven products and one E/I network step on posted spikes.

Start it with one command (the ``serve`` extra installs FastAPI and uvicorn)::

    python docs/examples/serving/app.py --port 8000 --backend numba

At start-up it sets the process-wide backend, builds the network, and
compiles every served call for every served backend (and every batch size
of the dynamic batcher) before it accepts a request. Endpoints:

- ``GET /health``: the global backend, the served backends, warm-up seconds, and how
  many batched requests were cancelled because their client went away.
- ``GET /network``: the connectivity, so a client can compute NumPy answers.
- ``POST /product``: ``{"spikes": [indices], "backend": opt}`` -> ``{"y": [...]}``,
  the synaptic input of every neuron; ``POST /product/batched`` is the same
  through a :class:`eventjax.serving.DynamicBatcher` (a client that disconnects
  cancels its request in the batcher).
- ``POST /step``: ``{"spikes": [...], "v": [...], "ge": [...], "gi": [...]}``
  (``v`` defaults to the initial potentials, ``ge``/``gi`` to zeros) ->
  the state after one 0.1 ms step and the indices of the neurons that fired.
- ``POST /admin/backend``: ``{"backend": name or null}`` -> ``set_backend('cpu', ...)``
  followed by a fresh warm-up, so the requests after it pay no compile.

Bad requests (a wrong length, an index out of range, an unknown backend, a
state value that is not a finite float32) get a 4xx answer whose ``detail``
is the error text. Endpoints that call JAX are plain ``def`` functions, so
they run in the server's thread pool (the batched one awaits the batcher's
worker): JAX calls never block the event loop, and each request's
``backend=`` is passed per call
(``config.override`` is refused inside coroutine tasks).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import pathlib
import sys
import time

import jax.numpy as jnp
import numpy as np
from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict

import eventjax as ej
from eventjax.serving import DynamicBatcher, Warmup

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import network  # noqa: E402  (the example's own module, beside this file)


class ProductRequest(BaseModel):
    spikes: list[int]
    backend: str | None = None


class StepRequest(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)  # a literal NaN or Infinity (or 1e400) gets a 422

    spikes: list[int]
    v: list[float] | None = None
    ge: list[float] | None = None
    gi: list[float] | None = None
    backend: str | None = None


class BackendRequest(BaseModel):
    backend: str | None


F32_MAX = float(np.finfo(np.float32).max)


def reply(obj, status: int = 200) -> Response:
    """A JSON response built with ``json.dumps``: FastAPI's default encoder walks every float in Python.

    Strict JSON (``allow_nan=False``): a NaN would be an answer many parsers reject.
    """
    return Response(json.dumps(obj, allow_nan=False), status_code=status, media_type='application/json')


def strict(value):
    """``value`` if strict JSON can hold it, else its ``repr`` (``nan``, ``inf``)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def available_backends() -> list[str]:
    """The cpu backends of ``binary_csrmv`` that can run here."""
    status = ej.backends_available()
    return [b for b in ej.primitives()['binary_csrmv']['cpu'] if status[b]['cpu'].available]


class Service:
    """The network, its compiled functions, the batcher and the warm-up registry."""

    def __init__(self, n: int, backends: list[str], max_batch: int, max_wait_s: float) -> None:
        self.net = network.make_network(n)
        self.n = n
        self.backends = backends
        self.fns = network.jax_functions(self.net)
        self.batcher = DynamicBatcher(self.fns['product_rows'], max_batch=max_batch, max_wait_s=max_wait_s)
        self.warm = Warmup()
        zeros_f, zeros_b = np.zeros(n, np.float32), np.zeros(n, bool)
        served = [None, *backends]
        self.warm.add('product', self.fns['product'], zeros_b, backends=served)
        self.warm.add('step', self.fns['step'], zeros_f, zeros_f, zeros_f, zeros_b, backends=served)
        self.warm.add('batched', lambda backend=None: self.batcher.warmup(zeros_b, [backend]), backends=served)
        self.warmup_s: dict[str, float] = {}
        self.cancelled = 0  # batched requests whose client went away before the answer

    def backend(self, name: str | None) -> str | None:
        if name is not None and name not in self.backends:
            raise HTTPException(400, f'backend {name!r} is not served here; choose one of '
                                     f'{", ".join(map(repr, self.backends))}, or omit it for the default.')
        return name

    def spikes(self, indices: list[int]) -> np.ndarray:
        bad = [i for i in indices if not 0 <= i < self.n]
        if bad:
            raise HTTPException(422, f'spikes: indices must lie in [0, {self.n}), got {bad[:5]}; '
                                     f'send the indices of the neurons that fired.')
        out = np.zeros(self.n, bool)
        out[indices] = True
        return out

    def vector(self, name: str, values: list[float] | None, default: np.ndarray) -> np.ndarray:
        if values is None:
            return default
        if len(values) != self.n:
            raise HTTPException(422, f'{name}: expected {self.n} values (one per neuron), got {len(values)}.')
        wide = np.asarray(values, np.float64)
        bad = np.flatnonzero(~(np.abs(wide) <= F32_MAX))  # NaN fails the test too
        if bad.size:
            raise HTTPException(422, f'{name}: every value must be a finite float32 (|x| <= {F32_MAX:.3g}); '
                                     f'entry {bad[0]} is {values[bad[0]]!r}.')
        return wide.astype(np.float32)


def create_app(n: int = 4000, backend: str | None = None, backends: list[str] | None = None,
               max_batch: int = 32, max_wait_s: float = 300e-6, warmup: bool = True) -> FastAPI:
    """The FastAPI app; start-up sets ``backend`` globally and warms every served call."""
    served = backends or available_backends()
    service = Service(n, served, max_batch, max_wait_s)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        # set_backend first: it changes the jit key, so warming before it would be wasted.
        ej.set_backend('cpu', backend)
        start = time.perf_counter()
        service.warmup_s = service.warm.run() if warmup else {}
        service.warmup_s['total'] = time.perf_counter() - start
        yield
        service.batcher.close()

    app = FastAPI(title='eventjax serving example', lifespan=lifespan)
    app.state.service = service

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError):
        # FastAPI echoes each bad input back; a NaN or Infinity there would make the answer invalid JSON.
        return reply({'detail': [{**e, 'input': strict(e.get('input'))} for e in jsonable_encoder(exc.errors())]},
                     422)

    @app.get('/health')
    def health():
        return {'status': 'ok', 'backend': ej.get_backend('cpu'), 'backends': service.backends,
                'n': service.n, 'warmup_s': service.warmup_s, 'cancelled': service.cancelled}

    @app.get('/network')
    def get_network():
        return reply({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in service.net.items()})

    @app.post('/product')
    def product(req: ProductRequest):
        b, s = service.backend(req.backend), service.spikes(req.spikes)
        return reply({'y': np.asarray(service.fns['product'](jnp.asarray(s), backend=b)).tolist()})

    @app.post('/product/batched')
    async def product_batched(req: ProductRequest, request: Request):
        # A coroutine: the batcher's worker does the JAX call, the loop only awaits it, and a client that
        # goes away cancels its request, which the batcher then skips if it has not run yet.
        b, s = service.backend(req.backend), service.spikes(req.spikes)
        answer = asyncio.ensure_future(service.batcher.call_async(s, backend=b))
        deadline = time.monotonic() + 60
        while not answer.done():
            await asyncio.wait({answer}, timeout=0.05)
            if answer.done():
                break
            if await request.is_disconnected() or time.monotonic() > deadline:
                answer.cancel()
                service.cancelled += 1
                raise HTTPException(503, 'the request was cancelled: the client went away or it took over 60 s.')
        return reply({'y': answer.result().tolist()})

    @app.post('/step')
    def step(req: StepRequest):
        b, s = service.backend(req.backend), service.spikes(req.spikes)
        zeros = np.zeros(service.n, np.float32)
        v = service.vector('v', req.v, service.net['v0'])
        ge, gi = service.vector('ge', req.ge, zeros), service.vector('gi', req.gi, zeros)
        v, ge, gi, fired = (np.asarray(x) for x in service.fns['step'](v, ge, gi, s, backend=b))
        if not all(np.isfinite(x).all() for x in (v, ge, gi)):
            raise HTTPException(422, 'the posted state leaves the float32 range within one step; send potentials '
                                     'in mV and conductances of the size the network produces.')
        return reply({'v': v.tolist(), 'ge': ge.tolist(), 'gi': gi.tolist(), 'spikes': np.flatnonzero(fired).tolist()})

    @app.post('/admin/backend')
    def set_backend(req: BackendRequest):
        start = time.perf_counter()
        timings = service.warm.set_backend('cpu', service.backend(req.backend))
        return {'backend': ej.get_backend('cpu'), 'warmup_s': time.perf_counter() - start,
                'compiled': len(timings)}

    return app


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=8000)
    parser.add_argument('--neurons', type=int, default=4000, help='network size (default 4000, as CUBA)')
    parser.add_argument('--backend', default=None, help='global cpu backend set at start-up')
    parser.add_argument('--backends', nargs='+', help='per-request backends to serve (default: all here)')
    parser.add_argument('--max-batch', type=int, default=32)
    parser.add_argument('--max-wait-us', type=float, default=300.0)
    parser.add_argument('--no-warmup', action='store_true', help='skip the start-up compile (to measure it)')
    args = parser.parse_args(argv)
    import uvicorn

    app = create_app(args.neurons, args.backend, args.backends, args.max_batch, args.max_wait_us * 1e-6,
                     not args.no_warmup)
    # A keep-alive longer than uvicorn's 5 s default: under heavy load a client may reuse a
    # connection just as the server times it out, which the client sees as a dropped connection.
    uvicorn.run(app, host=args.host, port=args.port, log_level='warning', timeout_keep_alive=30)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
