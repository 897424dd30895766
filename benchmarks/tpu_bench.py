"""``eventjax bench --tpu``: the TPU table (products, delivery and plasticity updates, CUBA and PD14), one run.

Runs by itself when JAX's default device is a TPU. Prints each section's
table and, with ``--tpu-doc FILE`` (``{section}`` in the name: one file per
section), writes them as an RST (``.rst``) or Markdown (``.md``) include
headed by the device and the JAX version.

Example:
    >>> from benchmarks.tpu_bench import tpu_problem
    >>> tpu_problem('cpu') is None
    True
"""

from __future__ import annotations

import json
import sys

from benchmarks import tpu_report
from benchmarks.tpu_table import PRODUCTS, UPDATES, product_rows, update_rows

__all__ = ['SIZES', 'default_is_tpu', 'run', 'tpu_problem']

SIZES = (4000, 16000)


def default_is_tpu() -> bool:
    """Whether JAX's default device is a TPU (then ``eventjax bench`` runs the TPU table)."""
    import jax

    return jax.default_backend() == 'tpu'


def tpu_problem(platform: str | None) -> str | None:
    """Why the TPU table cannot run on ``platform`` (None: a TPU), in words with the fix; None if it can."""
    import jax

    if platform is not None:
        return None
    try:
        jax.devices('tpu')
    except RuntimeError:
        return (f'--tpu: JAX sees no TPU here (its default platform is {jax.default_backend()}). The TPU table runs '
                "on a machine with a TPU and JAX's TPU support (pip install 'jax[tpu]'); without --tpu, eventjax "
                'bench times the kernels of this machine.')
    return None


def _args_problem(args) -> str | None:
    from benchmarks import outputs

    if args.family:
        return ('--family chooses among the CPU tables; with the TPU table choose parts with --tpu-sections '
                f'({" ".join(tpu_report.SECTIONS)}) and --tpu-ops. For the CPU tables on a machine with a TPU, '
                'run with JAX_PLATFORMS=cpu.')
    known = [op for op, _, _ in PRODUCTS] + list(UPDATES)
    unknown = [op for op in args.tpu_ops or () if op not in known]
    if unknown:
        return f'--tpu-ops: no product or update named {", ".join(map(repr, unknown))}; known: {" ".join(known)}.'
    if args.plot:
        return '--plot draws the CPU tables; the TPU table has no plot (leave out --plot, or write --tpu-doc).'
    if args.tpu_doc:
        if not args.tpu_doc.endswith(('.rst', '.md')):
            return f'--tpu-doc: {args.tpu_doc!r} must end in .rst (reStructuredText) or .md (Markdown).'
        for section in args.tpu_sections:
            problem = outputs.writable_file_problem('--tpu-doc', args.tpu_doc.replace('{section}', section))
            if problem:
                return problem
    if args.json:
        return outputs.writable_file_problem('--json', args.json)
    return None


def run(args, problem) -> int:
    """Run the TPU table for the parsed ``args``; ``problem`` is what the shared checks found (exit 2 if any)."""
    problem = problem or (None if args.tpu_from else tpu_problem(args.platform)) or _args_problem(args)
    if problem:
        print(f'eventjax bench: error: {problem}', file=sys.stderr)
        return 2
    backends = args.backends or ['pallas', 'jax']
    rate = args.rate or 0.02
    if args.tpu_from:
        try:
            info, rows, rate = load(args.tpu_from)
        except (OSError, ValueError, KeyError, TypeError) as err:
            print(f'eventjax bench: error: --tpu-from: {err}; give the --json files of eventjax bench --tpu runs.',
                  file=sys.stderr)
            return 2
        backends = args.backends or list(dict.fromkeys(r.backend for r in rows if r.backend not in ('brainevent',
                                                                                                   'dense')))
    else:
        info, rows = measure(args, backends, rate)
    fmt = 'md' if (args.tpu_doc or '').endswith('.md') else 'rst'
    texts = {section: tpu_report.section_text(info, section, rows, backends, rate, fmt)
             for section in args.tpu_sections if any(r.section == section for r in rows)}
    for section, text in texts.items():
        print(f'\n{section}\n{text}')
    try:
        _write(args, texts, rows, info, rate)
    except OSError as err:  # checked at the start, but the disk may fill or a folder go meanwhile
        print(f'eventjax bench: error: could not write the results ({err}); the tables above are all there is.',
              file=sys.stderr)
        return 1
    return 0


