"""The PD14 example's command lines (one process and several): bad times, seeds and scales are usage errors,
and --json is strict JSON."""

import json
import types

import numpy as np
import pytest
from examples.microcircuit import __main__ as command
from examples.microcircuit import distributed, simulation
from examples.microcircuit import params as P


@pytest.fixture(params=[command, distributed], ids=['one process', 'distributed'])
def entry(request):
    return request.param


@pytest.fixture
def usage_error(capsys, entry):
    def refused(*argv):
        with pytest.raises(SystemExit) as exit_:
            entry.parse(list(argv))
        assert exit_.value.code == 2
        return capsys.readouterr().err
    return refused


class TestArguments:
    @pytest.mark.parametrize('t_sim', ['0', '-100', '0.05', 'nan', 'inf'])
    def test_a_simulated_time_under_one_step_or_not_finite_is_refused(self, usage_error, t_sim):
        assert '--t-sim must be a time of at least one step (0.1 ms)' in usage_error('--t-sim', t_sim)

    @pytest.mark.parametrize('t_presim', ['-1', 'nan'])
    def test_a_negative_or_undefined_warm_up_is_refused(self, usage_error, t_presim):
        assert '--t-presim must be a time of 0 ms or more' in usage_error('--t-presim', t_presim)

    def test_a_negative_seed_is_refused(self, usage_error):
        assert '--seed must be 0 or more, got -3' in usage_error('--seed', '-3')

    def test_a_scale_that_leaves_a_population_without_neurons_is_refused(self, usage_error):
        err = usage_error('--scale', '1e-9')
        assert 'leaves L23E, L23I' in err and 'use a scale of at least 0.00047' in err

    def test_the_smallest_scale_the_message_names_is_accepted(self, entry):
        args = entry.parse(['--scale', '0.00047'])
        assert P.derive(args.scale, args.scale, 'dc').num_neurons.min() == 1

    def test_sensible_arguments_pass(self, entry):
        args = entry.parse(['--t-sim', '0.1', '--t-presim', '0', '--seed', '0'])
        assert (args.t_sim, args.t_presim, args.seed) == (0.1, 0.0, 0)


class TestPallas:
    def test_pallas_without_a_tpu_or_gpu_is_a_usage_error(self, capsys, monkeypatch):
        import eventjax.backends.pallas as bridge

        monkeypatch.setattr(bridge, 'get_cpu_interpret', lambda: False)  # the tests turn interpret mode on
        with pytest.raises(SystemExit) as exit_:
            command.parse(['--backend', 'pallas'])
        err = capsys.readouterr().err
        assert exit_.value.code == 2
        assert '--backend pallas runs its kernels on a TPU or GPU, and JAX sees only cpu' in err
        assert 'EVENTJAX_PALLAS_INTERPRET=1' in err

    def test_pallas_in_interpret_mode_is_accepted(self, monkeypatch):
        import eventjax.backends.pallas as bridge

        monkeypatch.setattr(bridge, 'get_cpu_interpret', lambda: True)
        assert command.parse(['--backend', 'pallas']).backend == 'pallas'


class TestJson:
    def test_the_json_line_is_strict_json_even_with_a_silent_network(self, capsys, monkeypatch):
        derived = P.derive(0.001, 0.001, 'dc')
        n = int(derived.num_neurons.sum())
        model = types.SimpleNamespace(n=n, nnz=0, derived=derived,
                                      pop_of=np.repeat(np.arange(8), derived.num_neurons))

        class Silent:  # a network that never fires, built and run without compiling anything
            delivery = 'pull'

            def __init__(self, model, backend, seed, delivery=None):
                pass

            def compile(self):
                return 0.0

            def run(self, ms, label, progress, record=True):
                return np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0

        monkeypatch.setattr(simulation, 'build', lambda *args, **kwargs: model)
        monkeypatch.setattr(simulation, 'Runner', Silent)
        assert command.main(['--scale', '0.001', '--t-sim', '1', '--quiet', '--json']) == 0
        line = capsys.readouterr().out.strip().splitlines()[-1]

        def refuse(name):
            raise ValueError(f'not strict JSON: {name}')

        figures = json.loads(line, parse_constant=refuse)
        assert figures['neurons'] == n and figures['rates'] == [0.0] * 8
