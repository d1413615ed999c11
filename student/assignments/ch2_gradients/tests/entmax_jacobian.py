from otter.test_files import test_case

OK_FORMAT = False

name = "entmax_jacobian"
points = None

@test_case(points=1, hidden=False)
def test_softmax_case(entmax_jacobian):
    import numpy as np
    p = np.array([0.2, 0.3, 0.5])
    assert np.allclose(entmax_jacobian(p, 1.0), np.diag(p) - np.outer(p, p))

