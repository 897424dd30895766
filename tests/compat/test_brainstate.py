"""brainstate's own event-layer tests, run unchanged on eventjax through eventjax.compat.brainevent.

brainstate (a test-only dependency, the ``brainstate`` extra) imports
brainevent by name; a child process opts in with
``eventjax.compat.brainevent.install`` and runs brainstate's test files
``nn/_event_fixedprob_test.py`` and ``nn/_event_linear_test.py`` from the
installed release. The child checks that brainstate's modules really hold
the compatibility module, so a pass cannot come from the real brainevent.
"""

import importlib.util
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

FILES = ('_event_fixedprob_test.py', '_event_linear_test.py')
# brainstate 0.5.4 ships 42 tests in these two files.
AT_LEAST = 42

CHILD = """
import sys
import eventjax.compat.brainevent as compat
compat.install(replace_installed=True)
import pytest
rc = pytest.main(sys.argv[1:])
import brainstate.nn._event_fixedprob as fixedprob, brainstate.nn._event_linear as linear, braintools.conn._base as conn
assert fixedprob.brainevent is compat and linear.brainevent is compat and conn.brainevent is compat
sys.exit(rc)
"""


def _brainstate_tests():
    for name in ('brainstate', 'braintools'):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f'{name} is not installed (pip install -e ".[brainstate]")')
    nn = pathlib.Path(importlib.util.find_spec('brainstate').origin).parent / 'nn'
    files = [nn / f for f in FILES]
    missing = [str(f) for f in files if not f.is_file()]
    assert not missing, f'this brainstate release lacks {missing}'
    return files


# A child process running a third party's 42 tests, the slowest test of the default run: make test-long runs it.
@pytest.mark.long
def test_brainstates_event_layer_tests_pass_on_eventjax(tmp_path):
    files = _brainstate_tests()
    report = tmp_path / 'report.xml'
    run = subprocess.run(
        [sys.executable, '-c', CHILD, '-q', '-p', 'no:cacheprovider', '-o', 'addopts=', '--rootdir', str(tmp_path),
         f'--junitxml={report}', *map(str, files)],
        cwd=tmp_path, capture_output=True, text=True, timeout=540)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == 'testsuite' else suite.find('testsuite')
    counts = {k: int(suite.get(k)) for k in ('tests', 'failures', 'errors', 'skipped')}
    assert counts['tests'] >= AT_LEAST and counts['failures'] == counts['errors'] == 0, counts
    # Only brainstate's own guard for an old jax may skip; nothing here does.
    assert counts['skipped'] == 0, counts
