"""Check that imports inside src/eventjax flow one way, for every module.

Layers, highest first: __main__ -> cli -> compat -> the package root
(eventjax/__init__.py) -> serving -> distributed -> containers -> kernels ->
backends -> primitive -> config -> errors -> _version. A module may import from its own layer or a
lower one, never a higher one; a module in no layer is itself a problem, so
a new module must be placed here. Kernel families never import each other
(all may import kernels/common, which imports no family). Every import
counts for the layers, also one inside a function, and no chain of
module-level imports may lead from a module back to itself. An import inside
a function runs at the call, after both modules have loaded, so it is how two
classes that convert into each other (``EventArray.compact()`` and
``IndexedEvents.to_event_array()``, ``CSR.tocoo()`` and ``COO.tocsr()``) name
each other from modules of their own names. A backend with a package of its own
(``backends/<name>/``) is used from outside that package through the package
alone (its ``__init__``, the backend's public surface), never through its
implementation modules.
"""

from __future__ import annotations

import ast
import pathlib
import sys

LAYERS = ['__main__', 'cli', 'compat', '', 'serving', 'distributed', 'containers', 'kernels', 'backends',
          'primitive', 'config',
          'errors', '_version']  # '' is the package root
ROOT = pathlib.Path(__file__).resolve().parent.parent / 'src' / 'eventjax'
# The backends with a package of their own: backends/<name>/__init__.py.
BACKEND_PACKAGES = frozenset(p.parent.name for p in (ROOT / 'backends').glob('*/__init__.py'))


def backend_private(rel: list[str], mod: list[str]) -> str | None:
    """The backend whose implementation module ``mod`` is, when module ``rel`` (outside its package) names it."""
    if len(mod) > 2 and mod[0] == 'backends' and mod[1] in BACKEND_PACKAGES and rel[:2] != ['backends', mod[1]]:
        return mod[1]
    return None


def layer_of(parts: list[str]) -> str | None:
    """The layer of module ``eventjax.<parts>`` (``[]`` or ``['__init__']``: the package root)."""
    head = parts[0].removesuffix('.py') if parts else ''
    head = '' if head == '__init__' else head
    return head if head in LAYERS else None


def module_name(parts: list[str]) -> str | None:
    """The dotted name of the module file ``eventjax.<parts>`` refers to, or None if there is none."""
    path = ROOT.joinpath(*parts)
    if path.with_suffix('.py').is_file():
        return '.'.join(['eventjax', *parts])
    if (path / '__init__.py').is_file():
        return '.'.join(['eventjax', *parts])
    return None


def imported_modules(tree: ast.AST, package_parts: list[str], deferred: bool = True) -> list[list[str]]:
    """Every eventjax module imported in ``tree``, as parts after ``eventjax``; with ``deferred=False``, only
    those imported when the module loads (not inside a function)."""
    in_functions = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        if not deferred and id(node) in in_functions:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name.split('.') for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ['eventjax', *package_parts[: len(package_parts) - node.level + 1]]
                mod = base + (node.module.split('.') if node.module else [])
            elif node.module:
                mod = node.module.split('.')
            else:
                continue
            # `from package import name` imports the submodule when there is one, else the package.
            subs = [mod + [a.name] for a in node.names if module_name(mod[1:] + [a.name])]
            found += subs if len(subs) == len(node.names) else [mod, *subs]
    return [m[1:] for m in found if m and m[0] == 'eventjax']


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the import graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def main() -> int:
    problems, graph = [], {}
    for path in sorted(ROOT.rglob('*.py')):
        rel = list(path.relative_to(ROOT).with_suffix('').parts)
        is_package = rel[-1] == '__init__'
        name = '.'.join(['eventjax', *(rel[:-1] if is_package else rel)])
        own = layer_of(rel)
        if own is None:
            problems.append(f'{path.relative_to(ROOT)}: in no layer; place it in tools/check_layers.py LAYERS')
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        package_parts = rel[:-1] if is_package else rel[:-1]
        graph[name] = set()
        for mod in imported_modules(tree, package_parts):
            target = layer_of(mod)
            if target is None:
                problems.append(f'{path.relative_to(ROOT)}: imports eventjax.{".".join(mod)}, outside the layers')
                continue
            if LAYERS.index(target) < LAYERS.index(own):
                problems.append(f'{path.relative_to(ROOT)}: layer {own or "root"!r} imports higher layer '
                                f'eventjax.{".".join(mod)}')
            # kernels/common is shared by every family; it imports no family itself.
            shared = len(mod) > 1 and mod[1] == 'common'
            if own == target == 'kernels' and len(rel) > 2 and len(mod) > 2 and mod[1] != rel[1] and not shared:
                problems.append(f'{path.relative_to(ROOT)}: family {rel[1]!r} imports family {mod[1]!r}')
            backend = backend_private(rel, mod)
            if backend:
                problems.append(f'{path.relative_to(ROOT)}: imports eventjax.{".".join(mod)}, an implementation '
                                f'module of the {backend!r} backend; import its names from eventjax.backends.{backend}')
        for mod in imported_modules(tree, package_parts, deferred=False):
            target_name = module_name(mod)
            if target_name and target_name != name:
                graph[name].add(target_name)
    cycle = find_cycle(graph)
    if cycle:
        problems.append('import cycle: ' + ' -> '.join(cycle))
    for p in problems:
        print(p)
    print(f'check_layers: {len(graph)} module(s), {len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
