"""Run every kernel test class over each CPU backend its primitive has."""


def pytest_generate_tests(metafunc):
    prim = getattr(metafunc.cls, 'prim', None)
    if 'backend' in metafunc.fixturenames and prim is not None:
        metafunc.parametrize('backend', prim.available_backends('cpu'))
