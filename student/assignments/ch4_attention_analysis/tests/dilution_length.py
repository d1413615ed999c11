from otter.test_files import test_case

OK_FORMAT = False

name = "dilution_length"
points = None

@test_case(points=1, hidden=False)
def test_small(dilution_length):
    assert dilution_length(0.0, 1, 0.3) == 4

