"""The multi-device guide's examples also run on 4 devices."""

import pytest

from tests.test_docs_examples import DOCS, test_page_code_blocks_run_and_print_what_they_show

pytestmark = pytest.mark.multidevice


def test_multidevice_guide_runs_on_four_devices():
    test_page_code_blocks_run_and_print_what_they_show(DOCS / 'multidevice.rst')
