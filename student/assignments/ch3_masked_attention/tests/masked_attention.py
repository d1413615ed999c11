from otter.test_files import test_case

OK_FORMAT = False

name = "masked_attention"
points = None

@test_case(points=1, hidden=False)
def test_shapes(masked_attention):
    import numpy as np
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(4, 8)), rng.normal(size=(5, 8)), rng.normal(size=(5, 3)))
    out, w = masked_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), np.ones((4, 5), bool), 1.5)
    assert np.shape(out) == (4, 3) and np.shape(w) == (4, 5)

