"""The name table in docs/brainevent.rst is what eventjax.compat.brainevent serves, name by name."""

import importlib.metadata
import importlib.util
import pathlib
import sys

import pytest

import eventjax.compat.brainevent as be

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location('brainevent_names', ROOT / 'tools' / 'brainevent_names.py')
names = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(names)


def test_the_page_table_is_the_one_the_code_gives():
    # python tools/brainevent_names.py rewrites it.
    assert names.main(['--check']) == 0


def test_at_least_150_of_the_174_names_are_served_and_each_other_says_why():
    rows = [r for r in names.rows() if not r[0].startswith('config.')]
    assert len(rows) == 174
    assert sum(what != 'not served' for _, what, _ in rows) >= 150
    assert all(note for _, what, note in rows if what == 'not served')


def test_every_name_not_served_names_its_alternative_when_reached():
    for name, what, note in names.rows():
        if what != 'not served':
            continue
        owner, _, attr = name.rpartition('.')
        with pytest.raises(AttributeError) as caught:
            getattr(be.config if owner == 'config' else be, attr)
        assert note.split()[0] in str(caught.value), name


def test_the_name_list_is_brainevent_030s_where_that_release_is_installed():
    try:
        version = importlib.metadata.version('brainevent')
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version != '0.3.0' or 'brainevent' in sys.modules:
        pytest.skip(f'brainevent 0.3.0 is not installed here (found {version}); make test-compat runs this')
    import brainevent
    try:
        listed = [n for n in names.brainevent_names() if not n.startswith('config.')]
        assert listed == list(brainevent.__all__)
        assert [n[7:] for n in names.brainevent_names() if n.startswith('config.')] == list(brainevent.config.__all__)
    finally:
        for key in [k for k in sys.modules if k == 'brainevent' or k.startswith('brainevent.')]:
            del sys.modules[key]
