"""The results of ``eventjax bench``: a text table and a matplotlib figure."""

from __future__ import annotations

import attrs

__all__ = ['Result', 'format_table', 'plot']


@attrs.frozen
class Result:
    """One measurement: ``operator`` on ``backend`` at ``n`` neurons.

    ``dense_us`` is the baseline's time: the dense ``jax.numpy`` product of
    the same matrix, or for ``baseline='CSR'`` a CSR product of the same
    statistics on the same backend (None where it is too big to store), so
    ``speedup = dense_us / median_us`` (above 1: eventjax is faster).
    ``memory_mb`` and ``baseline_mb`` are what each compiled call holds
    (arguments, outputs, temporaries), from XLA's memory analysis.
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

    @property
    def speedup(self) -> float | None:
        return None if self.dense_us is None else self.dense_us / self.median_us


def _num(x, fmt: str) -> str:
    return '-' if x is None else format(x, fmt)


def format_table(results) -> str:
    """A fixed-width table, one row per result.

    Example:
        >>> print(format_table([Result('csr', 'csrmv', 'jax', 1000, 20, 10.0, 50.0)]))
        operator  backend     n  conn/row  median us  dense us  vs dense
        csrmv     jax      1000        20       10.0      50.0     5.00x
    """
    results = list(results)
    header = ('operator', 'backend', 'n', 'conn/row', 'median us', 'dense us', 'vs dense')
    rows = [(r.operator, r.backend, str(r.n), str(r.conn_per_row), f'{r.median_us:.1f}', _num(r.dense_us, '.1f'),
             _num(r.speedup, '.2f') + ('x' if r.speedup else '')) for r in results]
    if any(r.baseline != 'dense jnp' for r in results):
        # Another baseline (CSR for the JITC family): name it, and show the memory each call holds.
        header = (*header[:5], 'baseline', 'base us', 'vs base', 'MB', 'base MB')
        rows = [(*row[:5], r.baseline, *row[5:], _num(r.memory_mb, '.2f'), _num(r.baseline_mb, '.1f'))
                for row, r in zip(rows, results)]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    left = {0, 1}

    def line(cells):
        return '  '.join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return '\n'.join([line(header), *(line(r) for r in rows)]).rstrip()


def plot(results, path, title='eventjax bench') -> None:
    """Save one panel per operator: median time against ``n``, a line per backend plus the baseline.

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
        for backend in dict.fromkeys(r.backend for r in mine):
            pts = sorted((r.n, r.median_us) for r in mine if r.backend == backend)
            ax.plot(*zip(*pts), marker='o', label=backend)
        dense = sorted({(r.n, r.dense_us) for r in mine})
        dense = sorted(dict(dense).items())
        ax.plot(*zip(*dense), marker='s', linestyle='--', color='grey', label='dense jnp')
        ax.set(title=op, xlabel='neurons n', ylabel='median time (µs)', xscale='log', yscale='log')
        ax.legend(fontsize='small')
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
