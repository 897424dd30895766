"""Sphinx configuration for eventjax."""

import os
import sys

sys.path.insert(0, os.path.abspath('../src'))

project = 'eventjax'
author = 'the eventjax developers'
extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon', 'sphinx.ext.doctest']
autodoc_member_order = 'bysource'
napoleon_google_docstring = True
exclude_patterns = ['_build', 'examples']
html_theme = 'alabaster'
