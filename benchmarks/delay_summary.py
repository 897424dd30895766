"""What the delay family's table means, against the targets: delivery / the undelayed product, numba / brainevent.

brainevent 0.3.0 installs on Python 3.12 only: given that environment's
interpreter, :func:`brainevent_delay_elsewhere` runs ``brainevent_delay.py``
in it on the same arrays (same seed) right after eventjax's own timings, so
one ``eventjax bench --family delay`` run holds both.
"""

from __future__ import annotations

import pathlib

from benchmarks.events_summary import json_lines_elsewhere

__all__ = ['NUMBA_VS_BRAINEVENT', 'VS_UNDELAYED', 'brainevent_delay_elsewhere', 'delay_findings']

SCRIPT = pathlib.Path(__file__).resolve().parent / 'brainevent_delay.py'
# The targets: a delivery at most this many times the undelayed event product on the same backend, and the
# numba delivery at most this fraction of brainevent's fastest cpu backend.
VS_UNDELAYED = 1.5
NUMBA_VS_BRAINEVENT = 0.5


def brainevent_delay_elsewhere(python: str, sizes, *, seed: int = 0, timeout_s: float = 900.0):
    """``(rows, note)``: brainevent's delivery timings from another interpreter, or ``([], why not)``."""
    cmd = [python, str(SCRIPT), '--json', '--sizes', *map(str, sizes), '--seed', str(seed)]
    return json_lines_elsewhere(cmd, python, timeout_s)


def _label(operator: str) -> str:
    """The operator's name without the details in parentheses: ``csr_delay_deliver``, ``DelayedCSR.deliver``."""
    return operator.split(' (')[0]


def delay_findings(results, elsewhere=()) -> list[str]:
    """The ratios per size and operator, then one line per target (met or missed), then the count met.

    ``results`` are the delay family's :class:`~benchmarks.report.Result`
    (``dense_us``: the undelayed product in the same scan); each operator
    (the raw ``csr_delay_deliver``, ``DelayedCSR.deliver`` on its layout) is
    held to the targets on its own. ``elsewhere`` rows from
    :func:`brainevent_delay_elsewhere`.

    Example:
        >>> from benchmarks.report import Result
        >>> rows = [Result('delay', 'csr_delay_deliver', 'numba', 4000, 100, 30.0, 25.0, baseline='binary_csrmv T')]
        >>> for line in delay_findings(rows, [{'version': '0.3.0', 'n': 4000, 'backend': 'numba', 'us': 300.0}]):
        ...     print(line)
          n=4000 csr_delay_deliver: delivery / undelayed: numba 1.20x; numba / brainevent 0.3.0 numba (300.0 us): 0.10x
        targets:
          n=4000 csr_delay_deliver numba: delivery <= 1.5x the undelayed product: met (1.20x)
          n=4000 csr_delay_deliver numba <= 0.5x brainevent 0.3.0's fastest cpu backend: met (0.10x)
        targets met: 2 of 2
    """
    lines, targets = [], []
    delay = [r for r in results if r.family == 'delay']
    for n in sorted({r.n for r in delay}):
        be = {}
        for row in elsewhere:
            if row['n'] == n:
                be.setdefault(row['version'], {})[row['backend']] = row['us']
        for operator in dict.fromkeys(r.operator for r in delay if r.n == n):
            label = f'n={n} {_label(operator)}'
            rows = {r.backend: r for r in delay if r.n == n and r.operator == operator}
            ratios = {b: r.median_us / r.dense_us for b, r in sorted(rows.items()) if r.dense_us}
            parts = ['delivery / undelayed: ' + ', '.join(f'{b} {x:.2f}x' for b, x in ratios.items())]
            for b, x in ratios.items():
                targets.append((f'{label} {b}: delivery <= {VS_UNDELAYED:g}x the undelayed product', x, VS_UNDELAYED))
            for version, times in be.items():
                if 'numba' in rows and times:
                    fastest = min(times, key=times.get)
                    x = rows['numba'].median_us / times[fastest]
                    parts.append(f'numba / brainevent {version} {fastest} ({times[fastest]:.1f} us): {x:.2f}x')
                    targets.append((f"{label} numba <= {NUMBA_VS_BRAINEVENT:g}x brainevent {version}'s fastest cpu "
                                    'backend', x, NUMBA_VS_BRAINEVENT))
            lines.append(f'  {label}: ' + '; '.join(parts))
    lines.append('targets:')
    lines += [f'  {what}: {"met" if x <= bound else "missed"} ({x:.2f}x)' for what, x, bound in targets]
    lines.append(f'targets met: {sum(x <= bound for _, x, bound in targets)} of {len(targets)}')
    return lines
