"""Sentence pairs as tab-separated text, one pair per line: ``source<TAB>target[<TAB>alignment]``.

The format:

* UTF-8; a byte-order mark at the start of the file is ignored;
* a line ends at ``\\n`` or ``\\r\\n`` only: a lone ``\\r``, form feed, NEL or U+2028 inside a
  field is whitespace between words, not a line break;
* words are separated by whitespace and re-joined with single spaces; blank lines are skipped;
* the optional third column holds alignment links ``i-j`` separated by spaces (source word i,
  target word j, 0-based, ASCII digits): the Pharaoh format of fast_align and GIZA++.

:func:`load_tsv` and :func:`write_tsv` read and write
:class:`~entmax_book.translation.data.Example` pairs (a real corpus, or the generated one) through
:func:`read_rows` and :func:`write_rows`.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from entmax_book.translation.data import Example

__all__ = ["Row", "load_tsv", "parse_line", "read_rows", "write_rows", "write_tsv"]

#: One pair: source sentence, target sentence, sorted alignment links (i, j).
Row = tuple[str, str, tuple[tuple[int, int], ...]]

_LINK = re.compile(r"([0-9]+)-([0-9]+)")


def _parse_alignment(field: str, n_src: int, n_tgt: int, where: str) -> tuple[tuple[int, int], ...]:
    links = set()
    for link in field.split():
        match = _LINK.fullmatch(link)
        if match is None:
            raise ValueError(f"{where}: bad alignment link {link!r}, expected 'i-j' with ASCII digits i, j")
        i, j = int(match[1]), int(match[2])
        if i >= n_src or j >= n_tgt:
            raise ValueError(
                f"{where}: alignment link {link!r} out of range ({n_src} source, {n_tgt} target words)"
            )
        links.add((i, j))
    return tuple(sorted(links))


def parse_line(line: str, where: str) -> Row | None:
    """Parse one line (without its line ending); None for a blank line.

    Args:
      line: the text of the line.
      where: the place to name in error messages, e.g. ``"pairs.tsv:3"``.

    Returns:
      ``(source, target, alignment)`` with words re-joined by single spaces and the alignment
      links sorted, or None if the line is blank.

    Raises:
      ValueError naming ``where``: not 2 or 3 fields, an empty sentence, a malformed link or a
      link outside the sentences.

    >>> parse_line("the  dog sleeps .\\tder Hund schläft .\\t0-0 1-1 2-2 3-3", "x:1")
    ('the dog sleeps .', 'der Hund schläft .', ((0, 0), (1, 1), (2, 2), (3, 3)))
    """
    if not line.strip():
        return None
    fields = line.split("\t")
    if len(fields) not in (2, 3):
        raise ValueError(f"{where}: expected 2 or 3 tab-separated fields, found {len(fields)}")
    src, tgt = fields[0].split(), fields[1].split()
    if not src or not tgt:
        raise ValueError(f"{where}: empty source or target sentence")
    alignment = _parse_alignment(fields[2], len(src), len(tgt), where) if len(fields) == 3 else ()
    return " ".join(src), " ".join(tgt), alignment


def read_rows(path) -> list[Row]:
    """Read every pair of a TSV file.

    Args:
      path: the file.

    Returns:
      list of ``(source, target, alignment)``; the alignment is ``()`` where the column is
      absent or empty.

    Raises:
      ValueError naming the file and line for bytes that are not UTF-8 and for any malformed line.
    """
    path = Path(path)
    data = path.read_bytes()
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    rows = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        where = f"{path}:{number}"
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{where}: not UTF-8 (byte {error.start + 1} of the line)") from None
        row = parse_line(line, where)
        if row is not None:
            rows.append(row)
    return rows


def write_rows(rows, path) -> None:
    """Write pairs so that :func:`read_rows` gives them back unchanged.

    The alignment column is written only if some row has an alignment.

    Args:
      rows: ``(source, target, alignment)`` triples.
      path: the file to (over)write.

    Raises:
      ValueError naming the row if it would not read back as written: a sentence that is empty,
      holds a tab or line break or is not single-space separated, a byte-order mark at the start
      of the file, or an alignment link that is negative or outside the sentences. Nothing is
      written then.
    """
    rows = [(src, tgt, tuple(alignment)) for src, tgt, alignment in rows]
    with_alignment = any(alignment for _, _, alignment in rows)
    lines = []
    for index, (src, tgt, alignment) in enumerate(rows):
        fields = [src, tgt]
        if with_alignment:
            fields.append(" ".join(f"{i}-{j}" for i, j in alignment))
        line = "\t".join(fields)
        where = f"row {index}"
        try:
            back = parse_line(line, where)
        except ValueError as error:
            raise ValueError(f"cannot write {where}: {error}") from None
        if back is None or back[:2] != (src, tgt) or set(back[2]) != set(alignment):
            raise ValueError(
                f"cannot write {where}: it would read back differently (sentences must be non-empty, "
                f"single-space separated, without tabs or line breaks): {src!r} / {tgt!r}"
            )
        if index == 0 and line.startswith("\ufeff"):
            raise ValueError(f"cannot write {where}: a leading byte-order mark is dropped on reading")
        lines.append(line + "\n")
    Path(path).write_text("".join(lines), encoding="utf-8")


def load_tsv(path) -> list[Example]:
    """Read sentence pairs from a file of lines ``src<TAB>tgt[<TAB>alignment]``.

    The format is that of this module (UTF-8, alignment links "i-j").

    Args:
      path: the file.

    Returns:
      list of :class:`Example`.

    Raises:
      ValueError naming the file and line for bytes that are not UTF-8 or a malformed line.
    """
    return [Example(src, tgt, alignment) for src, tgt, alignment in read_rows(path)]


def write_tsv(examples, path) -> None:
    """Write ``examples`` so that :func:`load_tsv` reads them back unchanged.

    Args:
      examples: :class:`Example` pairs; the alignment column is written if any has an alignment.
      path: the file to (over)write.

    Raises:
      ValueError naming the example if it could not be read back as written (see
      :func:`write_rows`).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv"
    >>> from entmax_book.translation.corpus import generate_corpus
    >>> pairs = generate_corpus(3)
    >>> write_tsv(pairs, path)
    >>> load_tsv(path) == pairs
    True
    """
    write_rows([(e.src, e.tgt, e.alignment) for e in examples], path)
