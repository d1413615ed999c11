"""entmax_book: the entmax book's experiments and chapter helpers, built on ``entmax_lib``.

``entmax_lib`` is the small library (the maps, the threshold search, attention layers, attention
metrics, the opt-in GPU kernel); this package holds what the book does *with* it, through the
library's public API only: one folder per experiment, which imports the library and the shared
modules below but never another experiment, and the shared modules:

- :mod:`entmax_book.toy`: Chapter 4's "sparse self-attention" toy (the qjax demo and its
  stress setting), one folder: one :class:`~entmax_book.toy.config.ToyConfig`, its named
  configurations (:mod:`~entmax_book.toy.configs`), task, model, the pipeline
  :func:`~entmax_book.toy.experiment.train_and_evaluate`, and :mod:`~entmax_book.toy.runs`,
  its recorded runs (in ``toy/records/``) and the command that records them;
- :mod:`entmax_book.record`: recorded runs (result, provenance, optional weights), saved once
  in the experiment's ``records/`` folder and loaded by the chapters;
- :mod:`entmax_book.checks`: the argument checks both experiments share;
- :mod:`entmax_book.stats`: paired differences over seeds, Holm's correction, verdict words,
  and the plateau criterion;
- :mod:`entmax_book.translation`: Chapter 5's Adaptively Sparse Transformer in miniature, one
  folder: its settings, one config per consumer composed in one
  :class:`~entmax_book.translation.config.TranslationConfig`, and its named configurations
  (:mod:`~entmax_book.translation.configs`); the generic data path
  (:mod:`~entmax_book.translation.data`) and the generated corpus
  (:mod:`~entmax_book.translation.corpus`); model, training, the paper's head analyses; the
  pipeline :func:`~entmax_book.translation.experiment.train_and_evaluate`; and
  :mod:`~entmax_book.translation.runs`, its recorded runs (in ``translation/records/``) and the
  command that records them;
- :mod:`entmax_book.display`: one colour and marker per map, and library source on the page;
- :mod:`entmax_book.progress`: progress bars where someone watches.

:data:`LIBRARY_INTERNALS_SHOWN` lists the few private names of ``entmax_lib`` that the chapters
open up on purpose, to teach how the library works inside (the custom derivative rules of
Chapters 2 and 3). They are not API: they may change with the library, and a fast test checks
that each still exists and that the chapters use no other private name.
"""

#: Private names of ``entmax_lib`` that chapters show or call to teach them, by module.
LIBRARY_INTERNALS_SHOWN = {
    "entmax_lib.entmax": ("_alpha_tangent", "_z_tangent", "_entmax_learned_jvp"),
}

__all__ = ["LIBRARY_INTERNALS_SHOWN"]
