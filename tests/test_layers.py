"""The shared layers name no backend: kernels/common and config learn the names from the bridges.

A backend's name written as a string in ``kernels/common/`` or ``config/`` would be a second place
to change when a backend is added, renamed or given another name; docstrings may show them in
examples. JAX's platform names that share a backend's spelling (``'cuda'``) sit in
``PLATFORM_ALIASES``, the one platform table, and are platforms there.
"""

import ast
import pathlib

import pytest

from eventjax.backends.registry import backend_aliases, backend_names

SRC = pathlib.Path(__file__).parent.parent / 'src' / 'eventjax'
SHARED = ('kernels/common', 'config')
PLATFORM_TABLES = {'PLATFORM_ALIASES'}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _platform_tables(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id in PLATFORM_TABLES for t in targets) and node.value is not None:
            found |= {id(c) for c in ast.walk(node.value)}
    return found


def backend_literals(source: str, names: set[str]) -> list[tuple[int, str]]:
    """``(line, name)`` for each string constant of ``source`` equal to one of ``names``, outside docstrings."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | _platform_tables(tree)
    return sorted((n.lineno, n.value) for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
                  and id(n) not in allowed)


NAMES = set(backend_names()) | set(backend_aliases())


@pytest.mark.parametrize('path', sorted(p.relative_to(SRC).as_posix() for folder in SHARED
                                        for p in (SRC / folder).rglob('*.py')))
def test_a_shared_module_writes_no_backend_name(path):
    found = backend_literals((SRC / path).read_text(), NAMES)
    assert not found, (f'{path} names backends {found} (line, name): take the name from the bridge that declares '
                       'it (eventjax.backends.registry: JAX_BACKEND, backend_names(), backend_aliases()) or have '
                       'the family pass it.')


def test_the_check_finds_a_name_in_code_and_passes_docstrings_and_platform_tables():
    source = '''"""Module: backend='numba' here is fine."""
PLATFORM_ALIASES = {'cuda': 'gpu'}
def f():
    """'warp'"""
    return g(kernels=('numba', 'warp'), default='jax_raw', label='numba_handlers')
'''
    assert backend_literals(source, NAMES) == [(5, 'jax_raw'), (5, 'numba'), (5, 'warp')]


def test_every_alias_a_bridge_declares_names_a_bridge_and_is_no_backend_itself():
    aliases = backend_aliases()
    assert aliases['jax_raw'] == 'jax'
    assert set(aliases.values()) <= set(backend_names())
    assert not set(aliases) & set(backend_names())
