"""The results of ``eventjax bench``: a text table and a matplotlib figure."""

from __future__ import annotations

import attrs

__all__ = ['Result', 'format_table', 'plot']


@attrs.frozen
class Result:
    """One measurement: ``operator`` on ``backend`` at ``n`` neurons.

    ``dense_us`` is the dense ``jax.numpy`` product of the same matrix, so
    ``speedup = dense_us / median_us`` (above 1: eventjax is faster).
    """

    family: str
    operator: str
    backend: str
    n: int
    conn_per_row: int
    median_us: float
    dense_us: float

    @property
    def speedup(self) -> float:
        return self.dense_us / self.median_us


def format_table(results) -> str:
    """A fixed-width table, one row per result.

    Example:
        >>> print(format_table([Result('csr', 'csrmv', 'jax', 1000, 20, 10.0, 50.0)]))
        operator  backend     n  conn/row  median us  dense us  vs dense
        csrmv     jax      1000        20       10.0      50.0     5.00x
    """
    header = ('operator', 'backend', 'n', 'conn/row', 'median us', 'dense us', 'vs dense')
    rows = [(r.operator, r.backend, str(r.n), str(r.conn_per_row), f'{r.median_us:.1f}', f'{r.dense_us:.1f}',
             f'{r.speedup:.2f}x') for r in results]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    left = {0, 1}

    def line(cells):
        return '  '.join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return '\n'.join([line(header), *(line(r) for r in rows)]).rstrip()


def plot(results, path, title='eventjax bench') -> None:
    """Save one panel per operator: median time against ``n``, a line per backend plus the dense baseline.

    Raises:
        ImportError: matplotlib is not installed (``pip install 'eventjax[plot]'``).
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("Plotting benchmark results needs matplotlib: pip install 'eventjax[plot]'.") from exc

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    operators = list(dict.fromkeys(r.operator for r in results))
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
