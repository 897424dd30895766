"""Run brainevent 0.3.0's own test files that use only its public names on eventjax; print the counts.

A file qualifies when each of its brainevent imports is ``import brainevent``
(any alias) or ``from brainevent[._x] import Y`` with every ``Y`` public;
those ``from brainevent._x import Y`` lines become ``from brainevent import Y``
and nothing else is changed. The files run in one pytest process with
``eventjax.compat.brainevent`` installed.

    python stack_tests/brainevent_own_tests.py [--keep DIR] [pytest args]
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import re
import subprocess
import sys
import tempfile


def _public() -> set[str]:
    origin = pathlib.Path(importlib.util.find_spec('brainevent').origin)
    tree = ast.parse(origin.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == '__all__' for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise SystemExit(f'no __all__ in {origin}')


def qualifying(root: pathlib.Path, public: set[str]) -> dict[pathlib.Path, str]:
    """Each test file that uses only public names, with its brainevent imports rewritten."""
    out = {}
    for path in sorted(root.rglob('*_test.py')):
        text = path.read_text()
        ok = True
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                ok &= all(a.name == 'brainevent' or not a.name.startswith('brainevent') for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith('brainevent'):
                ok &= node.level == 0 and all(a.name in public for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level:
                ok = False
        if ok:
            out[path] = re.sub(r'^(\s*)from brainevent\.[\w.]+ import', r'\1from brainevent import', text,
                               flags=re.M)
    return out


def main(argv: list[str]) -> int:
    public = _public()
    root = pathlib.Path(importlib.util.find_spec('brainevent').origin).parent
    files = qualifying(root, public)
    keep = argv[argv.index('--keep') + 1] if '--keep' in argv else None
    rest = [a for i, a in enumerate(argv) if a != '--keep' and (i == 0 or argv[i - 1] != '--keep')]
    work = pathlib.Path(keep or tempfile.mkdtemp(prefix='brainevent-tests-'))
    work.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        (work / '_'.join(path.relative_to(root).parts)).write_text(text)
    (work / 'conftest.py').write_text('import eventjax.compat.brainevent as compat\n'
                                      'compat.install(replace_installed=True)\n')
    (work / 'pytest.ini').write_text('[pytest]\naddopts = -p no:cacheprovider\n')
    print(f'{len(files)} of {len(list(root.rglob("*_test.py")))} brainevent test files use only public names')
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-rf', *rest, str(work)], cwd=work).returncode


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