def measure(args, backends, rate):
    """``(machine, rows)``: every section asked for, on the TPU (or ``--platform``'s first device)."""
    import jax

    device = jax.devices(args.platform or 'tpu')[0]
    box = args.row_timeout
    progress = None if args.no_progress else sys.stderr

    rows = []

    def report(row):
        rows.append(row)
        if args.json:  # after every row: a run stopped from outside (a time limit) keeps what it measured
            _dump(args.json, tpu_report.describe(device), rate, rows)
        if progress:
            what = ' '.join(str(x) for x in (row.op, row.events, row.n and f'n={row.n}', '' if row.transpose is None
                                             else 's@W' if row.transpose else 'W@s', row.backend) if x)
            diff = f' {row.diff:.1e}' if row.diff is not None and row.diff > tpu_report.MISMATCH else ''
            print(f'  {what}: {tpu_report._cell(row)}{diff}', file=progress, flush=True)

    print(f'device: {device.device_kind} ({device.platform}), JAX {jax.__version__}; backends {" ".join(backends)}; '
          f'each row boxed to {box:g} s')
    for n in args.sizes or SIZES:
        if 'products' in args.tpu_sections:
            product_rows(n, device, backends, ops=args.tpu_ops, rate=rate, compare=not args.no_compare,
                         seconds=box, seed=args.seed, report=report)
        if 'updates' in args.tpu_sections:
            update_rows(n, device, backends, ops=args.tpu_ops, rate=rate, seconds=box, seed=args.seed, report=report)
    if 'models' in args.tpu_sections:
        from benchmarks.tpu_models import cuba_rows, pd14_rows

        cuba_rows(device, backends, ms=args.cuba_ms, seconds=box, seed=args.seed, report=report)
        pd14_rows(device, backends, scale=args.pd14_scale, ms=args.pd14_ms, warmup_ms=args.pd14_warmup,
                  seconds=max(box, 300.0), report=report)
    return tpu_report.describe(device), rows


def load(paths):
    """``(machine, rows, rate)`` of earlier runs' ``--json`` files, one table of them all (the first's machine)."""
    from benchmarks.tpu_table import Row

    docs = []
    for path in paths:
        with open(path) as fh:
            doc = json.load(fh)
        if not isinstance(doc, dict) or not {'machine', 'rate', 'rows'} <= doc.keys():
            raise ValueError(f'{path!r} is not the --json of an eventjax bench --tpu run')
        docs.append(doc)
    kinds = {d['machine']['device'] for d in docs}
    if len(kinds) > 1:
        raise ValueError(f'the files come from different devices ({", ".join(sorted(kinds))})')
    return docs[0]['machine'], [Row(**r) for d in docs for r in d['rows']], docs[0]['rate']


def _write(args, texts, rows, info, rate):
    if args.tpu_doc and '{section}' in args.tpu_doc:
        for section, text in texts.items():
            path = args.tpu_doc.replace('{section}', section)
            with open(path, 'w') as fh:
                fh.write(text + '\n')
            print(f'table written to {path}')
    elif args.tpu_doc:
        with open(args.tpu_doc, 'w') as fh:
            fh.write('\n\n'.join(texts.values()) + '\n')
        print(f'tables written to {args.tpu_doc}')
    if args.json:
        _dump(args.json, info, rate, rows)
        print(f'results written to {args.json}')


def _dump(path, info, rate, rows):
    import dataclasses
    import os

    with open(path + '.part', 'w') as fh:
        json.dump({'machine': info, 'rate': rate, 'rows': [dataclasses.asdict(r) for r in rows]}, fh, indent=1)
    os.replace(path + '.part', path)
