from otter.test_files import test_case

OK_FORMAT = False

name = "informative_mass"
points = None

@test_case(points=1, hidden=False)
def test_small(informative_mass):
    import numpy as np
    w = np.array([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    inf = np.array([[True, False, False], [False, False, True]])
    assert np.isclose(informative_mass(w, inf), 0.6)

