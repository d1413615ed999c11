from otter.test_files import test_case

OK_FORMAT = False

name = "attention_density"
points = None

@test_case(points=1, hidden=False)
def test_padding_does_not_count(attention_density):
    import numpy as np
    row = np.zeros((1, 16))
    row[0, :3] = [0.6, 0.3, 0.1]
    assert np.isclose(attention_density(row, np.arange(16)[None] < 5), 0.6)

