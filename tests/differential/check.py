"""Run one problem on every backend under every transformation and compare.

Each result is compared with the NumPy oracle (so a bug every backend shares
is caught) and with the first backend's result (so backends agree with each
other); an expected error must be raised with the same class everywhere.
What the contract says each transformation must give:

- valid structure: values under eager, jit, vmap, grad and jit(grad);
- invalid structure: ``ValueError`` where it stays concrete (eager, vmap,
  grad), the oracle's values (bad entries dropped) where it is traced
  (jit, jit(vmap), jit(grad));
- a dtype pair JAX refuses to promote: JAX's own error, everywhere.
"""

from __future__ import annotations

import contextlib

import attrs
import jax
import numpy as np

from tests.differential import jitc_oracle, oracle, transforms
from tests.differential.strategies import Problem

CONCRETE = ('eager', 'vmap', 'grad')
TRACED = ('jit', 'jit(vmap)', 'jit(grad)')
VALID = ('eager', 'jit', 'vmap', 'grad', 'jit(grad)')


@attrs.frozen
class Disagreement:
    """One result that differs from the oracle or from the first backend."""

    operator: str
    backend: str
    transform: str
    output: str
    against: str
    message: str

    def line(self) -> str:
        return (f'{self.operator} [{self.backend}, {self.transform}] {self.output} vs {self.against}: '
                f'{self.message}')


@attrs.define
class Outcome:
    """How many comparisons one or more problems made, and what disagreed."""

    problems: int = 0
    calls: int = 0
    comparisons: int = 0
    disagreements: list[tuple[Disagreement, str]] = attrs.field(factory=list)

    def add(self, other: Outcome) -> None:
        self.problems += other.problems
        self.calls += other.calls
        self.comparisons += other.comparisons
        self.disagreements.extend(other.disagreements)

    def summary(self, limit: int = 20) -> str:
        lines = [f'{len(self.disagreements)} disagreements in {self.comparisons} comparisons:']
        for d, problem in self.disagreements[:limit]:
            lines.append(f'  {d.line()}\n      on {problem}')
        return '\n'.join(lines)


@attrs.frozen
class Raised:
    """An exception a call raised, kept as its class and message."""

    cls: type
    message: str


@attrs.frozen
class Expected:
    """What one transformation must give: ``error`` (a class) or ``outputs`` (label, value, vs oracle)."""

    error: type | None = None
    outputs: tuple = ()


def _stack(values: list[oracle.Value]) -> oracle.Value:
    dtype = values[0].dtype
    return oracle.Value(np.stack([v.value for v in values]), np.stack([v.scale for v in values]), dtype)


def _wrt(problem: Problem) -> tuple[int, ...]:
    floating = np.issubdtype(problem.x.dtype, np.floating)
    return (0, len(problem.args) - 1) if floating else (0,)


def expectations(problem: Problem) -> dict[str, Expected]:
    """The contract's answer for each transformation of ``problem``."""
    if problem.family == 'jitc' and (error := jitc_oracle.call_error(problem)) is not None:
        return dict.fromkeys(VALID, Expected(error=error))  # checked before the dtypes
    try:
        oracle.result_dtype(problem)
    except Exception as exc:  # JAX refuses the dtype pair: every call must raise the same
        return dict.fromkeys(VALID, Expected(error=type(exc)))
    orc = jitc_oracle if problem.family == 'jitc' else oracle
    out = (('out', orc.forward(problem, problem.x), True),)
    batch = (('out', _stack([orc.forward(problem, x) for x in problem.xs]), True),)
    grads = [('d weights', orc.weight_grad(problem), True)]
    if len(_wrt(problem)) > 1:
        label = 'd spikes' if problem.binary else 'd x'
        # The event operand's derivative is not part of the contract: backends must only agree.
        grads.append((label, orc.operand_grad(problem), not problem.binary))
    values = {'eager': out, 'jit': out, 'vmap': batch, 'jit(vmap)': batch,
              'grad': tuple(grads), 'jit(grad)': tuple(grads)}
    if oracle.structure_error(problem) is None:
        return {t: Expected(outputs=values[t]) for t in VALID}
    expected = {t: Expected(error=ValueError) for t in CONCRETE}
    expected.update({t: Expected(outputs=values[t]) for t in TRACED})
    return expected


