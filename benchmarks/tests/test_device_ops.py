"""The per-operation profile runs anywhere: on the CPU it reads the host's XLA operations."""

import json

import jax
import jax.numpy as jnp

from benchmarks import device_ops


def test_an_operation_in_a_loop_counts_once_a_step():
    f = jax.jit(lambda x: jax.lax.fori_loop(0, 6, lambda i, y: jnp.sort(y * -1.5), x))
    rows = device_ops.op_times(lambda: f(jnp.arange(5000.0)), steps=6, repeats=3)
    assert rows and all(r['us_per_step'] >= 0 for r in rows)
    sorts = [r for r in rows if 'sort' in r['op']]
    assert sorts and sorts[0]['per_step'] == 1.0 and sorts[0]['us_per_step'] > 0


def test_the_products_command_writes_each_operation_s_time(tmp_path, capsys):
    out = tmp_path / 'ops.json'
    rows = device_ops.main(['products', '--size', '300', '--backend', 'jax', '--loop', '4', '--repeats', '1',
                            '--top', '3', '--json', str(out)])
    assert json.loads(out.read_text()) == rows
    assert any(r['per_step'] == 1.0 and r['us_per_step'] > 0 for r in rows)
    printed = capsys.readouterr().out
    assert 'products on cpu: 4 steps a run' in printed and len(printed.splitlines()) >= 4
