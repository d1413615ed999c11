"""The settings of the translation experiment: one small frozen config per consumer, composed in one.

Each part is read by one consumer and checked when it is made:

* :class:`DataConfig` by :func:`~entmax_book.translation.experiment.prepare_data` (corpus,
  tokenizer, padded splits);
* :class:`ModelConfig` by :class:`~entmax_book.translation.model.Transformer` (architecture,
  normaliser, dropout);
* :class:`TrainConfig` by :func:`~entmax_book.translation.train.train` (schedule, batching,
  optimiser, what is recorded);
* :class:`AnalysisConfig` by :func:`~entmax_book.translation.analysis.analyse`.

:class:`TranslationConfig` composes them with the run's ``seed`` and checks what they must agree
on (the model's position table covers the data's lengths; a batch fits the training split). It
is what :func:`~entmax_book.translation.experiment.train_and_evaluate` takes and what a record
stores. Its defaults are a quick run of a few minutes on a CPU; named configurations (the
paper's recipe at a small size, the paper's scale, the record's conditions) are in
:mod:`~entmax_book.translation.configs`. Change a setting with :meth:`TranslationConfig.replace`:
``config.replace(steps=4000, normaliser="softmax")`` (every field name is unique across the
parts), and every value is checked again before any data are prepared or any model is trained.
"""

from __future__ import annotations

import dataclasses

from entmax_book import checks
from entmax_book.translation.corpus.generator import version_of
from entmax_book.translation.tokenizer import DEFAULT_VOCAB_SIZE
from entmax_lib.attention import NORMALISERS

__all__ = [
    "COMPUTE_DTYPES",
    "LEGACY_CORPUS_VERSION",
    "SCHEDULES",
    "AnalysisConfig",
    "DataConfig",
    "ModelConfig",
    "TrainConfig",
    "TranslationConfig",
]

SCHEDULES = ("cosine", "inverse_sqrt")
COMPUTE_DTYPES = ("float32", "bfloat16")

#: The corpus version of a record made before ``DataConfig.corpus_version`` existed.
LEGACY_CORPUS_VERSION = 1

