from otter.test_files import test_case

OK_FORMAT = False

name = "causal_mask"
points = None

@test_case(points=1, hidden=False)
def test_small(causal_mask):
    import numpy as np
    assert np.array_equal(np.asarray(causal_mask(3)), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])

