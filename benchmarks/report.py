"""The results of ``eventjax bench``: a text table and a matplotlib figure."""

from __future__ import annotations

import json
import pathlib

import attrs

__all__ = ['LEGEND', 'Result', 'format_table', 'plot', 'write_json']


@attrs.frozen
class Result:
    """One measurement: ``operator`` on ``backend`` at ``n`` neurons.

    ``dense_us`` is the baseline's time: the dense ``jax.numpy`` product of
    the same matrix, or for ``baseline='CSR'`` a CSR product of the same
    statistics on the same backend (None where it is too big to store), so
    ``speedup = dense_us / median_us`` (above 1: eventjax is faster).
    ``memory_mb`` and ``baseline_mb`` are what each compiled call holds
    (arguments, outputs, temporaries), from XLA's memory analysis.
    ``floor_us`` is the time the bytes the kernel must move take at the
    measured bandwidth; ``brainevent_us`` brainevent's time on
    ``brainevent_backend`` and ``scipy_us`` scipy's float CSR product of the
    same matrix, both timed alongside eventjax (None: not measured).
    The ``x_*`` ratios are eventjax's time over theirs (below 1: faster).
    """

    family: str
    operator: str
    backend: str
    n: int
    conn_per_row: int
    median_us: float
    dense_us: float | None
    baseline: str = 'dense jnp'
    memory_mb: float | None = None
    baseline_mb: float | None = None
    floor_bytes: int | None = None
    floor_us: float | None = None
    brainevent_backend: str | None = None
    brainevent_us: float | None = None
    scipy_us: float | None = None

    @property
    def speedup(self) -> float | None:
        return None if self.dense_us is None else self.dense_us / self.median_us

    @property
    def x_floor(self) -> float | None:
        return None if not self.floor_us else self.median_us / self.floor_us

    @property
    def x_brainevent(self) -> float | None:
        return None if not self.brainevent_us else self.median_us / self.brainevent_us

    @property
    def x_scipy(self) -> float | None:
        return None if not self.scipy_us else self.median_us / self.scipy_us


def _num(x, fmt: str, suffix: str = '') -> str:
    return '-' if x is None else format(x, fmt) + suffix


LEGEND = ('k: connections per row. median us: per call, compilation excluded (a "scan step" operator: per step of '
          'a jitted lax.scan whose carry it updates in place, its baseline timed the same way). '
          'vs dense: dense time / eventjax time (above 1: eventjax faster).\n'
          'x floor, x be, x scipy: eventjax time / the memory floor, brainevent (numba -> numba, jax -> jax_raw), '
          'scipy.sparse CSR float product (below 1: eventjax faster).')


def format_table(results) -> str:
    """A fixed-width table, one row per result.

    Example:
        >>> print(format_table([Result('csr', 'csrmv', 'jax', 1000, 20, 10.0, 50.0, floor_us=2.0, scipy_us=20.0)]))
        operator  backend     n   k  median us  dense us  vs dense  floor us  x floor  be us  x be  scipy us  x scipy
        csrmv     jax      1000  20       10.0      50.0     5.00x       2.0     5.0x      -     -      20.0    0.50x
    """
    results = list(results)
    if any(r.baseline != 'dense jnp' for r in results):
        return _format_against_a_stored_baseline(results)
    header = ('operator', 'backend', 'n', 'k', 'median us', 'dense us', 'vs dense', 'floor us', 'x floor',
              'be us', 'x be', 'scipy us', 'x scipy')
    rows = [(r.operator, r.backend, str(r.n), str(r.conn_per_row), f'{r.median_us:.1f}', _num(r.dense_us, '.1f'),
             _num(r.speedup, '.2f', 'x'), _num(r.floor_us, '.1f'), _num(r.x_floor, '.1f', 'x'),
             _num(r.brainevent_us, '.1f'), _num(r.x_brainevent, '.2f', 'x'), _num(r.scipy_us, '.1f'),
             _num(r.x_scipy, '.2f', 'x')) for r in results]
    return _lines(header, rows)


def _format_against_a_stored_baseline(results) -> str:
    """The table of the JITC and delay families: a baseline per backend, and the memory each call holds."""
    header = ('operator', 'backend', 'n', 'conn/row', 'median us', 'baseline', 'base us', 'vs base', 'MB',
              'base MB')
    rows = [(r.operator, r.backend, str(r.n), str(r.conn_per_row), f'{r.median_us:.1f}', r.baseline,
             _num(r.dense_us, '.1f'), _num(r.speedup, '.2f', 'x'), _num(r.memory_mb, '.2f'),
             _num(r.baseline_mb, '.1f')) for r in results]
    if any(r.brainevent_us is not None for r in results):  # brainevent timed beside eventjax: its columns too
        header += ('be', 'be us', 'x be')
        rows = [(*row, r.brainevent_backend or '-', _num(r.brainevent_us, '.1f'), _num(r.x_brainevent, '.2f', 'x'))
                for row, r in zip(rows, results)]
    return _lines(header, rows)


