"""entmax_book.display: one style per map, and library source shown without docstrings."""

import pytest

from entmax_book.display import MAP_STYLES, map_style, show_source
from entmax_lib import threshold
from entmax_lib.attention import EntmaxMultiHeadAttention


def test_every_map_has_its_own_colour_and_marker():
    colours = [style["color"] for style in MAP_STYLES.values()]
    markers = [style["marker"] for style in MAP_STYLES.values()]
    assert len(set(colours)) == len(colours) and len(set(markers)) == len(markers)


def test_one_style_per_normaliser_and_overrides():
    from entmax_lib.attention import NORMALISERS

    assert list(MAP_STYLES) == list(NORMALISERS)  # one name per map, the library's
    with pytest.raises(ValueError, match="name"):
        map_style("learned")  # no aliases
    assert map_style("softmax", label=None)["label"] is None
    assert MAP_STYLES["softmax"]["label"] is not None  # overrides do not leak into the table
    with pytest.raises(ValueError, match="name"):
        map_style("argmax")


def test_show_source_drops_every_docstring_and_keeps_the_code(capsys):
    show_source(EntmaxMultiHeadAttention)
    printed = capsys.readouterr().out
    assert printed.startswith("class EntmaxMultiHeadAttention")
    assert '"""' not in printed
    assert "def attend(self" in printed and "return (out, weights) if return_weights else out" in printed
    show_source(threshold.exact_support_step)
    assert capsys.readouterr().out.splitlines()[1].strip() == "if beta == 1.0:"
