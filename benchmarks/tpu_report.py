"""The TPU table of ``eventjax bench`` as text: one table per section, in RST (``.rst``) or Markdown (``.md``).

Each product row holds, per backend, ``loop / call``: microseconds per
product inside one jitted loop, then per jitted call (dispatch included).

Example:
    >>> from benchmarks.tpu_table import Row
    >>> rows = [Row('updates', 'csr_on_pre', 4000, 'pallas', loop_us=108.0, call_us=240.0),
    ...         Row('updates', 'csr_on_pre', 4000, 'jax', error='timed out after 60 s')]
    >>> print(format_section('updates', rows, ['pallas', 'jax'], 'md'))
    | operator | neurons | `pallas` | `jax` |
    |---|---|---|---|
    | `csr_on_pre` | 4,000 | 108 / 240 | timed out |
"""

from __future__ import annotations

from benchmarks.tpu_table import COLUMNS, K_PRODUCTS, K_UPDATES, MISMATCH, RING

__all__ = ['SECTIONS', 'describe', 'format_section', 'notes', 'section_intro', 'section_text']

SECTIONS = ('products', 'updates', 'models')


def _us(x):
    return '--' if x is None else f'{x:,.0f}' if x >= 10 else f'{x:.1f}'


def _cell(row):
    if row is None:
        return '--'
    if row.error:
        return 'timed out' if row.error.startswith('timed out') else 'failed'
    flag = ' (!)' if row.diff is not None and row.diff > MISMATCH else ''
    return f'{_us(row.loop_us)} / {_us(row.call_us)}{flag}' if row.call_us is not None else _us(row.loop_us) + flag


def _table(head, body, fmt):
    if fmt == 'md':
        return '\n'.join(['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
                         + ['| ' + ' | '.join(r) + ' |' for r in body])
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    rule = '  '.join('=' * w for w in widths)
    line = lambda r: '  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return '\n'.join([rule, line(head), rule, *map(line, body), rule])


def format_section(section, rows, backends, fmt='rst'):
    """The table of ``section``'s rows; ``backends`` in column order (brainevent and dense added if present)."""
    rows = [r for r in rows if r.section == section]
    if section == 'models':
        head = ['model', 'backend', 'neurons', 'synapses', 'us per step', 'RTF', 'rate (Hz)']
        body = []
        for r in rows:
            x = r.extra
            rtf = f'{x["rtf"]:.3f}' if 'rtf' in x else '--'
            rate = f'{x["rate_hz"]:.2f}' if 'rate_hz' in x else '--'
            if x.get('same_spikes') is False:
                rate += ' (spikes differ)'
            label = r.op if 'scale' not in x else (f'{r.op}, scale {x["scale"]:g}, {x["ms"]:g} ms after '
                                                    f'{x["warmup_ms"]:g} ms')
            body.append([label, _code_name(r.backend, fmt), f'{r.n:,}' if r.n else '--',
                         f'{x["synapses"]:,}' if 'synapses' in x else '--', _cell(r), rtf, rate])
        return _table(head, body, fmt)
    cols = [b for b in (*backends, 'brainevent', 'dense') if any(r.backend == b for r in rows)]
    names = {'brainevent': 'brainevent', 'dense': f'dense {_code_name("jnp", fmt)} f32'}
    if section == 'updates':
        keys = list(dict.fromkeys((r.op, r.n) for r in rows))
        find = {(r.op, r.n, r.backend): r for r in rows}
        head = ['operator', 'neurons', *(names.get(b) or _code_name(b, fmt) for b in cols)]
        body = [[_code_name(op, fmt), f'{n:,}', *(_cell(find.get((op, n, b))) for b in cols)] for op, n in keys]
        return _table(head, body, fmt)
    products = [r for r in rows if r.backend != 'dense']
    dense = {(r.op.endswith('mm'), r.n, r.transpose): r for r in rows if r.backend == 'dense'}
    find = {(r.op, r.events, r.n, r.transpose, r.backend): r for r in products}
    keys = list(dict.fromkeys((r.op, r.events, r.n, r.transpose) for r in products))
    head = ['product', 'events', 'neurons', 'direction', *(names.get(b) or _code_name(b, fmt) for b in cols)]
    body = []
    for op, events, n, t in keys:
        cells = [_cell(dense.get((op.endswith('mm'), n, t))) if b == 'dense' else _cell(find.get((op, events, n, t, b)))
                 for b in cols]
        body.append([_code_name(op, fmt), events, f'{n:,}', 's @ W' if t else 'W @ s', *cells])
    return _table(head, body, fmt)


def _code_name(name, fmt):
    return f'`{name}`' if fmt == 'md' else f'``{name}``'


def describe(device) -> dict:
    """What the tables say of the machine: the device, its platform, JAX's and eventjax's versions."""
    import jax

    import eventjax

    return {'device': device.device_kind, 'platform': device.platform, 'jax': jax.__version__,
            'eventjax': eventjax.__version__}


def section_text(info, section, rows, backends, rate, fmt='rst'):
    """A section as the docs include it: the line naming the machine, the table, then what failed or differed."""
    where = (f'On one {info["device"]} chip' if info['platform'] == 'tpu' else
             f'On {info["device"]} ({info["platform"]})') + f', JAX {info["jax"]}, eventjax {info["eventjax"]}'
    text = where + ', ' + section_intro(section, rate, fmt) + '\n\n' + format_section(section, rows, backends, fmt)
    lines = notes([r for r in rows if r.section == section])
    if fmt == 'rst':  # an error's text is prose here, not markup
        lines = [ln.replace('`', "'").replace('*', '\\*').replace('|', '\\|') for ln in lines]
    return text + ('\n\n' + '\n'.join(f'- {line}' for line in lines) if lines else '')


def section_intro(section, rate, fmt='rst'):
    """What a section's figures are, in one sentence."""
    command = _code_name('eventjax bench --tpu', fmt)
    if section == 'products':
        return (f'microseconds per product, float32, {K_PRODUCTS} connections per row, {rate:.0%} events (mm: '
                f'{COLUMNS} event columns); each cell: inside one jitted loop of products / per jitted call '
                '(dispatch included); "dense jnp f32" is the jnp product of the same matrix, brainevent its own '
                f'function on its default path ({command}). (!): further than {MISMATCH:g} from '
                'the float64 NumPy product.')
    if section == 'updates':
        return (f'microseconds per update, float32, {K_UPDATES} connections per row, {rate:.0%} events, a ring of '
                f'{RING} slots; each cell: inside one jitted loop with the ring (or the weights) as its carry / '
                f'per jitted call ({command}). (!): one update\'s result further than '
                f'{MISMATCH:g} from the first backend\'s.')
    return ('microseconds per simulation step of 0.1 ms inside the model\'s jitted loop, float32; RTF: wall '
            f'seconds per model second ({command}).')


def notes(rows):
    """One line per row that failed or differs from the reference: what it was, and the error or the difference."""
    out = []
    for r in rows:
        what = ' '.join(str(x) for x in (r.op, r.events, r.n and f'n={r.n}', '' if r.transpose is None else
                                         's @ W' if r.transpose else 'W @ s', r.backend) if x)
        if r.error and not r.error.startswith('timed out'):
            out.append(f'{what}: {r.error}')
        elif r.diff is not None and r.diff > MISMATCH:
            out.append(f'{what}: differs by {r.diff:.1e} (relative to the largest value)')
        if r.extra.get('beside_timed_out_row'):
            out.append(f'{what}: measured while a row that timed out still ran')
    return out
