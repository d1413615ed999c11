"""Sentence pairs in TSV files: corpus.load_tsv / write_tsv and entmax_book.translation.tsv."""

import pytest

from entmax_book.translation.corpus import generate_corpus, load_tsv, write_tsv
from entmax_book.translation.data import Example


@pytest.fixture(scope="module")
def examples():
    return generate_corpus(60, seed=0)


def test_tsv_round_trip(tmp_path, examples):
    path = tmp_path / "pairs.tsv"
    write_tsv(examples[:50], path)
    assert load_tsv(path) == examples[:50]
    no_alignment = [Example(e.src, e.tgt) for e in examples[:20]]
    write_tsv(no_alignment, path)
    assert all(line.count("\t") == 1 for line in path.read_text(encoding="utf-8").splitlines())
    assert load_tsv(path) == no_alignment


def test_load_tsv_normalises_and_rejects_bad_lines(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("the  dog sleeps .\tder Hund schläft .\t0-0 1-1 3-3 2-2\n\nhi .\thallo .\n", "utf-8")
    assert load_tsv(path) == [
        Example("the dog sleeps .", "der Hund schläft .", ((0, 0), (1, 1), (2, 2), (3, 3))),
        Example("hi .", "hallo .", ()),
    ]
    for line, message in [
        ("only one field", "expected 2 or 3"),
        ("a\tb\t0-0\textra", "expected 2 or 3"),
        ("a b\tc\t0-x", "bad alignment link"),
        ("a b\tc\t2-0", "out of range"),
        (" \tc", "empty source"),
    ]:
        path.write_text("ok .\tgut .\n" + line + "\n", "utf-8")
        with pytest.raises(ValueError, match=message) as error:
            load_tsv(path)
        assert ":2:" in str(error.value)


def test_load_tsv_names_file_and_line_of_bad_bytes_and_links(tmp_path):
    path = tmp_path / "pairs.tsv"
    bad_lines = [
        (b"caf\xe9 .\tCaf\xe9 .", "not UTF-8"),  # Latin-1, not UTF-8
        (b"a b\tc\t-1-0", "bad alignment link"),
        ("a b\tc\t\u0661-\u0660".encode(), "bad alignment link"),  # Arabic-Indic digits
        ("a b\tc\t\u00b2-0".encode(), "bad alignment link"),  # superscript two
        (b"a b\tc\t0-0-0", "bad alignment link"),
    ]
    for line, message in bad_lines:
        path.write_bytes(b"ok .\tgut .\n" + line + b"\n")
        with pytest.raises(ValueError, match=message) as error:
            load_tsv(path)
        assert f"{path}:2:" in str(error.value)


def test_load_tsv_line_endings_and_byte_order_mark(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_bytes("\ufeffhi .\thallo .\t0-0 1-1\r\nthe dog .\tder Hund .\r\n".encode())
    assert load_tsv(path) == [
        Example("hi .", "hallo .", ((0, 0), (1, 1))),
        Example("the dog .", "der Hund .", ()),
    ]
    # Only "\n" and "\r\n" end a line: the separators below are whitespace inside a field.
    inside = "a\u2028b .\tc\x0cd .\ne\rf .\tg\x85h .\nlast\n"
    path.write_bytes(inside.encode())
    with pytest.raises(ValueError, match="expected 2 or 3") as error:
        load_tsv(path)
    assert f"{path}:3:" in str(error.value)
    path.write_bytes(inside.rsplit("last", 1)[0].encode())
    assert load_tsv(path) == [Example("a b .", "c d ."), Example("e f .", "g h .")]


@pytest.mark.parametrize(
    "example",
    [
        Example("a\tb .", "c ."),
        Example("a  b .", "c ."),
        Example("a\nb .", "c ."),
        Example("a\u2028b .", "c ."),
        Example(" a .", "c ."),
        Example("", "c ."),
        Example("\ufeffa .", "c ."),
        Example("a .", "c .", ((0, 2),)),
        Example("a .", "c .", ((-1, 0),)),
    ],
)
def test_write_tsv_refuses_what_cannot_be_read_back(tmp_path, example):
    path = tmp_path / "pairs.tsv"
    with pytest.raises(ValueError, match="cannot write row 0"):
        write_tsv([example, Example("ok .", "gut .")], path)
    assert not path.exists()


def test_write_tsv_accepts_unsorted_links(tmp_path):
    path = tmp_path / "pairs.tsv"
    write_tsv([Example("a b", "c d", ((1, 1), (0, 0)))], path)
    assert load_tsv(path) == [Example("a b", "c d", ((0, 0), (1, 1)))]
