"""What the events family's table means: each form against the bool form, and numba against brainevent.

brainevent 0.3.0 installs on Python 3.12 only: given that environment's
interpreter, :func:`brainevent_elsewhere` runs ``brainevent_events.py`` in
it on the same arrays (same seed) right after eventjax's own timings, so
one ``eventjax bench --family events`` run holds both versions.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

__all__ = ['brainevent_elsewhere', 'events_findings', 'json_lines_elsewhere']

SCRIPT = pathlib.Path(__file__).resolve().parent / 'brainevent_events.py'


def brainevent_elsewhere(python: str, sizes, rates, *, seed: int = 0, timeout_s: float = 900.0):
    """``(rows, note)``: brainevent's timings from another interpreter (rows: dicts), or ``([], why not)``."""
    cmd = [python, str(SCRIPT), '--sizes', *map(str, sizes), '--rates', *map(str, rates), '--seed', str(seed)]
    return json_lines_elsewhere(cmd, python, timeout_s)


def json_lines_elsewhere(cmd, python: str, timeout_s: float):
    """``(rows, note)``: the JSON lines ``cmd`` prints (other lines skipped), or ``(rows, why it failed)``."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:  # the other environment costs its lines, not the run
        return [], f'brainevent in {python} did not run ({type(exc).__name__}: {str(exc)[:120]}).'
    rows = []
    for line in done.stdout.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    if done.returncode or not rows:
        return rows, f'brainevent in {python} exited {done.returncode}: {done.stderr.strip()[-200:]}'
    return rows, None


def _rate_of(operator: str) -> str:
    return operator.rsplit(' ', 1)[-1]


def events_findings(results, elsewhere=(), installed: str = 'installed') -> list[str]:
    """One line per (n, rate): each form / bool per backend, and numba / brainevent's fastest CPU backend.

    A form's bool time is its baseline, the bool product timed interleaved
    with it on the same backend; brainevent's times in this process are
    interleaved with eventjax's, those from another interpreter were timed
    after them (under whatever load the machine then had).

    ``results`` are the events family's :class:`~eventjax.benchmarks.report.Result`;
    ``elsewhere`` rows from :func:`brainevent_elsewhere` (another brainevent version).
    """
    by = {}
    for r in results:
        if r.family == 'events':
            by.setdefault((r.n, _rate_of(r.operator)), {}).setdefault(r.operator.split(' ', 1)[0], {})[r.backend] = r
    lines = []
    for (n, rate), forms in sorted(by.items()):
        parts = []
        bool_form = forms.get('bool', {})
        for form in ('index-list', 'bit-packed'):
            for backend, r in sorted(forms.get(form, {}).items()):
                # The bool product timed in the same alternating blocks (the case's baseline) when there is one.
                base = r.dense_us if r.baseline == 'CSR' and r.dense_us else (
                    bool_form[backend].median_us if backend in bool_form else None)
                if base:
                    parts.append(f'{form}/bool {backend} {r.median_us / base:.2f}x')
        be = {r.brainevent_backend: r.brainevent_us for f in forms.values() for r in f.values()
              if r.brainevent_us is not None}
        versions = {installed: be}
        for row in elsewhere:
            if row['n'] == n and f'{row["rate"]:.1%}' == rate:
                versions.setdefault(row['version'], {})[row['backend']] = row['us']
        numba = {form: f['numba'].median_us for form, f in forms.items() if 'numba' in f}
        for version, times in versions.items():
            if times and numba:
                best_backend = min(times, key=times.get)
                ratios = ', '.join(f'{form} {us / times[best_backend]:.2f}x' for form, us in numba.items())
                parts.append(f'numba / brainevent {version} fastest cpu ({best_backend} '
                             f'{times[best_backend]:.1f} us): {ratios}')
        lines.append(f'events n={n:,} {rate}: ' + '; '.join(parts))
    return lines
