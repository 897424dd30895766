"""Checks on where ``eventjax bench`` writes, made before anything is timed.

A benchmark runs for minutes; a ``--json`` or ``--plot`` path that cannot be
written must be found at the start, not after the run, when the results
would be lost.
"""

from __future__ import annotations

import os
import string

__all__ = ['plot_paths', 'writable_file_problem', 'plot_template_problem']


def writable_file_problem(option: str, path: str) -> str | None:
    """Why ``path`` cannot be created or overwritten as a file, in words; None if it can.

    Example:
        >>> writable_file_problem('--json', '/nonexistent/dir/x.json')
        "--json: the folder '/nonexistent/dir' does not exist; create it first or write elsewhere."
    """
    folder = os.path.dirname(path) or '.'
    if os.path.isdir(path):
        return f'{option}: {path!r} is a folder; give a file name, e.g. {os.path.join(path, "results")!r} + extension.'
    if not os.path.isdir(folder):
        what = 'is not a folder' if os.path.exists(folder) else 'does not exist'
        return f'{option}: the folder {folder!r} {what}; create it first or write elsewhere.'
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f'{option}: {path!r} is not writable here; choose a path you can write.'
    return None


def plot_paths(template: str, families) -> list[str]:
    """The files a ``--plot`` template names: one per family with ``{family}``, else the template itself.

    Example:
        >>> plot_paths('p_{family}.png', ['csr', 'fcn'])
        ['p_csr.png', 'p_fcn.png']
    """
    if '{family}' in template:
        return [template.format(family=f) for f in families]
    return [template.format()]


def plot_template_problem(template: str, families, extensions) -> str | None:
    """Why ``--plot template`` cannot be saved, in words; None if every file it names can be.

    Args:
        template: the ``--plot`` value; ``{family}`` is the only field.
        families: the families that will be plotted.
        extensions: the file extensions matplotlib can write (``png``, ``pdf``, ...).

    Example:
        >>> plot_template_problem('p.xyz', ['csr'], ['png', 'pdf'])
        "--plot: 'p.xyz' has the extension .xyz, which matplotlib cannot write; use one of .pdf, .png."
    """
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as err:
        return (f'--plot: {template!r} is not a valid name template ({err}); the only field is {{family}}, '
                f'and a literal brace is written twice ({{{{ or }}}}).')
    unknown = [f for f in fields if f != 'family']
    if unknown:
        return (f'--plot: unknown field {", ".join("{" + f + "}" for f in unknown)} in {template!r}; the only '
                f'field is {{family}} (one plot per family), e.g. --plot bench_{{family}}.png.')
    paths = plot_paths(template, families)
    ext = os.path.splitext(paths[0])[1].lstrip('.').lower()
    if os.path.isdir(paths[0]):
        return writable_file_problem('--plot', paths[0])
    if ext not in extensions:
        return (f'--plot: {paths[0]!r} has {"no extension" if not ext else f"the extension .{ext}"}, which '
                f'matplotlib cannot write; use one of {", ".join("." + e for e in sorted(extensions))}.')
    for path in paths:
        problem = writable_file_problem('--plot', path)
        if problem:
            return problem
    return None
