"""The standard-kernel benchmarks behind ``eventjax bench`` (public API only).

Example:
    >>> import benchmarks
    >>> results = benchmarks.run(['dense'], backends=['jax'], sizes=[100], quick=True, progress=None)
    >>> results[0].backend
    'jax'
"""

from benchmarks.cases import CASES, FAMILIES, Case, Problem, cases_for
from benchmarks.delay_summary import brainevent_delay_elsewhere, delay_findings
from benchmarks.events_summary import brainevent_elsewhere, events_findings, events_targets
from benchmarks.machine import Machine, measure_machine
from benchmarks.plasticity import PlasticityResult, format_plasticity, run_plasticity
from benchmarks.report import LEGEND, Result, format_table, plot, write_json
from benchmarks.runner import QUICK_SIZES, SIZES, run

__all__ = ['CASES', 'FAMILIES', 'LEGEND', 'QUICK_SIZES', 'SIZES', 'Case', 'Machine', 'PlasticityResult', 'Problem',
           'Result', 'brainevent_delay_elsewhere', 'brainevent_elsewhere', 'cases_for', 'delay_findings',
           'events_findings', 'events_targets', 'format_plasticity', 'format_table', 'measure_machine', 'plot', 'run',
           'run_plasticity', 'write_json']
