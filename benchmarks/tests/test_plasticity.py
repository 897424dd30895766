"""eventjax bench --family plasticity: the rows it times, and that the donated updates copy nothing."""

from benchmarks import PlasticityResult, format_plasticity, run_plasticity
from benchmarks.plasticity import heavy_label, plasticity_targets


def test_tiny_run_times_every_row_and_finds_no_copy_in_the_scan():
    rows = run_plasticity([300], [0.05], ['jax', 'numba'], compare=False, budget_s=0.01)
    labels = [r.label for r in rows]
    for backend in ('jax', 'numba'):
        assert f'eventjax {backend}, donated' in labels
        assert f'eventjax {backend}, not donated' in labels
    # Both kernels update the weights in place: no copy in the donated call nor in the scan's loop.
    for backend in ('jax', 'numba'):
        scan = next(r for r in rows if r.label == f'eventjax {backend}, in lax.scan (per step)')
        assert scan.note == 'copies of W in the compiled loop: 0'
        donated = next(r for r in rows if r.label == f'eventjax {backend}, donated')
        assert donated.note == 'copies of W in the call: 0'
        assert any(r.label == f'forward product (binary_csrmv T, {backend})' for r in rows)
        # The scan step's yardstick: the product in the same kind of scan, new events every step.
        assert any(r.label == f'forward product (binary_csrmv T, {backend}), in lax.scan (per step)' for r in rows)
    assert any(r.label.startswith('hand-written JAX') for r in rows)
    assert any(r.label.startswith('forward product') for r in rows)
    assert all(r.us is not None and r.us > 0 for r in rows)
    for backend in ('jax', 'numba'):
        assert heavy_label(backend) in labels and heavy_label(backend, twin=True) in labels
    table = format_plasticity(rows)
    assert 'its even-rows twin (<= 2x)' in table
    assert 'n = 300 (30,000 synapses), 5.0% events' in table and 'x fwd' in table
    assert "eventjax numba, donated = " in table and "x its backend's forward product of the same events" in table
    assert "eventjax numba, in lax.scan (per step) = " in table and 'forward product in the same kind of scan' in table


def test_targets_judge_the_ratios_they_name():
    rows = [PlasticityResult(100_000, 0.001, 'eventjax numba, donated', 300.0),
            PlasticityResult(100_000, 0.001, 'one copy of the weights (w * 1.0)', 10_000.0),
            PlasticityResult(100_000, 0.001, 'forward product (binary_csrmv T, numba)', 100.0),
            PlasticityResult(100_000, 0.001, 'eventjax numba, in lax.scan (per step)', 300.0),
            PlasticityResult(100_000, 0.001, 'forward product (binary_csrmv T, numba), in lax.scan (per step)', 200.0),
            PlasticityResult(100_000, 0.001, 'eventjax jax, donated', 3000.0),
            PlasticityResult(100_000, 0.001, 'forward product (binary_csrmv T, jax)', 2000.0),
            PlasticityResult(4_000, 0.02, 'eventjax numba, donated', 60.0),
            PlasticityResult(4_000, 0.02, 'forward product (binary_csrmv T, numba)', 20.0),
            PlasticityResult(4_000, 0.02, 'brainevent 0.2.1 numba', 100.0)]
    rows += [PlasticityResult(4_000, 0.02, heavy_label('jax'), 300.0),
             PlasticityResult(4_000, 0.02, heavy_label('jax', twin=True), 100.0)]
    verdicts = dict(plasticity_targets(rows))
    assert not verdicts[f"n = 4,000, 2.0%: {heavy_label('jax')} = 3.00x its even-rows twin (<= 2x)"]
    assert verdicts['n = 100,000, 0.1%: eventjax numba, donated = 3.0% of one copy of the weights (< 10%)']
    assert not verdicts["n = 100,000, 0.1%: eventjax numba, donated = 3.00x its backend's forward product of the "
                        "same events (<= 2x)"]
    # A scan step is judged against the product in the same kind of scan; each backend against its own product.
    assert verdicts["n = 100,000, 0.1%: eventjax numba, in lax.scan (per step) = 1.50x its backend's forward product "
                    "in the same kind of scan (<= 2x)"]
    assert verdicts["n = 100,000, 0.1%: eventjax jax, donated = 1.50x its backend's forward product of the same "
                    "events (<= 2x)"]
    assert not verdicts['n = 4,000, 2.0%: numba donated = 0.60x brainevent 0.2.1 numba (<= 0.5x)']
