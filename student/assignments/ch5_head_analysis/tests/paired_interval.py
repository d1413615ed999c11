from otter.test_files import test_case

OK_FORMAT = False

name = "paired_interval"
points = None

@test_case(points=1, hidden=False)
def test_three_seeds(paired_interval):
    import numpy as np
    mean, low, high, p, verdict = paired_interval([0.9, 0.8, 0.85], [0.8, 0.75, 0.8])
    assert np.isclose(mean, 0.2 / 3) and low < 0 < high
    assert np.isclose(p, 0.0572, atol=0.0001) and verdict == 'suggestive'

