"""Every ``.. code-block:: python`` in docs/ runs, and prints what the ``text`` block after it shows.

The blocks of one page run in order in one namespace, as a reader would
type them. A block marked ``:class: requires-<feature>`` runs only where
that feature is present (a GPU, a kernel family not installed); its page's
later blocks must not depend on it.
"""

import contextlib
import importlib.util
import io
import pathlib
import re
import textwrap

import jax
import pytest

import eventjax as ej

DOCS = pathlib.Path(__file__).parent.parent / 'docs'
PAGES = sorted(p for p in DOCS.rglob('*.rst') if '_build' not in p.parts and '.. code-block:: python' in p.read_text())
BLOCK = re.compile(r'^\.\. code-block:: (\w+)\n((?:[ ]{3,}:[\w-]+:.*\n)*)\n((?:[ ]{3,}.*\n|[ \t]*\n)+)', re.M)

REQUIREMENTS = {
    'requires-gpu': lambda: jax.default_backend() == 'gpu',
    'requires-fcn': lambda: hasattr(ej, 'binary_fcnmv'),
    'requires-cpp': lambda: ej.backends_available()['cpp']['cpu'].available,
    'requires-numba-cuda': lambda: importlib.util.find_spec('numba_cuda') is not None,
    'requires-numba-bridge': lambda: hasattr(ej.XLACustomKernel, 'def_numba_kernel')
    and ej.backends_available()['numba']['cpu'].available,
}


def blocks(page):
    """(language, options, code, line) for every code block of ``page``."""
    text = page.read_text()
    for match in BLOCK.finditer(text):
        yield (match.group(1), match.group(2), textwrap.dedent(match.group(3)).strip('\n') + '\n',
               text.count('\n', 0, match.start()) + 1)


def runnable(options):
    for cls in re.findall(r':class:\s*(.*)', options):
        for name in cls.split():
            if name in REQUIREMENTS and not REQUIREMENTS[name]():
                return False
    return True


def normalise(text):
    return [line.rstrip() for line in text.strip().splitlines()]


@pytest.mark.parametrize('page', PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page_code_blocks_run_and_print_what_they_show(page, tmp_path_factory):
    namespace = {'__name__': f'docs_{page.stem}'}
    pallas_cpu = ej.backends.pallas.get_cpu_interpret()
    found = list(blocks(page))
    try:
        for i, (lang, options, code, line) in enumerate(found):
            if lang != 'python' or not runnable(options):
                continue
            # A real file, as a reader's script would be: warp and numba read
            # and cache kernels by their source file.
            name = str(tmp_path_factory.mktemp('docs') / f'{page.stem}_line{line}.py')
            pathlib.Path(name).write_text(code)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, name, 'exec'), namespace)
            nxt = found[i + 1] if i + 1 < len(found) else None
            if nxt is not None and nxt[0] == 'text':
                assert normalise(out.getvalue()) == normalise(nxt[2]), f'{page.name}:{line} printed other text'
    finally:
        ej.clear_backends()
        ej.backends.pallas.set_cpu_interpret(pallas_cpu)


def test_the_block_pattern_finds_blocks():
    assert len(list(blocks(DOCS / 'getting_started.rst'))) >= 4
