"""The README's example runs and prints what its comments say, so it shows each switch."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).parent.parent / 'README.md'


def test_readme_example_prints_the_values_in_its_comments():
    code = re.search(r'```python\n(.*?)```', README.read_text(), re.S).group(1)
    expected = [m.group(1) for line in code.splitlines() if line.lstrip().startswith('print(')
                for m in [re.search(r'#\s*(\[[^\]]*\])', line)]]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), 'exec'), {})
    assert out.getvalue().split('\n')[:-1] == expected
    assert len(set(expected)) > 1  # the switch is visible
