"""Check that imports inside src/eventjax flow one way.

Layers, highest first: kernels -> backends -> primitive -> config -> errors.
A module may import from its own layer or a lower one, never a higher one,
and kernel families never import each other (all may import
kernels/common, which imports no family). Every import counts, also one
inside a function.
"""

from __future__ import annotations

import ast
import pathlib
import sys

LAYERS = ['kernels', 'backends', 'primitive', 'config', 'errors']
ROOT = pathlib.Path(__file__).resolve().parent.parent / 'src' / 'eventjax'


def layer_of(parts: list[str]) -> str | None:
    if not parts:
        return None
    head = parts[0].removesuffix('.py')
    return head if head in LAYERS else None


def imported_modules(tree: ast.AST, module_parts: list[str]) -> list[list[str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name.split('.') for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module_parts[: len(module_parts) - node.level]
                mod = base + (node.module.split('.') if node.module else [])
                found.append(['eventjax', *mod])
            elif node.module:
                names = node.module.split('.')
                found.append(names)
                if node.module == 'eventjax':
                    found += [['eventjax', alias.name] for alias in node.names]
    return [m for m in found if m and m[0] == 'eventjax']


def main() -> int:
    problems = []
    for path in sorted(ROOT.rglob('*.py')):
        rel = path.relative_to(ROOT).with_suffix('').parts
        own = layer_of(list(rel))
        if own is None:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for mod in imported_modules(tree, list(rel[:-1])):
            target = layer_of(mod[1:])
            if target is None:
                if len(mod) == 1 or mod[1] not in LAYERS:
                    problems.append(f'{path.relative_to(ROOT)}: imports {".".join(mod)}, outside the layers')
                continue
            if LAYERS.index(target) < LAYERS.index(own):
                problems.append(f'{path.relative_to(ROOT)}: layer {own!r} imports higher layer {".".join(mod)}')
            # kernels/common is shared by every family; it imports no family itself.
            shared = len(mod) > 2 and mod[2] == 'common'
            if own == target == 'kernels' and len(rel) > 2 and len(mod) > 3 and mod[2] != rel[1] and not shared:
                problems.append(f'{path.relative_to(ROOT)}: family {rel[1]!r} imports family {mod[2]!r}')
    for p in problems:
        print(p)
    print(f'check_layers: {len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
