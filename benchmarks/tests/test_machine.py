"""What the bench measures about the machine before the kernels."""

from benchmarks import machine


def test_on_the_cpu_the_bandwidth_is_a_host_copy_and_every_field_is_filled():
    m = machine.measure_machine(quick=True)
    assert m.method == 'numpy copy' and m.copy_mib == 64
    assert m.bandwidth_gbs > 0.1 and m.call_us > 0 and m.cpus >= 1
    assert m.describe().startswith(f'memory bandwidth {m.bandwidth_gbs:.1f} GB/s (numpy copy of 64 MiB')


def test_on_an_accelerator_the_bandwidth_is_a_copy_in_device_memory(monkeypatch):
    monkeypatch.setattr(machine.jax, 'default_backend', lambda: 'gpu')
    monkeypatch.setattr(machine, 'measure_device_bandwidth', lambda mib: 4000.0 + mib)
    monkeypatch.setattr(machine, 'measure_bandwidth', lambda mib: 1 / 0)  # the host copy must not be used
    m = machine.measure_machine(quick=False)
    assert (m.method, m.copy_mib, m.bandwidth_gbs) == ('jax copy on gpu', 1024, 5024.0)
