"""The stress harness turns a hung call into a failed run with every stack dumped."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HUNG = textwrap.dedent('''
    import time
    from stress.harness import CallWatch, install_watch, watched

    watch = CallWatch(1.0, period=0.1)
    install_watch(watch)
    with watch:
        with watched('a call that hangs'):
            time.sleep(60)
    print('not reached')
''')

QUICK = textwrap.dedent('''
    from stress.harness import CallWatch, install_watch, watched

    watch = CallWatch(30.0, period=0.1)
    install_watch(watch)
    with watch:
        for _ in range(100):
            with watched('a quick call'):
                pass
    print('longest', watch.longest < 1.0)
''')


def _run(code):
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), str(ROOT / 'src')])}
    return subprocess.run([sys.executable, '-c', code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=50)


class TestCallWatch:
    def test_a_call_over_the_bound_ends_the_run_with_code_70_and_all_stacks(self):
        proc = _run(HUNG)
        assert proc.returncode == 70
        assert "'a call that hangs' has run for" in proc.stderr
        assert 'most recent call first' in proc.stderr  # faulthandler's stack dump
        assert 'not reached' not in proc.stdout

    def test_calls_within_the_bound_let_the_run_finish(self):
        proc = _run(QUICK)
        assert proc.returncode == 0, proc.stderr
        assert 'longest True' in proc.stdout


class TestReport:
    def test_a_scenario_that_made_no_checks_fails(self):
        from stress.harness import Report

        report = Report('idle')
        report.add(calls=5)
        assert not report.ok
        assert 'FAILED (0 checks)' in report.line()

    def test_a_scenario_with_checks_and_no_failures_passes(self):
        from stress.harness import Report

        report = Report('busy')
        report.add(calls=1, checks=1)
        assert report.ok and ': ok:' in report.line()


class TestMemoryCriterion:
    """A long run fails when its RSS when the warm-up ended (else after the first minute) is not within 20% of
    its RSS at the end."""

    @staticmethod
    def _trace(samples):
        from stress.harness import RssTrace

        trace = RssTrace()
        trace.samples = list(samples)
        trace.now = lambda: samples[-1][0]
        return trace

    def _check(self, samples, long=True, settled=None):
        from stress.__main__ import _memory_line
        from stress.harness import CompileCount

        return _memory_line(self._trace(samples), CompileCount(), 0.0, long, settled)

    def test_growth_after_the_first_minute_beyond_20_percent_of_the_end_fails(self, capsys):
        assert not self._check([(0.0, 100.0), (60.0, 500.0), (300.0, 700.0)])
        assert 'FAILED' in capsys.readouterr().out

    def test_growth_within_20_percent_passes(self, capsys):
        assert self._check([(0.0, 100.0), (61.0, 600.0), (300.0, 700.0)])
        assert '600 MiB after 60 s, 700 MiB at the end' in capsys.readouterr().out

    def test_the_baseline_is_taken_when_a_slow_warm_up_ends_not_at_a_fixed_second(self, capsys):
        # A loaded machine: the warm-up ran to 100 s, so the sample at 60 s is inside it.
        samples = [(0.0, 300.0), (60.0, 945.0), (100.0, 1300.0), (600.0, 1346.0)]
        assert not self._check(samples)
        capsys.readouterr()
        assert self._check(samples, settled=100.0)
        assert '1300 MiB when the warm-up ended (100 s), 1346 MiB at the end' in capsys.readouterr().out

    def test_growth_after_the_warm_up_beyond_the_bound_still_fails(self):
        assert not self._check([(0.0, 300.0), (100.0, 1000.0), (600.0, 1346.0)], settled=100.0)

    def test_the_short_mode_reports_without_failing(self):
        assert self._check([(0.0, 100.0), (60.0, 200.0), (300.0, 700.0)], long=False)

    def test_the_rss_trace_samples_while_active(self):
        from stress.harness import RssTrace

        with RssTrace(period=0.01) as trace:
            _ = bytearray(1 << 20)
        assert trace.samples and trace.at(0.0) > 0 and trace.at(1e9) == trace.samples[-1][1]
