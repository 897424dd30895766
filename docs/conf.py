"""Sphinx configuration for eventjax."""

import os
import sys
import urllib.request

sys.path.insert(0, os.path.abspath('../src'))

from eventjax import __version__  # noqa: E402

project = 'eventjax'
author = 'the eventjax developers'
release = __version__
version = '.'.join(__version__.split('.')[:2])
extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon', 'sphinx.ext.doctest', 'sphinx.ext.intersphinx']
autodoc_member_order = 'bysource'
# Show defaults as written (``progress=sys.stderr``), not as the object's repr.
autodoc_preserve_defaults = True
napoleon_google_docstring = True
exclude_patterns = ['_build', 'examples', 'tpu_table_*.rst']  # included by tpu.rst

html_theme = 'pydata_sphinx_theme'
html_title = f'eventjax {release}'
html_theme_options = {
    'navigation_with_keys': False,
    'show_toc_level': 2,
}

_INVENTORIES = {
    'jax': 'https://docs.jax.dev/en/latest/',
    'numpy': 'https://numpy.org/doc/stable/',
    'python': 'https://docs.python.org/3/',
}


def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + 'objects.inv', timeout=3):
            return True
    except Exception:
        return False


# Links into the JAX, NumPy and Python docs when their inventories can be
# fetched; an offline build (EVENTJAX_DOCS_OFFLINE=1, or no network) leaves
# those names as plain text instead of failing the warnings-are-errors build.
if os.environ.get('EVENTJAX_DOCS_OFFLINE', '0').lower() in ('1', 'true', 'yes', 'on'):
    intersphinx_mapping = {}
else:
    intersphinx_mapping = {name: (url, None) for name, url in _INVENTORIES.items() if _reachable(url)}
