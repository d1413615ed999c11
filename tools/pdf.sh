#!/usr/bin/env bash
# The whole book as one PDF (make pdf): Jupyter Book's single-page HTML build, every notebook
# executed (through the same execution cache as `make book`, so after a book build it executes
# nothing), printed by headless Chromium into _build/pdf/entmax-book.pdf.
#
# System packages (Debian/Ubuntu): chromium (or Google Chrome, as on GitHub's runners) and
# libjs-mathjax, the MathJax that typesets the formulas offline:
#   sudo apt-get install chromium libjs-mathjax
# CHROMIUM=/path/to/chrome and MATHJAX=/path/to/MathJax.js override where they are looked for.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || command -v google-chrome-stable || true)}
MATHJAX=${MATHJAX:-/usr/share/javascript/mathjax/MathJax.js}
if [ -z "$CHROMIUM" ]; then
  echo "make pdf needs Chromium or Chrome: sudo apt-get install chromium (or set CHROMIUM=...)" >&2
  exit 1
fi
if [ ! -f "$MATHJAX" ]; then
  echo "make pdf needs a local MathJax: sudo apt-get install libjs-mathjax (or set MATHJAX=...)" >&2
  exit 1
fi

start=$(date +%s)
jupyter-book build -W -n --keep-going --builder singlehtml .

# The page loads MathJax from a CDN; the print uses the local copy, so the build runs offline.
page=_build/singlehtml/intro.html  # the root page of _toc.yml: the whole book
print=_build/singlehtml/print.html
python - "$page" "$print" "$MATHJAX" <<'EOF'
import re
import sys
from pathlib import Path

page, out, mathjax = sys.argv[1:]
html = Path(page).read_text(encoding="utf-8")
local = f'<script async src="file://{mathjax}?config=TeX-AMS-MML_HTMLorMML"></script>'
html, n = re.subn(r'<script[^>]*src="https://[^"]*mathjax[^"]*"[^>]*></script>', local, html, flags=re.I)
if n != 1:
    sys.exit(f"expected one MathJax script in {page}, found {n}")
# Sphinx's MathJax 3 settings, for MathJax 2: typeset only the math (MyST-NB marks the pages
# tex2jax_ignore and the formulas "math"), quietly; and wrap long code lines on paper.
settings = (
    '<script type="text/x-mathjax-config">MathJax.Hub.Config({tex2jax: {inlineMath: [["\\\\(", "\\\\)"]], '
    'displayMath: [["\\\\[", "\\\\]"]], processClass: "math|output_area|tex2jax_process", '
    'ignoreClass: "tex2jax_ignore|mathjax_ignore"}, messageStyle: "none"});</script>'
    "<style>pre { white-space: pre-wrap; word-break: break-word; }</style>"
)
html, n = re.subn(r"<script>window\.MathJax = .*?</script>", lambda m: settings, html, flags=re.S)
if n != 1:
    sys.exit(f"expected Sphinx's MathJax settings in {page}, found {n}")
Path(out).write_text(html, encoding="utf-8")
EOF

mkdir -p _build/pdf
"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --allow-file-access-from-files --no-pdf-header-footer --virtual-time-budget=60000 \
  --run-all-compositor-stages-before-draw \
  --print-to-pdf=_build/pdf/entmax-book.pdf "file://$PWD/$print" 2>/dev/null
python - <<'EOF'
from pathlib import Path

pdf = Path("_build/pdf/entmax-book.pdf")
data = pdf.read_bytes()
pages = data.count(b"/Type /Page") - data.count(b"/Type /Pages")
if not data.startswith(b"%PDF") or pages < 20:
    raise SystemExit(f"{pdf}: not the book ({pages} pages)")
print(f"{pdf}: {pages} pages, {len(data) / 1e6:.1f} MB")
EOF
echo "make pdf: $(($(date +%s) - start)) s"
