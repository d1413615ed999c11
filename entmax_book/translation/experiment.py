"""The translation experiment's pipeline: prepare the data, train one Transformer, evaluate it.

:func:`train_and_evaluate` is the one way a run is made — by the recorder
(:mod:`~entmax_book.translation.runs`), the tests and Chapter 5 alike: it prepares the corpus
(:func:`prepare_data`), builds the :class:`~entmax_book.translation.model.Transformer` of the
config's normaliser, trains it with the paper's recipe (measuring the validation loss and token
accuracy along the way, :func:`split_scores`) and scores it on the test split (:func:`evaluate`:
teacher-forced loss and accuracy on each planted construction, greedy BLEU, chrF and exact
match). The head analyses of the paper's §5 run on the trained model
(:func:`entmax_book.translation.analysis.analyse`).

Reference: Correia, Niculae & Martins (2019), Adaptively Sparse Transformers,
https://aclanthology.org/D19-1223/
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from entmax_book import checks
from entmax_book import progress as progress_bars
from entmax_book.translation import corpus
from entmax_book.translation.analysis import analyse
from entmax_book.translation.config import AnalysisConfig, DataConfig, TranslationConfig
from entmax_book.translation.data import Example, Split, encode
from entmax_book.translation.model import Transformer, greedy_decode
from entmax_book.translation.scoring import corpus_bleu, corpus_chrf
from entmax_book.translation.tokenizer import SubwordTokenizer, train_tokenizer
from entmax_book.translation.train import cross_entropy, train

__all__ = [
    "PreparedData",
    "Run",
    "evaluate",
    "prepare_data",
    "split_scores",
    "train_and_evaluate",
    "translate",
]

_SPLITS = ("train", "valid", "test")


@dataclasses.dataclass(frozen=True)
class PreparedData:
    """A corpus ready for training: its tokenizer and three encoded splits.

    Attributes:
      config: the :class:`~entmax_book.translation.config.DataConfig` it was prepared with.
      tokenizer: the joint BPE :class:`~entmax_book.translation.tokenizer.SubwordTokenizer`,
        trained on the training split.
      train, valid, test: the :class:`~entmax_book.translation.data.Split` of each.
      kept: split name → [pairs kept, pairs available] (pairs longer than the caps are skipped).
    """

    config: DataConfig
    tokenizer: SubwordTokenizer
    train: Split
    valid: Split
    test: Split
    kept: dict


class Run(NamedTuple):
    """One trained run: its config, its JSON-able result, and the trained model."""

    config: TranslationConfig
    result: dict
    model: Transformer


#: Oversampling of generated pairs so that enough of them fit the length caps; tried in turn
#: until every split is filled.
_OVERSAMPLING = (1.35, 2.0, 4.0, 8.0, 16.0)


def _fits(example, tokenizer, max_src_len, max_tgt_len):
    return (
        len(tokenizer.encode(example.src)) + 1 <= max_src_len
        and len(tokenizer.encode(example.tgt)) + 1 <= max_tgt_len
    )


def _check_examples(splits, sizes):
    """Splits of :class:`Example` whose alignment links index real words, checked by name."""
    if not isinstance(splits, dict) or set(splits) != set(sizes):
        keys = sorted(splits) if isinstance(splits, dict) else type(splits).__name__
        raise ValueError(f"splits must be a dict with the keys {sorted(sizes)}, got {keys}.")
    for name, examples in splits.items():
        for n, example in enumerate(examples):
            _check_example(example, f"splits[{name!r}][{n}]")


def _check_example(example, where):
    """One pair: two strings and alignment links (i, j) of integers inside the sentences."""
    if not isinstance(example, Example):
        raise TypeError(f"{where} must be an Example(src, tgt, alignment), got {example!r}.")
    for side in ("src", "tgt"):
        if not isinstance(getattr(example, side), str):
            raise TypeError(f"{where}.{side} must be a string, got {getattr(example, side)!r}.")
    n_src, n_tgt = len(example.src.split()), len(example.tgt.split())
    for link in example.alignment:
        if not (isinstance(link, tuple | list) and len(link) == 2 and all(checks.is_int(k) for k in link)):
            raise TypeError(
                f"{where}: alignment link {link!r} must be a pair of integers (source word, target word)."
            )
        i, j = link
        if not (0 <= i < n_src and 0 <= j < n_tgt):
            raise ValueError(
                f"{where}: alignment link {tuple(link)} is outside the sentences "
                f"({n_src} source and {n_tgt} target words; links are 0-based (source, target))."
            )


def _fit_splits(config, splits, sizes):
    """Tokenizer and the pairs that fit the length caps, per split (at most the size asked)."""
    texts = [text for e in splits["train"] for text in (e.src, e.tgt)]
    tokenizer = train_tokenizer(texts, config.vocab_size, seed=config.corpus_seed)
    caps = (config.max_src_len, config.max_tgt_len)
    fitting = {
        name: [e for e in splits[name] if _fits(e, tokenizer, *caps)][:size] for name, size in sizes.items()
    }
    return tokenizer, fitting


def _generated_splits(config, sizes):
    """Generate and fit until every split has its size, oversampling more each time."""
    for factor in _OVERSAMPLING:
        counts = [math.ceil(factor * size) for size in sizes.values()]
        splits = corpus.make_splits(*counts, seed=config.corpus_seed, version=config.corpus_version)
        tokenizer, fitting = _fit_splits(config, splits, sizes)
        if all(len(fitting[name]) == size for name, size in sizes.items()):
            return splits, tokenizer, fitting
    short = {name: f"{len(fitting[name])} of {size}" for name, size in sizes.items()}
    raise ValueError(
        f"too few generated pairs fit max_src_len={config.max_src_len} and "
        f"max_tgt_len={config.max_tgt_len} (pairs kept per split: {short}); raise the caps."
    )


def prepare_data(config: DataConfig, splits=None, tagger=corpus.tag_pieces) -> PreparedData:
    """Corpus → tokenizer → encoded splits.

    The joint BPE tokenizer is trained on the training split only. Pairs that need more than
    ``max_src_len`` / ``max_tgt_len`` positions are skipped (fixed shapes keep one compiled
    program per model). Generated data fill every split to its size (more pairs are generated
    until they do, or a ``ValueError`` gives the numbers); given splits keep what fits.

    Args:
      config: a :class:`~entmax_book.translation.config.DataConfig`.
      splits: optional ``{"train", "valid", "test"}`` lists of
        :class:`~entmax_book.translation.data.Example` (e.g. from ``corpus.load_tsv``); default:
        generated with ``corpus.make_splits``.
      tagger: the word tags of the analyses (see ``data.encode``): the generated corpus's
        :func:`~entmax_book.translation.corpus.tag_pieces` by default; None for a corpus without.

    Returns:
      a :class:`PreparedData`.

    Raises:
      TypeError/ValueError naming the split and pair for items that are not ``Example``, or
      alignment links that are not pairs of integers inside the sentences; ValueError for an
      empty split or one of which no pair fits the length caps.

    >>> small = DataConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, max_src_len=32, max_tgt_len=40)
    >>> data = prepare_data(small)
    >>> data.test.src.shape, data.kept["test"]
    ((4, 32), [4, 8])
    """
    if not isinstance(config, DataConfig):
        raise TypeError(f"config must be a DataConfig, got {type(config).__name__}.")
    sizes = {"train": config.n_train, "valid": config.n_valid, "test": config.n_test}
    if splits is None:
        splits, tokenizer, examples = _generated_splits(config, sizes)
    else:
        _check_examples(splits, sizes)
        for name in sizes:
            if not splits[name]:
                raise ValueError(f"the {name} split is empty.")
        tokenizer, examples = _fit_splits(config, splits, sizes)
        for name in sizes:
            if not examples[name]:
                raise ValueError(
                    f"no {name} pair fits max_src_len={config.max_src_len}/max_tgt_len={config.max_tgt_len} "
                    f"(of {len(splits[name])}); raise them."
                )
    encoded = {
        name: encode(examples[name], tokenizer, config.max_src_len, config.max_tgt_len, tagger)
        for name in sizes
    }
    kept = {name: [len(examples[name]), len(splits[name])] for name in sizes}
    return PreparedData(config, tokenizer, **encoded, kept=kept)


def split_scores(model, split: Split) -> dict:
    """Teacher-forced cross-entropy and token accuracy of ``model`` on a split (no dropout, no
    label smoothing).

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      split: a :class:`~entmax_book.translation.data.Split`.

    Returns:
      {"loss": mean over the non-padding target pieces of − log p(reference piece),
      "accuracy": share of those pieces whose most probable piece is the reference}.
    """
    columns = [jnp.asarray(a) for a in split.columns().values()]
    loss, accuracy = _split_scores(*nnx.split(model), *columns, model.pad_id)
    return {"loss": float(loss), "accuracy": float(accuracy)}


@functools.partial(jax.jit, static_argnums=(0, 5))
def _split_scores(graphdef, state, src, tgt_in, tgt_out, pad_id):
    logits = nnx.merge(graphdef, state)(src, tgt_in)
    real = tgt_out != pad_id
    accuracy = jnp.sum((logits.argmax(-1) == tgt_out) & real) / jnp.maximum(jnp.sum(real), 1)
    return cross_entropy(logits, tgt_out, pad_id), accuracy


def translate(model, tokenizer, split: Split, max_len: int) -> list[str]:
    """Greedy translations (strings) of every source in ``split``.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      tokenizer: the :class:`~entmax_book.translation.tokenizer.SubwordTokenizer` of the data.
      split: a :class:`~entmax_book.translation.data.Split` (its sources are read).
      max_len: target tokens to generate (at most the model's ``max_len``).

    Returns:
      list of N strings.
    """
    ids = greedy_decode(model, split.src, max_len, tokenizer.bos_id, tokenizer.eos_id)
    return [tokenizer.decode(row) for row in ids]


def evaluate(model, data: PreparedData, config: AnalysisConfig) -> dict:
    """A trained model's test scores: teacher-forced loss and accuracies, greedy BLEU and chrF.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      data: its :class:`PreparedData`.
      config: the :class:`~entmax_book.translation.config.AnalysisConfig` of the run.

    Returns:
      {"loss", "accuracy" (overall and per planted construction, see
      ``analysis.construction_accuracy``), "bleu", "chrf", "exact_match"}.
    """
    hyps = translate(model, data.tokenizer, data.test, data.config.max_tgt_len)
    refs = [e.tgt for e in data.test.examples]
    analysis = analyse(model, data.test, config)[0]
    return {
        "loss": analysis["test_loss"],
        "accuracy": analysis["accuracy"],
        "bleu": round(corpus_bleu(hyps, refs), 2),
        "chrf": round(corpus_chrf(hyps, refs), 2),
        "exact_match": round(float(np.mean([h == r for h, r in zip(hyps, refs, strict=True)])), 4),
    }


def _check_prepared(data, config):
    """Prepared data must be those of the config: same settings, so same length caps."""
    if not isinstance(data, PreparedData):
        raise TypeError(f"data must be PreparedData (see prepare_data), got {type(data).__name__}.")
    if data.config != config.data:
        raise ValueError(
            f"the data were prepared with {data.config}, the config has {config.data}: "
            "prepare them with this config's data settings."
        )


def train_and_evaluate(
    config: TranslationConfig, data: PreparedData | None = None, *, desc=None, stop_after=None
) -> Run:
    """Train one Transformer with ``config`` and score it on the test split.

    Every setting is checked, and prepared data matched against the config, before any
    training. The validation loss and token accuracy are measured every ``train.eval_every``
    steps (the learning curve; their time is not counted as training time).

    Args:
      config: a :class:`~entmax_book.translation.config.TranslationConfig`.
      data: optional :class:`PreparedData` of ``config.data`` (saves preparing it again).
      desc: the progress bar's label (default: the normaliser).
      stop_after: train only the first this many steps of the schedule (e.g. to rerun the
        start of a recorded run).

    Returns:
      a :class:`Run`: the config, the result ``{"history": …, "test": …}`` (the history of
      ``train.train``, with the learning curve under "eval": "step", "valid_loss",
      "valid_accuracy"; the test scores of :func:`evaluate`), and the trained model.

    Raises:
      ``train.TrainingDiverged`` if a loss stops being finite (it carries the history so far).
    """
    if not isinstance(config, TranslationConfig):
        raise TypeError(f"config must be a TranslationConfig, got {type(config).__name__}.")
    progress_bars.interactive()  # a bad ENTMAX_PROGRESS fails now, not after the training
    data = prepare_data(config.data) if data is None else data
    _check_prepared(data, config)
    last = (
        config.train.steps
        if stop_after is None
        else checks.count("stop_after", stop_after, maximum=config.train.steps)
    )
    model = Transformer(config.model, data.tokenizer.vocab_size, seed=config.seed)
    every = config.train.eval_every
    curve = {}
    if every is not None:
        steps = sorted({*range(every, last + 1, every), last})
        curve = {"evaluate": lambda m: {f"valid_{k}": v for k, v in split_scores(m, data.valid).items()}}
        curve["eval_steps"] = steps
    history = train(
        model,
        data.train,
        config.train,
        seed=config.seed,
        desc=desc or config.model.normaliser,
        stop_after=stop_after,
        **curve,
    )
    result = {"history": history, "test": evaluate(model, data, config.analysis)}
    return Run(config, result, model)