def _lines(header, rows) -> str:
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    left = {0, 1}

    def line(cells):
        return '  '.join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return '\n'.join([line(header), *(line(r) for r in rows)]).rstrip()


def write_json(path, results, machine=None, notes=()) -> None:
    """Write the results (every field, and the ratios), the machine and the notes as JSON.

    Example:
        >>> import json, tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / 'bench.json'
        >>> write_json(path, [Result('csr', 'csrmv', 'jax', 100, 20, 10.0, 50.0)], notes=['a note'])
        >>> json.loads(path.read_text())['results'][0]['speedup']
        5.0
    """
    rows = [dict(attrs.asdict(r), speedup=r.speedup, x_floor=r.x_floor, x_brainevent=r.x_brainevent,
                 x_scipy=r.x_scipy) for r in results]
    doc = {'machine': None if machine is None else attrs.asdict(machine), 'notes': list(notes), 'results': rows}
    pathlib.Path(path).write_text(json.dumps(doc, indent=1) + '\n')


def plot(results, path, title='eventjax bench') -> None:
    """Save one panel per operator: median time against ``n``, a line per backend plus the anchors.

    Solid: eventjax per backend; dashed in the same colour: brainevent on
    the matching backend; grey: dense ``jax.numpy``; black dotted: scipy's
    CSR product; light grey: the memory floor.

    Results with a CSR baseline (the JITC family) get the baseline per
    backend, and a second row of panels: the memory each call holds.

    Raises:
        ImportError: matplotlib is not installed (``pip install 'eventjax[plot]'``).
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("Plotting benchmark results needs matplotlib: pip install 'eventjax[plot]'.") from exc

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    results = list(results)
    operators = list(dict.fromkeys(r.operator for r in results))
    if any(r.baseline != 'dense jnp' for r in results):
        _plot_against_a_stored_baseline(plt, results, operators, path, title)
        return
    cols = min(3, max(1, len(operators)))
    rows = -(-len(operators) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax, op in zip(axes.flat, operators):
        mine = [r for r in results if r.operator == op]
        for k, backend in enumerate(dict.fromkeys(r.backend for r in mine)):
            rs = sorted((r for r in mine if r.backend == backend), key=lambda r: r.n)
            ax.plot([r.n for r in rs], [r.median_us for r in rs], marker='o', color=f'C{k}', label=backend)
            be = [(r.n, r.brainevent_us) for r in rs if r.brainevent_us is not None]
            if be:
                ax.plot(*zip(*be), marker='x', linestyle='--', color=f'C{k}',
                        label=f'brainevent {next(r.brainevent_backend for r in rs if r.brainevent_us) or "jnp"}')
        for attr, style, label in (('dense_us', dict(marker='s', linestyle='--', color='grey'), 'dense jnp'),
                                   ('scipy_us', dict(marker='^', linestyle=':', color='black'), 'scipy CSR'),
                                   ('floor_us', dict(linestyle='-', color='lightgrey'), 'memory floor')):
            pts = sorted({r.n: getattr(r, attr) for r in mine if getattr(r, attr) is not None}.items())
            if pts:
                ax.plot(*zip(*pts), label=label, **style)
        ax.set(title=op, xlabel='neurons n', ylabel='median time (µs)', xscale='log', yscale='log')
        ax.legend(fontsize='x-small')
    for ax in list(axes.flat)[len(operators):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _plot_against_a_stored_baseline(plt, results, operators, path, title) -> None:
    """Time (top row) and memory (bottom row) per operator; solid: eventjax, dashed: the baseline."""
    cols = len(operators)
    fig, axes = plt.subplots(2, cols, figsize=(4.2 * cols, 6.4), squeeze=False)
    for j, op in enumerate(operators):
        mine = [r for r in results if r.operator == op]
        base = mine[0].baseline
        for k, backend in enumerate(dict.fromkeys(r.backend for r in mine)):
            rs = sorted((r for r in mine if r.backend == backend), key=lambda r: r.n)
            color = f'C{k}'
            for row, (mine_of, base_of) in enumerate([(lambda r: r.median_us, lambda r: r.dense_us),
                                                      (lambda r: r.memory_mb, lambda r: r.baseline_mb)]):
                ax = axes[row][j]
                pts = [(r.n, mine_of(r)) for r in rs if mine_of(r) is not None]
                if pts:
                    ax.plot(*zip(*pts), marker='o', color=color, label=f'{backend}')
                pts = [(r.n, base_of(r)) for r in rs if base_of(r) is not None]
                if pts:
                    ax.plot(*zip(*pts), marker='s', linestyle='--', color=color, label=f'{base} {backend}')
        axes[0][j].set(title=op, xlabel='neurons n', ylabel='median time per product (µs)', xscale='log',
                       yscale='log')
        axes[1][j].set(xlabel='neurons n', ylabel='memory of the call (MB)', xscale='log', yscale='log')
        axes[0][j].legend(fontsize='x-small')
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
