#!/usr/bin/env bash
# The whole book as a PDF (make pdf), A4 and letter: Jupyter Book's single-page HTML build, every
# notebook executed (through the same execution cache as `make book`, so after a book build it
# executes nothing), printed by headless Chromium (tools/pdf.py) into _build/pdf/entmax-book.pdf
# (A4) and _build/pdf/entmax-book-letter.pdf, with a contents page that gives page numbers.
#
# System packages (Debian/Ubuntu): chromium (or Google Chrome, as on GitHub's runners),
# libjs-mathjax (MathJax, to typeset the formulas offline) and poppler-utils (pdfinfo: the pages
# of the sections, for the contents):
#   sudo apt-get install chromium libjs-mathjax poppler-utils
# CHROMIUM=/path/to/chrome and MATHJAX=/path/to/MathJax.js override where they are looked for.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
jupyter-book build -W -n --keep-going --builder singlehtml .
# the root page of _toc.yml holds the whole book
python -m tools.pdf _build/singlehtml/intro.html _build/pdf
echo "make pdf: $(($(date +%s) - start)) s"
