from otter.test_files import test_case

OK_FORMAT = False

name = "head_diversity"
points = None

@test_case(points=1, hidden=False)
def test_agreeing_and_disjoint_heads(head_diversity):
    import numpy as np
    same = np.tile(np.array([[0.2, 0.8, 0.0]]), (4, 1, 1))
    assert abs(head_diversity(same)) < 1e-12
    apart = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    assert np.isclose(head_diversity(apart), 1.0)

