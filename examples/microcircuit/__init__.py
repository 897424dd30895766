"""The Potjans & Diesmann (2014) cortical microcircuit (PD14) on eventjax, as the INM-6 reference defines it."""

import resource


def peak_rss_gb():
    """The process' peak resident memory so far (GB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
