"""Scripts that build the course kit from the book's chapters: the student edition
(`python -m tools.student`), the slide decks (`python -m tools.slides`) and the PDF (`tools/pdf.sh`)."""
