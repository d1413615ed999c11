from otter.test_files import test_case

OK_FORMAT = False

name = "entmax15"
points = None

@test_case(points=1, hidden=False)
def test_known_value(entmax15):
    import numpy as np
    assert np.allclose(entmax15(np.array([-2.0, 0.0, 0.5])), [0, 0.326, 0.674], atol=0.0001)

