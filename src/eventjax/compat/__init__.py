"""Modules that let code written for other libraries run on eventjax.

- :mod:`eventjax.compat.brainevent`: brainevent's public names with brainevent's
  signatures, and :func:`~eventjax.compat.brainevent.install`, the explicit opt-in
  that makes ``import brainevent`` resolve to it in a process that chooses so.
- :mod:`eventjax.compat.spellings` and :mod:`eventjax.compat.legacy`: brainevent's
  spellings that eventjax's top level still answers to, each with a
  ``DeprecationWarning`` naming eventjax's own, until the next release.

Nothing here is imported by ``import eventjax``; the top level consults
``spellings`` (which imports nothing) when a name is not its own.
"""
