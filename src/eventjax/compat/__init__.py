"""Modules that let code written for other libraries run on eventjax.

- :mod:`eventjax.compat.brainevent`: brainevent's public names with brainevent's
  signatures, and :func:`~eventjax.compat.brainevent.install`, the explicit opt-in
  that makes ``import brainevent`` resolve to it in a process that chooses so.

Nothing here is imported by ``import eventjax``.
"""
