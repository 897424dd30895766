"""Load a script of docs/examples as a module, so tests call its functions."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).parent.parent / 'docs' / 'examples'


def load_example(name: str):
    """The module ``docs/examples/<name>.py``, executed afresh."""
    spec = importlib.util.spec_from_file_location(f'example_{name}', EXAMPLES / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
