"""Skip reasons for tests that need an optional extra: each names the extra and how to install it."""

UNITS_EXTRA = "brainunit is missing: the 'units' extra is not installed (pip install -e '.[units]')"
PLOT_EXTRA = "matplotlib is missing: the 'plot' extra is not installed (pip install -e '.[plot]')"
