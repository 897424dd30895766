"""The hypothesis settings of the differential tests.

``make test`` runs a fixed set of draws per operator, seeded by its name
(the same problems on every run, so a failure reproduces and the compile
cost is stable, yet different problems for each operator); set
``EVENTJAX_DIFF_RANDOM=1`` to draw fresh problems (hypothesis prints the
seed of a failure), and ``EVENTJAX_DIFF_EXAMPLES=N`` to draw N per operator.
Shrinking is off by default: every shrink step compiles new shapes, so it
costs minutes; ``EVENTJAX_DIFF_SHRINK=1`` turns it on to minimise a failure.
"""

from __future__ import annotations

import functools
import itertools
import os
import zlib

from hypothesis import HealthCheck, Phase, assume, given, seed, settings

# Draws per operator in `make test`: each draw compiles new shapes on every backend and transformation,
# so draws cost the suite ~10 s each; `make test-long` draws ten, `make stress` hundreds. Hypothesis's
# own first draw, its simplest problem, is passed over (past_the_simplest), so this one is a random one.
DEFAULT_EXAMPLES = 1


def _flag(name: str) -> bool:
    return os.environ.get(name, '') not in ('', '0')


def differential_settings(examples: int | None = None) -> settings:
    """The settings a differential test runs under (``examples`` per operator).

    Example:
        >>> @differential_settings(3)
        ... @given(problems('csrmv'))
        ... def test(problem): ...
    """
    examples = examples or int(os.environ.get('EVENTJAX_DIFF_EXAMPLES', DEFAULT_EXAMPLES))
    phases = (Phase.explicit, Phase.reuse, Phase.generate) + ((Phase.shrink,) if _flag('EVENTJAX_DIFF_SHRINK') else ())
    # Not derandomize: it would give every operator the same draws; reproducible() seeds each instead.
    return settings(max_examples=examples, deadline=None, database=None,
                    phases=phases, print_blob=True,
                    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much))


def reproducible(name: str):
    """Decorator: seed the draws by ``name`` (none under ``EVENTJAX_DIFF_RANDOM=1``)."""
    if _flag('EVENTJAX_DIFF_RANDOM'):
        return lambda test: test
    return seed(zlib.crc32(name.encode()))


def past_the_simplest(test):
    """Decorator, under ``@given``: pass over hypothesis's first draw, which is always its simplest problem.

    That problem (the smallest sizes, the first dtypes, no events, nothing broken) is the same for every
    seed, and the kernel tests check such cases on every backend; passed over, it costs no compile and
    does not count as a draw, so every draw the tests pay for is a random one.
    """
    calls = itertools.count()

    @functools.wraps(test)
    def run(*args, **kwargs):
        assume(next(calls) > 0)
        return test(*args, **kwargs)

    return run


settings.register_profile('eventjax-differential', differential_settings())


def agree_on_draws(name: str, problems, check) -> None:
    """Draw ``problems`` under the profile's settings and seed; fail with ``check``'s findings.

    ``check(problem)`` returns the list of disagreements (empty when every
    backend and transformation agrees with the oracle).
    """
    @reproducible(name)
    @differential_settings()
    @given(problems)
    @past_the_simplest
    def run(problem):
        bad = check(problem)
        assert not bad, '\n'.join(bad)

    run()
