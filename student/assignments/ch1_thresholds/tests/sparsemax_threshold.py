from otter.test_files import test_case

OK_FORMAT = False

name = "sparsemax_threshold"
points = None

@test_case(points=1, hidden=False)
def test_known_value(sparsemax_threshold):
    import numpy as np
    assert np.isclose(sparsemax_threshold(np.array([-2.0, 0.0, 0.5])), -0.25)

