"""The multi-device guide's examples also run on 4 devices."""

import pytest

from tests import test_docs_examples as docs_examples

pytestmark = pytest.mark.multidevice


def test_multidevice_guide_runs_on_four_devices(tmp_path_factory):
    docs_examples.test_page_code_blocks_run_and_print_what_they_show(docs_examples.DOCS / 'multidevice.rst',
                                                                     tmp_path_factory)
