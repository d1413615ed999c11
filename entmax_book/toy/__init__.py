"""The "sparse self-attention" toy: attention pooling over informative tokens hidden among noise.

This is the experiment of the book's Chapter 4, after the ``examples/attention_mlp.py`` demo of
the qjax library (https://github.com/kleyt0n/qjax). One module per concern:

- :mod:`~entmax_book.toy.config`: :class:`~entmax_book.toy.config.ToyConfig`, every setting,
  checked when it is made;
- :mod:`~entmax_book.toy.configs`: the named configurations (the demo ``ORIGINAL``, the stress
  setting ``STRESS``, the recorded runs' conditions ``RUNS``);
- :mod:`~entmax_book.toy.task`: the data (K informative tokens among L);
- :mod:`~entmax_book.toy.model`: the demo's attention-pooling classifier and its α;
- :mod:`~entmax_book.toy.experiment`: the pipeline,
  :func:`~entmax_book.toy.experiment.train_and_evaluate` (config → JSON-able result);
- :mod:`~entmax_book.toy.runs`: the recorded runs (``records/``) and the command that records
  them, ``python -m entmax_book.toy.runs`` (not imported here: it is run as a module).
"""

from entmax_book.toy import config, configs, experiment, model, task

__all__ = ["config", "configs", "experiment", "model", "task"]
