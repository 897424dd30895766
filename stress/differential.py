"""Scenario 7: the differential tester, run long: many drawn problems, every backend and transformation.

The problems, the oracle and the comparisons are those of
``tests/differential`` (see its README). Operators take turns in rounds of
a few draws each, so every operator is covered however early the budget
ends; in the long mode every other round runs with ``jax_enable_x64`` on,
which adds float64 weights and operands. The index-list operators
(``tests/differential/indexed.py``), the per-synapse products (``per_synapse.py``) and the contract's
edges (``edges.py``: float16 sums, wide integers, bad structure, tiny events) take their turn in
every round. Bounded by ``examples`` problems
and ``seconds``. Prints ``differential: P problems, C comparisons, D
disagreements`` and the seed that reproduces the run.
"""

from __future__ import annotations

import contextlib
import time

import jax
from hypothesis import given, seed
from tests.differential import edges, indexed, per_synapse, plasticity, transforms
from tests.differential.check import Outcome, check_problem
from tests.differential.delay import (
    check_delivery,
    check_layout_delivery,
    deliveries,
    delivery_backends,
    layout_backends,
)
from tests.differential.profile import differential_settings, past_the_simplest
from tests.differential.strategies import problems

import eventjax as ej
from stress.harness import Report, watched

ROUND = 5  # draws per operator per round, at most
DEFAULT_EXAMPLES = {'short': 1, 'long': 400}  # random draws: hypothesis's simplest is passed over


def _round(name: str, draws: int, round_seed: int, deadline: float, outcome: Outcome, limit: int) -> None:
    @seed(round_seed)
    @differential_settings(draws)
    @given(problems(name))
    @past_the_simplest
    def draw(problem):
        if time.monotonic() > deadline or outcome.problems >= limit:
            return
        outcome.add(check_problem(problem, around=lambda what: watched(f'differential: {what}')))

    draw()


def _plasticity_round(name: str, draws: int, round_seed: int, deadline: float, outcome: Outcome, limit: int) -> None:
    @seed(round_seed)
    @differential_settings(draws)
    @given(plasticity.plasticity_problems(name))
    @past_the_simplest
    def draw(problem):
        if time.monotonic() > deadline or outcome.problems >= limit:
            return
        with watched(f'differential: {name}'):
            bad = plasticity.check(problem, plasticity.backends_of(name))
        outcome.problems += 1
        outcome.comparisons += 3 * len(plasticity.backends_of(name))
        outcome.disagreements.extend((_Text(line), str(problem)) for line in bad)

    draw()


def _delivery_round(draws: int, round_seed: int, deadline: float, outcome: Outcome) -> None:
    """Delayed delivery's own draws and oracle (tests/differential/delay.py); a mismatch raises, as a test would."""
    @seed(round_seed)
    @differential_settings(draws)
    @given(deliveries())
    @past_the_simplest
    def draw(problem):
        if time.monotonic() > deadline:
            return
        with watched('differential: csr_delay_deliver'):
            outcome.comparisons += check_delivery(problem, delivery_backends())
        with watched('differential: csr_delay_deliver_layout'):
            outcome.comparisons += check_layout_delivery(problem, layout_backends())
        outcome.problems += 1

    draw()


def _indexed_round(name: str, draws: int, round_seed: int, deadline: float, found: list, module=indexed) -> None:
    """Draws of an operator with its own problems and oracle (``module``: index lists, per-synapse products).

    Disagreements go to ``found``.
    """
    @seed(round_seed)
    @differential_settings(draws)
    @given(module.problems(name))
    @past_the_simplest
    def draw(problem):
        if time.monotonic() > deadline:
            return
        found.append(len(found))
        found.extend(f'{line} (seed {round_seed})' for line in module.check(problem))

    draw()


class _Text:
    """A plasticity disagreement, shaped like the products' (``line()``)."""

    def __init__(self, text: str):
        self.text = text

    def line(self) -> str:
        return self.text


def run(seconds: float, long: bool = False, examples: int | None = None) -> Report:
    """Check up to ``examples`` drawn problems within ``seconds``; disagreements count as wrong results."""
    report = Report('differential')
    limit = examples or DEFAULT_EXAMPLES['long' if long else 'short']
    names = transforms.standard_operators()
    base = int(time.time()) % 1_000_000
    outcome = Outcome()
    per_round = max(1, min(ROUND, limit // len(names)))
    start = time.monotonic()
    deadline = start + seconds
    indexed_found: list = []  # a draw's number, then its disagreements (strings)
    interpret = ej.backends.pallas.get_cpu_interpret()
    ej.backends.pallas.set_cpu_interpret(True)  # a pallas kernel on the cpu runs in interpret mode
    try:
        for r in range(1_000_000):
            if outcome.problems >= limit or time.monotonic() > deadline:
                break
            x64 = jax.enable_x64(True) if long and r % 2 else contextlib.nullcontext()
            with x64:
                for i, name in enumerate(names):
                    _round(name, per_round, base + 1000 * r + i, deadline, outcome, limit)
                with plasticity.pallas_on_cpu():  # pallas too, interpreted
                    for i, name in enumerate(plasticity.CHECKED):
                        _plasticity_round(name, per_round, base + 1000 * r + 500 + i, deadline, outcome, limit)
                _delivery_round(per_round, base + 1000 * r + len(names), deadline, outcome)
                for i, name in enumerate(indexed.OPERATORS):
                    _indexed_round(name, per_round, base + 1000 * r + 500 + i, deadline, indexed_found)
                for i, name in enumerate(per_synapse.OPERATORS):
                    _indexed_round(name, per_round, base + 1000 * r + 600 + i, deadline, indexed_found, per_synapse)
            # The contract's edges, one draw of each kind a round, pallas included; each draw sets x64 itself.
            # After the products: a short run's few seconds check a standard product first (the edges have
            # their own test in make test).
            with edges.pallas_on_cpu():
                for i, kind in enumerate(edges.KINDS):
                    _indexed_round(kind, 1, base + 1000 * r + 700 + i, deadline, indexed_found, edges)
    finally:
        ej.backends.pallas.set_cpu_interpret(interpret)
    report.seconds = time.monotonic() - start
    report.calls = outcome.calls
    # Each draw of the operators with their own oracle (index lists, per-synapse, edges) is one check too.
    report.checks = outcome.comparisons + sum(1 for f in indexed_found if not isinstance(f, str))
    indexed_bad = [f for f in indexed_found if isinstance(f, str)]
    report.wrong = len(outcome.disagreements) + len(indexed_bad)
    for d, problem in outcome.disagreements[:50]:
        report.failures.append(f'{d.line()} on {problem}')
    report.failures.extend(indexed_bad[:50])
    report.extra.update(seed=base, problems=outcome.problems,
                        indexed_problems=len(indexed_found) - len(indexed_bad))
    print(f'differential: {outcome.problems} problems, {outcome.comparisons} comparisons, '
          f'{len(outcome.disagreements)} disagreements (seed {base}; {report.seconds:.0f} s)', flush=True)
    return report
