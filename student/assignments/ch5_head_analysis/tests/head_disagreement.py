from otter.test_files import test_case

OK_FORMAT = False

name = "head_disagreement"
points = None

@test_case(points=1, hidden=False)
def test_identical_heads_agree(head_disagreement):
    import numpy as np
    w = np.tile(np.array([[0.2, 0.8, 0.0]]), (4, 1, 1))
    assert abs(head_disagreement(w)) < 1e-12