#: The threshold search's most steps: the library's limit (a 32-bit loop counter).
_MAX_N_ITER = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """The corpus and its encoding (pairs longer than the caps, in pieces, are skipped).

    Attributes:
      n_train, n_valid, n_test: pairs per split.
      corpus_seed: seed of the generated corpus and of the tokenizer.
      corpus_version: the generated corpus's version, a key of
        :data:`entmax_book.translation.corpus.CORPUS_VERSIONS` (1: the corpus of Chapter 5's
        first records; 2: a harder one, with a larger lexicon and longer sentences). A record
        made before this setting existed has no such field and used version 1
        (:data:`LEGACY_CORPUS_VERSION`).
      vocab_size: joint BPE vocabulary size.
      max_src_len, max_tgt_len: the most source / target positions (pieces + EOS / BOS).

    >>> DataConfig(n_test=0)
    Traceback (most recent call last):
    ...
    ValueError: n_test must be an integer >= 1, got 0.
    """

    n_train: int = 6000
    n_valid: int = 200
    n_test: int = 300
    corpus_seed: int = 0
    corpus_version: int = 1
    vocab_size: int = DEFAULT_VOCAB_SIZE
    max_src_len: int = 16
    max_tgt_len: int = 20

    def __post_init__(self):
        for name in ("n_train", "n_valid", "n_test", "vocab_size", "max_src_len", "max_tgt_len"):
            checks.count(name, getattr(self, name))
        checks.count("corpus_seed", self.corpus_seed, minimum=0)
        version_of(self.corpus_version)


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """A pre-LN encoder–decoder Transformer (see :mod:`~entmax_book.translation.model`).

    Attributes:
      normaliser: the attention normaliser of every head, a name of
        :data:`entmax_lib.attention.NORMALISERS` (the paper's Table 1: softmax, 1.5-entmax and
        learned α-entmax).
      d_model, num_heads, num_layers (encoder = decoder layers), d_ff: sizes.
      max_len: the positions the sinusoidal table covers (at least the data's longest side).
      n_iter: most threshold-search steps of learned-α entmax (None: the library's default).
      dropout (residual), attention_dropout (on the weights), ffn_dropout (hidden activations):
        rates in [0, 1), active only in a training pass.

    >>> ModelConfig(d_model=30, num_heads=4)
    Traceback (most recent call last):
    ...
    ValueError: d_model=30 is not divisible by num_heads=4.
    """

    normaliser: str = "alpha_entmax"
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 3
    d_ff: int = 128
    max_len: int = 20
    n_iter: int | None = None
    dropout: float = 0.0
    attention_dropout: float = 0.0
    ffn_dropout: float = 0.0

    def __post_init__(self):
        if not isinstance(self.normaliser, str):
            raise TypeError(f"normaliser must be a name such as 'softmax', got {self.normaliser!r}.")
        if self.normaliser not in NORMALISERS:
            raise ValueError(f"normaliser must be one of {list(NORMALISERS)}, got {self.normaliser!r}.")
        for name in ("d_model", "num_heads", "num_layers", "d_ff", "max_len"):
            checks.count(name, getattr(self, name))
        checks.optional_count("n_iter", self.n_iter, maximum=_MAX_N_ITER)
        for name in ("dropout", "attention_dropout", "ffn_dropout"):
            checks.rate(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}.")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Adam (β₂ = 0.98) with global-norm clipping and a warm-up schedule (see
    :mod:`~entmax_book.translation.train`).

    Attributes:
      steps: optimiser steps.
      batch_size: pairs per step; or batch_tokens: about this many tokens per step, sentences
        grouped by length (batch_size then unused).
      learning_rate: the peak; warmup_steps: linear warm-up (at most half the run).
      clip_norm: the global gradient norm is clipped to this.
      label_smoothing: ε in [0, 1).
      schedule: "cosine" (to 10 % of the peak at the last step) or "inverse_sqrt".
      alpha_learning_rate: peak learning rate of the α logits (None: ``learning_rate``; 0
        freezes α at its initial draw).
      compute_dtype: "float32" or "bfloat16" passes.
      record_every: the training loss and α are recorded every this many steps.
      eval_every: the validation loss and token accuracy every this many steps (None: never).

    >>> TrainConfig(batch_tokens=1)
    Traceback (most recent call last):
    ...
    ValueError: batch_tokens=1 cannot hold one pair (at least 2 tokens: a piece and EOS).
    """

    steps: int = 1000
    batch_size: int = 32
    batch_tokens: int | None = None
    learning_rate: float = 6e-3
    warmup_steps: int = 50
    clip_norm: float = 1.0
    label_smoothing: float = 0.0
    schedule: str = "cosine"
    alpha_learning_rate: float | None = None
    compute_dtype: str = "float32"
    record_every: int = 10
    eval_every: int | None = 200

    def __post_init__(self):
        for name in ("steps", "batch_size", "record_every"):
            checks.count(name, getattr(self, name))
        checks.count("warmup_steps", self.warmup_steps, minimum=0)
        checks.optional_count("eval_every", self.eval_every)
        if checks.optional_count("batch_tokens", self.batch_tokens) == 1:
            raise ValueError("batch_tokens=1 cannot hold one pair (at least 2 tokens: a piece and EOS).")
        checks.positive("learning_rate", self.learning_rate)
        checks.positive("clip_norm", self.clip_norm)
        checks.rate("label_smoothing", self.label_smoothing)
        if self.alpha_learning_rate is not None:
            checks.positive("alpha_learning_rate", self.alpha_learning_rate, allow_zero=True)
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}.")
        if self.schedule == "inverse_sqrt" and self.warmup_steps < 1:
            raise ValueError("the inverse_sqrt schedule needs warmup_steps >= 1.")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"compute_dtype must be one of {COMPUTE_DTYPES}, got {self.compute_dtype!r}.")


@dataclasses.dataclass(frozen=True)
class AnalysisConfig:
    """The head analyses (see :mod:`~entmax_book.translation.analysis`).

    Attributes:
      density_bins: bins of the attention-density histogram.
    """

    density_bins: int = 20

    def __post_init__(self):
        checks.count("density_bins", self.density_bins)


_PARTS = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig, "analysis": AnalysisConfig}


@dataclasses.dataclass(frozen=True)
class TranslationConfig:
    """One run of the translation experiment: its seed and the four parts' settings.

    Attributes:
      seed: initial weights (the α logits come from a separate stream), batch order and
        dropout masks.
      data, model, train, analysis: a :class:`DataConfig`, :class:`ModelConfig`,
        :class:`TrainConfig` and :class:`AnalysisConfig`.

    >>> config = TranslationConfig().replace(steps=400, normaliser="softmax")
    >>> config.train.steps, config.model.normaliser
    (400, 'softmax')
    >>> TranslationConfig(seed=-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 4294957295], got -1.
    """

    seed: int = 0
    data: DataConfig = DataConfig()
    model: ModelConfig = ModelConfig()
    train: TrainConfig = TrainConfig()
    analysis: AnalysisConfig = AnalysisConfig()

    def __post_init__(self):
        # the α logits are drawn from the stream seed + 10_000 (see model.Transformer)
        checks.count("seed", self.seed, minimum=0, maximum=checks.SEED_MAX - 10_000)
        for name, kind in _PARTS.items():
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}, got {getattr(self, name)!r}.")
        longest = max(self.data.max_src_len, self.data.max_tgt_len)
        if self.model.max_len < longest:
            raise ValueError(
                f"max_len={self.model.max_len} is shorter than the data's longest side ({longest}: "
                f"max_src_len={self.data.max_src_len}, max_tgt_len={self.data.max_tgt_len})."
            )
        if self.train.batch_tokens is None and self.train.batch_size > self.data.n_train:
            raise ValueError(f"batch_size={self.train.batch_size} exceeds n_train={self.data.n_train}.")

    def replace(self, **changes) -> TranslationConfig:
        """A copy with some settings changed, each named by its field (``seed`` or a part's field).

        Raises:
          TypeError naming a field that no part has.
        """
        parts = {name: {} for name in _PARTS}
        seed = changes.pop("seed", self.seed)
        for field, value in changes.items():
            owner = [name for name, kind in _PARTS.items() if field in kind.__dataclass_fields__]
            if not owner:
                raise TypeError(f"{field!r} is not a setting of TranslationConfig or of any of its parts.")
            parts[owner[0]][field] = value
        replaced = {name: dataclasses.replace(getattr(self, name), **parts[name]) for name in _PARTS}
        return TranslationConfig(seed=seed, **replaced)

    @classmethod
    def from_dict(cls, fields: dict) -> TranslationConfig:
        """The config of ``dataclasses.asdict(config)`` (e.g. a record's), checked again.

        A record made before ``corpus_version`` existed has none: it used
        :data:`LEGACY_CORPUS_VERSION`, whatever the default is today.
        """
        data = {"corpus_version": LEGACY_CORPUS_VERSION, **fields["data"]}
        parts = {name: kind(**(data if name == "data" else fields[name])) for name, kind in _PARTS.items()}
        return cls(seed=fields["seed"], **parts)
