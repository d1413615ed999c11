from otter.test_files import test_case

OK_FORMAT = False

name = "entmax_alpha_gradient"
points = None

@test_case(points=1, hidden=False)
def test_sums_to_zero(entmax_alpha_gradient):
    import numpy as np
    g = entmax_alpha_gradient(np.array([0.1, 0.3, 0.6]), 1.5)
    assert np.shape(g) == (3,) and abs(np.sum(g)) < 1e-12

