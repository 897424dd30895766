"""eventjax bench --family plasticity: the rows it times, and that the donated updates copy nothing."""

from eventjax.benchmarks import format_plasticity, run_plasticity


def test_tiny_run_times_every_row_and_finds_no_copy_in_the_scan():
    rows = run_plasticity([300], [0.05], ['jax', 'numba'], compare=False, budget_s=0.01)
    labels = [r.label for r in rows]
    for backend in ('jax', 'numba'):
        assert f'eventjax {backend}, donated' in labels
        assert f'eventjax {backend}, not donated' in labels
    # The numba kernel writes into the carry itself; the jax kernel's scatters sit in the branches of the
    # event-count switch, which XLA feeds with copies (reported in the row's note).
    scan = next(r for r in rows if r.label == 'eventjax numba, in lax.scan (per step)')
    assert scan.note == 'copies of W in the compiled loop: 0'
    assert any(r.label.startswith('hand-written JAX') for r in rows)
    assert any(r.label.startswith('forward product') for r in rows)
    assert all(r.us is not None and r.us > 0 for r in rows)
    table = format_plasticity(rows)
    assert 'n = 300 (30,000 synapses), 5.0% events' in table and 'x fwd' in table
