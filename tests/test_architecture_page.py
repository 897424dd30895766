"""The package picture of docs/architecture.rst matches the tree: every backend and shared-kernel folder, and
every module it names there, exists, and no backend is left out."""

import pathlib
import re

ROOT = pathlib.Path(__file__).parent.parent
SRC = ROOT / 'src' / 'eventjax'
PAGE = (ROOT / 'docs' / 'architecture.rst').read_text()
# `│   ├── numba/       __init__ (declaration, public names) bridge codegen ...` under backends/ or kernels/common/
ENTRY = re.compile(r'^[│ ]+[├└]── ([\w./]+)\s*(.*)$')


def _entries(parent: str) -> dict[str, str]:
    """The entries drawn one level below ``parent/`` in the picture, with the text after each."""
    lines = PAGE.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(rf'── {re.escape(parent)}/', line))
    depth = lines[start].index('──')
    found = {}
    last = None
    for line in lines[start + 1:]:
        m = ENTRY.match(line)
        if not m and line.startswith('    │') and '──' not in line:  # an entry's text wrapped onto this line
            if last is not None:
                found[last] += ' ' + line.strip(' │')
            continue
        if not m or line.index('──') <= depth:
            break
        if line.index('──') == depth + 4:
            last = m.group(1)
            found[last] = m.group(2)
        else:
            last = None
    return found


def _modules(text: str) -> list[str]:
    """The module names listed after an entry: bare words, leaving out what is in parentheses."""
    text = re.sub(r'\([^)]*\)', '', text)
    return [w for w in text.split() if re.fullmatch(r'[a-z_]+(\.cc)?', w)]


def test_every_backend_in_the_tree_is_drawn_and_every_drawn_one_exists():
    drawn = _entries('backends')
    packages = {f'{p.parent.name}/' for p in (SRC / 'backends').glob('*/__init__.py')}
    assert packages <= set(drawn)
    for name, text in drawn.items():
        if name.endswith('/'):
            folder = SRC / 'backends' / name
            assert (folder / '__init__.py').is_file(), name
            for module in _modules(text):
                assert (folder / (module if module.endswith('.cc') else f'{module}.py')).is_file(), (name, module)
        else:
            assert (SRC / 'backends' / name).is_file(), name


def test_every_module_at_the_top_of_backends_is_drawn():
    drawn = ' '.join(f'{k} {v}' for k, v in _entries('backends').items())
    for path in (SRC / 'backends').glob('*.py'):
        # the old module names the docs used, kept one release with a DeprecationWarning
        if path.name != '__init__.py' and not path.read_text().startswith('"""Deprecated'):
            assert path.name in drawn, path.name


def test_the_shared_kernel_folders_drawn_exist():
    drawn = [name for name in _entries('common') if name.endswith('/')]
    assert drawn
    on_disk = {f'{p.parent.name}/' for p in (SRC / 'kernels' / 'common').glob('*/__init__.py')}
    assert set(drawn) == on_disk
