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

__all__ = ['INDEX_LIST_MIN_SPEEDUP', 'NUMBA_MAX_RATIO', 'brainevent_elsewhere', 'events_findings', 'events_targets',
           'json_lines_elsewhere']

SCRIPT = pathlib.Path(__file__).resolve().parent / 'brainevent_events.py'

# The family's speed goals: at 0.1% events and 100,000 neurons the index list takes at most half the bool
# product's time (on every backend), and numba at most half the time of brainevent's fastest CPU backend
# (every form, size and rate, every brainevent version timed).
INDEX_LIST_MIN_SPEEDUP = 2.0
NUMBA_MAX_RATIO = 0.5


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


def _points(results):
    """``{(n, rate): {form: {backend: Result}}}`` of the events family."""
    by = {}
    for r in results:
        if r.family == 'events':
            by.setdefault((r.n, _rate_of(r.operator)), {}).setdefault(r.operator.split(' ', 1)[0], {})[r.backend] = r
    return by


def _bool_time(forms, form, backend):
    """The bool product's time beside ``form`` on ``backend``: its interleaved baseline, else the bool row."""
    r = forms[form][backend]
    if r.baseline == 'CSR' and r.dense_us:
        return r.dense_us
    bool_form = forms.get('bool', {})
    return bool_form[backend].median_us if backend in bool_form else None


def _brainevent_times(forms, n, rate, elsewhere, installed, form=None):
    """``{version: {backend: us}}``: brainevent timed here (beside eventjax) and in another interpreter.

    With ``form``, the times here are those timed in that form's blocks (under load, the ones to compare
    with); otherwise the last timed per backend.
    """
    here = {r.brainevent_backend: r.brainevent_us for f in (forms.values() if form is None else [forms[form]])
            for r in f.values() if r.brainevent_us is not None}
    versions = {installed: here}
    for row in elsewhere:
        if row['n'] == n and f'{row["rate"]:.1%}' == rate:
            versions.setdefault(row['version'], {})[row['backend']] = row['us']
    return {v: t for v, t in versions.items() if t}


def events_findings(results, elsewhere=(), installed: str = 'installed') -> list[str]:
    """One line per (n, rate): each form / bool per backend, and numba / brainevent's fastest CPU backend.

    A form's bool time is its baseline, the bool product timed interleaved
    with it on the same backend; brainevent's times in this process are
    interleaved with eventjax's (each form is compared with brainevent timed
    in its own blocks), those from another interpreter were timed after them
    (under whatever load the machine then had).

    ``results`` are the events family's :class:`~benchmarks.report.Result`;
    ``elsewhere`` rows from :func:`brainevent_elsewhere` (another brainevent version).
    """
    lines = []
    for (n, rate), forms in sorted(_points(results).items()):
        parts = []
        for form in ('index-list', 'bit-packed'):
            for backend in sorted(forms.get(form, {})):
                base = _bool_time(forms, form, backend)
                if base:
                    parts.append(f'{form}/bool {backend} {forms[form][backend].median_us / base:.2f}x')
        numba = {form: f['numba'].median_us for form, f in forms.items() if 'numba' in f}
        per_version = {}
        for form, us in numba.items():
            for version, times in _brainevent_times(forms, n, rate, elsewhere, installed, form).items():
                best = min(times, key=times.get)
                per_version.setdefault(version, []).append(
                    f'{form} {us / times[best]:.2f}x ({best} {times[best]:.1f} us)')
        for version, ratios in per_version.items():
            parts.append(f'numba / brainevent {version} fastest cpu: {", ".join(ratios)}')
        lines.append(f'events n={n:,} {rate}: ' + '; '.join(parts))
    return lines


def events_targets(results, elsewhere=(), installed: str = 'installed') -> list[str]:
    """The family's speed goals, each ``met``, ``MISSED`` or ``not measured``, with the figures behind it.

    - at 0.1% events and the largest ``n`` measured (100,000 by default), the
      index list is at least :data:`INDEX_LIST_MIN_SPEEDUP` times faster than
      the bool product beside it, on every backend;
    - numba's time is at most :data:`NUMBA_MAX_RATIO` of brainevent's fastest
      CPU backend, for every form, size and rate and each brainevent version timed.
    """
    points = _points(results)
    lines = []
    low = {n: forms for (n, rate), forms in points.items() if rate == '0.1%'}
    speedups = []
    goal = f'index list >= {INDEX_LIST_MIN_SPEEDUP:g}x faster than bool, 0.1% events'
    if low:
        largest = max(low)
        goal += f', n={largest:,}'
        forms = low[largest]
        for backend in sorted(forms.get('index-list', {})):
            base = _bool_time(forms, 'index-list', backend)
            if base:
                speedups.append((backend, base / forms['index-list'][backend].median_us))
    if speedups:
        state = 'met' if all(x >= INDEX_LIST_MIN_SPEEDUP for _, x in speedups) else 'MISSED'
        lines.append(f'{state}: {goal}: ' + ', '.join(f'{b} {x:.2f}x' for b, x in speedups))
    else:
        lines.append(f'not measured: {goal}')
    ratios = []
    for (n, rate), forms in sorted(points.items()):
        for form, f in forms.items():
            if 'numba' in f:
                ratios += [(f'n={n:,} {rate} {form} vs {version}', f['numba'].median_us / min(times.values()))
                           for version, times in _brainevent_times(forms, n, rate, elsewhere, installed, form).items()]
    goal = f"numba <= {NUMBA_MAX_RATIO:g}x brainevent's fastest cpu backend, every form, size and rate"
    if ratios:
        over = [(what, x) for what, x in ratios if x > NUMBA_MAX_RATIO]
        worst = max(ratios, key=lambda p: p[1])
        if over:
            lines.append(f'MISSED: {goal}: {len(over)} of {len(ratios)} over: '
                         + ', '.join(f'{what} {x:.2f}x' for what, x in over))
        else:
            lines.append(f'met: {goal}: all {len(ratios)} points, the highest {worst[0]} {worst[1]:.2f}x')
    else:
        lines.append(f'not measured: {goal} (no brainevent or no numba here)')
    return lines
