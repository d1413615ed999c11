"""entmax_book.display: one style per map, library source shown without docstrings, glue."""

import importlib.util
import sys
import types

import numpy as np
import pytest

from entmax_book.display import MAP_STYLES, glue, map_style, markdown_table, show_rows, show_source
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


def test_show_rows_labels_maps_aligns_columns_and_refuses_no_rows(capsys):
    show_rows("accuracy (%)", {"sparsemax": np.array([97.25, 3.0]), "oracle pooling": 99.96}, "{:.2f}")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "accuracy (%)"
    assert lines[1].split() == ["sparsemax", "(α", "=", "2)", "97.25", "3.00"]
    assert lines[2].split() == ["oracle", "pooling", "99.96"]
    assert lines[1].index("97.25") == lines[2].index("99.96")  # one column, whatever the label
    with pytest.raises(TypeError, match="rows"):
        show_rows("nothing", {})


def test_glue_without_myst_nb_prints_the_value_as_a_float(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails, as on Colab
    glue("gap", np.float32(0.25))
    glue("verdict", "holds")
    assert capsys.readouterr().out == "gap = 0.25\nverdict = holds\n"


def test_glue_hands_myst_nb_a_plain_float_and_no_display(monkeypatch):
    stored = []
    fake = types.ModuleType("myst_nb")
    fake.glue = lambda name, value, display=True: stored.append((name, value, display))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("gap", np.float64(1.5))
    glue("verdict", "holds")
    assert stored == [("gap", 1.5, False), ("verdict", "holds", False)]
    assert type(stored[0][1]) is float


def test_glue_hands_a_markdown_table_to_myst_nb_and_shows_it_without(monkeypatch, capsys):
    from IPython.display import Markdown

    table = Markdown("| a | b |\n|---|---|\n| 1 | 2 |")
    stored = []
    fake = types.ModuleType("myst_nb")
    fake.glue = lambda name, value, display=True: stored.append((name, value, display))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("table", table)
    [(name, value, shown)] = stored
    assert (name, value.data, shown) == ("table", table.data, False)
    assert isinstance(value, Markdown)
    if importlib.util.find_spec("markdown_it") is not None:  # installed with MyST-NB, the build's
        html = value._repr_html_()  # what {glue} with :doc: pastes on another page
        assert "<table>" in html and "<td>2</td>" in html and "|" not in html
    monkeypatch.setitem(sys.modules, "myst_nb", None)
    glue("table", table)  # outside the build the table is displayed (as text in a terminal)
    assert "Markdown object" in capsys.readouterr().out


def test_glue_refuses_what_is_neither_number_word_nor_figure():
    with pytest.raises(TypeError, match="value of 'table' must be a number"):
        glue("table", {"a": 1})


@pytest.mark.parametrize(
    "value, error, match",
    [
        (b"1.5", TypeError, "got bytes"),
        (True, TypeError, "got bool"),
        (np.bool_(False), TypeError, "got bool"),
        (np.array("abc"), TypeError, "got an array of dtype <U3"),
        (np.array([1.0, 2.0]), TypeError, r"got an array of shape \(2,\)"),
        (1 + 2j, TypeError, "got complex"),
        (10**400, ValueError, "must be finite .* an integer of 401 digits"),
        (float("nan"), ValueError, "must be finite, got nan"),
        (np.float32("inf"), ValueError, "must be finite, got inf"),
        (np.array(-np.inf), ValueError, "must be finite, got -inf"),
    ],
    ids=["bytes", "bool", "np_bool", "str_array", "vector", "complex", "huge_int", "nan", "inf", "-inf"],
)
def test_glue_refuses_what_the_text_cannot_quote_naming_it(monkeypatch, value, error, match):
    monkeypatch.setitem(sys.modules, "myst_nb", None)
    with pytest.raises(error, match=f"value of 'x' {match}" if error is ValueError else match):
        glue("x", value)


@pytest.mark.parametrize(
    "name, error",
    [("", ValueError), ("two words", ValueError), ("a:b", ValueError), ("`a`", ValueError), (3, TypeError)],
)
def test_glue_refuses_names_the_text_cannot_refer_to(monkeypatch, name, error):
    monkeypatch.setitem(sys.modules, "myst_nb", None)
    with pytest.raises(error, match="name must be"):
        glue(name, 1.0)


def test_glue_accepts_every_kind_of_real_scalar(monkeypatch, capsys):
    import jax.numpy as jnp

    monkeypatch.setitem(sys.modules, "myst_nb", None)
    for value in (3, np.int64(3), jnp.float32(3), jnp.asarray(3.0, jnp.bfloat16), np.array([3.0]), 2**70):
        glue("n", value)
    assert capsys.readouterr().out == "n = 3.0\n" * 5 + f"n = {float(2**70)}\n"


def test_markdown_table_round_trips_its_cells_and_names_a_bad_row():
    header, rows = ["map", "mass (%)"], [["softmax", "67.0"], ["1.5-entmax (α = 1.5)", "71.2"]]
    lines = markdown_table(header, rows).splitlines()
    assert len(lines) == 2 + len(rows) and set(lines[1]) == {"|", "-"}
    parsed = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    assert parsed[0] == header and parsed[2:] == rows
    with pytest.raises(ValueError, match=r"rows\[1\] has 1 cells, the header 2"):
        markdown_table(header, [["softmax", "67.0"], ["sparsemax"]])
    with pytest.raises(ValueError, match="may not contain"):
        markdown_table(header, [["a | b", "1"]])
