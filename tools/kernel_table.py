"""Write ``src/eventjax/kernels/table.py``: for each standard operator, the file of each backend's kernel.

The registry says which backends each standard operator has (on any
platform); the rule that registration follows says where each kernel is:
``<family>/<backend>_impl.py``'s ``<operator>_kernel``, and for ``jax`` the
family's ``jax_impl.py`` when it has one, else ``reference.py``. Every file
named must list the kernel in its ``__all__``. ``--check`` exits 1 when the
table in the tree is not what this gives (``tests/kernels/test_kernel_table.py``
runs it); without it the table is rewritten.

    python tools/kernel_table.py [--check]
"""

from __future__ import annotations

import importlib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / 'src' / 'eventjax' / 'kernels' / 'table.py'
HEADER = '''"""Where each standard operator's kernels are: ``grep -A7 "'binary_csrmv'" src/eventjax/kernels/table.py``.

For each operator, per backend, the file (under ``eventjax/kernels/``) whose
``<operator>_kernel`` that backend runs; pallas's tpu kernel, where there is
one, is ``<operator>_tpu_kernel`` in the same file. Registration finds the
kernels by this rule (:mod:`eventjax.kernels.common.operator`);
``tools/kernel_table.py`` writes this table from the registry, and a test
fails when the two differ. Nothing imports this module.
"""

__all__ = ['KERNELS']

'''


def kernel_files() -> dict[str, dict[str, str]]:
    """operator -> backend -> file under ``eventjax/kernels/``, each checked to list the kernel in ``__all__``."""
    import eventjax as ej
    from eventjax.kernels.common.operator import kernel_sources

    ej.get_registry()  # loads every standard operator
    table = {}
    for name, row in sorted(kernel_sources().items()):
        if not all(module.startswith('eventjax.kernels.') for module in row.values()):
            continue  # an operator declared outside the package (a test's)
        for module in row.values():
            if f'{name}_kernel' not in getattr(importlib.import_module(module), '__all__', ()):
                raise LookupError(f'{module} does not list {name}_kernel in its __all__')
        table[name] = {backend: module.removeprefix('eventjax.kernels.').replace('.', '/') + '.py'
                       for backend, module in sorted(row.items())}
    return table


def render(table: dict[str, dict[str, str]]) -> str:
    lines = [HEADER, 'KERNELS = {']
    for name, row in table.items():
        lines.append(f'    {name!r}: {{')
        lines.extend(f'        {backend!r}: {path!r},' for backend, path in row.items())
        lines.append('    },')
    lines.append('}')
    return '\n'.join(lines) + '\n'


def main(argv: list[str]) -> int:
    text = render(kernel_files())
    if '--check' in argv:
        if TABLE.read_text() != text:
            print(f'{TABLE.relative_to(ROOT)} is not what the registry gives; run python tools/kernel_table.py')
            return 1
        return 0
    TABLE.write_text(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