def _cotangent_dtype(problem: Problem) -> np.dtype:
    """The result's dtype; the weights' where JAX refuses the pair (the call itself must then raise)."""
    try:
        return oracle.result_dtype(problem)
    except Exception:  # the refusal is the operator's to report, not the tester's
        return oracle.canonical(problem.structure[0].dtype)


def run(problem: Problem, transform: str, backend: str):
    """The outputs of ``problem`` on ``backend`` under ``transform`` (a tuple), or a :class:`Raised`."""
    kw = {'name': problem.name, 'backend': backend, 'statics': tuple(sorted(problem.statics.items()))}
    try:
        with jax.numpy_dtype_promotion(problem.promotion):
            if transform in ('eager', 'jit'):
                fn = transforms.call if transform == 'eager' else transforms.jit_call
                return (np.asarray(fn(problem.args, **kw)),)
            if transform in ('vmap', 'jit(vmap)'):
                fn = transforms.vmapped if transform == 'vmap' else transforms.jit_vmapped
                return (np.asarray(fn(problem.structure, problem.xs, **kw)),)
            fn = transforms.grad if transform == 'grad' else transforms.jit_grad
            ct = problem.ct.astype(_cotangent_dtype(problem))
            return tuple(np.asarray(g) for g in fn(problem.args, ct, wrt=_wrt(problem), **kw))
    except Exception as exc:  # any error is a result to compare, not a test crash
        return Raised(type(exc), str(exc).splitlines()[0] if str(exc) else '')


def _compare_error(got, want: type, against: str, note) -> None:
    if not isinstance(got, Raised):
        note('result', against, f'returned a value, expected {want.__name__} to be raised')
    elif not issubclass(got.cls, want):
        note('error', against, f'raised {got.cls.__name__} ({got.message}), expected {want.__name__}')


def check_problem(problem: Problem, backends: tuple[str, ...] | None = None, around=None) -> Outcome:
    """Run ``problem`` on every backend and transformation; count comparisons, collect disagreements.

    ``around(what)``, if given, is a context manager entered around each call
    (the stress suite's per-call watchdog).

    Example:
        >>> outcome = check_problem(problem)
        >>> assert not outcome.disagreements, outcome.summary()
    """
    backends = backends or transforms.backends(problem.name)
    outcome = Outcome(problems=1)
    described = problem.describe()
    for transform, expected in expectations(problem).items():
        results = {}
        for b in backends:
            with around(f'{problem.name} [{b}, {transform}]') if around else contextlib.nullcontext():
                results[b] = run(problem, transform, b)
            outcome.calls += 1
        first = backends[0]
        for backend, got in results.items():
            def note(output, against, message, backend=backend, transform=transform):
                outcome.disagreements.append((Disagreement(problem.name, backend, transform, output, against,
                                                           message), described))
            ref = results[first]
            if expected.error is not None:
                outcome.comparisons += 1
                _compare_error(got, expected.error, 'contract', note)
                if backend != first and isinstance(ref, Raised):
                    outcome.comparisons += 1
                    _compare_error(got, ref.cls, first, note)
                continue
            if isinstance(got, Raised):
                outcome.comparisons += 1
                note('result', 'contract', f'raised {got.cls.__name__}: {got.message}')
                continue
            for value, (label, want, vs_oracle) in zip(got, expected.outputs, strict=False):
                if vs_oracle:
                    outcome.comparisons += 1
                    if (why := oracle.mismatch(value, want)) is not None:
                        note(label, 'oracle', why)
                if backend != first and not isinstance(ref, Raised):
                    outcome.comparisons += 1
                    mine = ref[[w[0] for w in expected.outputs].index(label)]
                    mine = np.asarray(mine)
                    scale = want.scale if want.scale.shape == mine.shape else np.zeros(mine.shape)
                    # The event operand's derivative is computed in the result's dtype (float16 weights:
                    # float16 sums), then cast to the operand's; backends may round those sums differently.
                    precision = _cotangent_dtype(problem) if label == 'd spikes' else None
                    like = oracle.Value(mine.astype(np.float64), scale, mine.dtype, precision)
                    if (why := oracle.mismatch(value, like)) is not None:
                        note(label, first, why)
    return outcome
