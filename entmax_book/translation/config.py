"""Every setting of the translation experiment in one frozen dataclass, checked when it is made.

:class:`TranslationConfig` is read directly by data preparation
(:func:`~entmax_book.translation.experiment.prepare_data`), the model
(:class:`~entmax_book.translation.model.Transformer`), the training loop
(:func:`~entmax_book.translation.train.train`) and the analyses. Its defaults are a quick run
of a few minutes on a CPU; Chapter 5's recorded runs use
:data:`entmax_book.translation_record.RECIPE` (the paper's recipe, small), and
:data:`PAPER_SCALE` is the paper's scale. Change settings with
``dataclasses.replace(config, steps=4000)``: every value is checked again, before any data are
prepared or any model is trained.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

from entmax_book.translation.tokenizer import DEFAULT_VOCAB_SIZE
from entmax_lib.attention import NORMALISERS

__all__ = ["COMPUTE_DTYPES", "PAPER_SCALE", "SCHEDULES", "TranslationConfig"]

SCHEDULES = ("cosine", "inverse_sqrt")
COMPUTE_DTYPES = ("float32", "bfloat16")


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class TranslationConfig:
    """The settings of a translation experiment: data, model, training and analysis.

    Data (generated English→German pairs; pairs longer than the caps, in pieces, are skipped):
      n_train, n_valid, n_test: pairs per split. corpus_seed: seed of the generated corpus and
      of the tokenizer. vocab_size: joint BPE vocabulary size. max_src_len, max_tgt_len: the
      most source / target positions (pieces + EOS / BOS).

    Model (a pre-LN encoder–decoder Transformer, see :mod:`~entmax_book.translation.model`):
      normalisers: the models trained side by side, names from
      :data:`entmax_lib.attention.NORMALISERS` (the paper's Table 1: softmax, 1.5-entmax and
      learned α-entmax). d_model, num_heads, num_layers (encoder = decoder layers), d_ff: sizes.
      n_iter: most threshold-search steps of learned-α entmax (None: the library's default).
      dropout (residual), attention_dropout (on the weights), ffn_dropout (hidden
      activations): rates in [0, 1), active only in training. seed: initial weights (the α
      logits come from a separate stream), batch order and dropout masks.

    Training (Adam, β₂ = 0.98, global-norm clipping, see :mod:`~entmax_book.translation.train`):
      steps; batch_size (pairs per step) or batch_tokens (about this many tokens per step,
      sentences grouped by length; batch_size then unused); learning_rate (the peak);
      warmup_steps (linear, at most half the run); clip_norm; label_smoothing (ε in [0, 1));
      schedule: "cosine" (to 10 % of the peak at the last step) or "inverse_sqrt";
      alpha_learning_rate: peak learning rate of the α logits (None: ``learning_rate``; 0
      freezes α at its initial draw); compute_dtype: "float32" or "bfloat16" passes;
      record_every: loss and α are recorded every this many steps; eval_every: the test loss
      and BLEU every this many steps (None: only at the end).

    Analysis: density_bins: bins of the attention-density histogram.

    >>> TranslationConfig().max_len
    20
    >>> TranslationConfig(seed=-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer >= 0, got -1.
    """

    n_train: int = 6000
    n_valid: int = 200
    n_test: int = 300
    corpus_seed: int = 0
    vocab_size: int = DEFAULT_VOCAB_SIZE
    max_src_len: int = 16
    max_tgt_len: int = 20
    normalisers: tuple = ("softmax", "entmax15", "alpha_entmax")
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 3
    d_ff: int = 128
    n_iter: int | None = None
    dropout: float = 0.0
    attention_dropout: float = 0.0
    ffn_dropout: float = 0.0
    seed: int = 0
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
    density_bins: int = 20

    def __post_init__(self):
        self._check_counts()
        self._check_normalisers()
        self._check_rates()
        self._check_choices()

    @property
    def max_len(self):
        """The longest sequence the model's position table covers."""
        return max(self.max_src_len, self.max_tgt_len)

    def _count(self, name, minimum=1, allow_none=False):
        value = getattr(self, name)
        if allow_none and value is None:
            return
        if not _is_int(value) or value < minimum:
            extra = " or None" if allow_none else ""
            raise ValueError(f"{name} must be an integer >= {minimum}{extra}, got {value!r}.")

    def _check_counts(self):
        for name in ("n_train", "n_valid", "n_test", "vocab_size", "max_src_len", "max_tgt_len"):
            self._count(name)
        for name in ("d_model", "num_heads", "num_layers", "d_ff", "steps", "batch_size"):
            self._count(name)
        for name in ("record_every", "density_bins"):
            self._count(name)
        for name in ("seed", "corpus_seed", "warmup_steps"):
            self._count(name, minimum=0)
        for name in ("n_iter", "batch_tokens", "eval_every"):
            self._count(name, allow_none=True)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}.")
        if self.batch_tokens is None and self.batch_size > self.n_train:
            raise ValueError(f"batch_size={self.batch_size} exceeds n_train={self.n_train}.")

    def _check_normalisers(self):
        names = self.normalisers
        if isinstance(names, str):
            raise ValueError(
                f"normalisers must be a list of normaliser names such as [{names!r}], "
                f"got the string {names!r}."
            )
        if not isinstance(names, list | tuple) or not names:
            raise ValueError(f"normalisers must be a non-empty list of normaliser names, got {names!r}.")
        unknown = [n for n in names if n not in NORMALISERS]
        if unknown:
            raise ValueError(f"normalisers: unknown {unknown}; choose from {list(NORMALISERS)}.")
        if len(set(names)) != len(names):
            raise ValueError(f"normalisers must be distinct, got {list(names)}.")
        object.__setattr__(self, "normalisers", tuple(names))  # a list is kept as a tuple

    def _check_rates(self):
        for name in ("dropout", "attention_dropout", "ffn_dropout", "label_smoothing"):
            value = getattr(self, name)
            if not _is_real(value) or not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be a number in [0, 1), got {value!r}.")
        for name in ("learning_rate", "clip_norm"):
            value = getattr(self, name)
            if not _is_real(value) or not 0 < value < math.inf:
                raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
        lr = self.alpha_learning_rate
        if lr is not None and (not _is_real(lr) or not 0 <= lr < math.inf):
            raise ValueError(f"alpha_learning_rate must be None or a finite number >= 0, got {lr!r}.")

    def _check_choices(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}.")
        if self.schedule == "inverse_sqrt" and self.warmup_steps < 1:
            raise ValueError("the inverse_sqrt schedule needs warmup_steps >= 1.")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"compute_dtype must be one of {COMPUTE_DTYPES}, got {self.compute_dtype!r}.")


#: The paper's scale on a GPU (Correia, Niculae & Martins, 2019, §4): Transformer-base (6 + 6
#: layers, 8 heads, d = 512, feed-forward 2048; Vaswani et al., 2017), dropout 0.1, label
#: smoothing 0.1, linear warm-up over 20,000 steps then inverse-square-root decay to a peak of
#: 2·512^(−1/2)·20000^(−1/2), batches of about 8,192 tokens, bfloat16 passes, a 32,000-piece
#: joint subword vocabulary. Pass the splits of a real corpus with ``splits=`` and replace
#: n_train, n_valid and n_test by its sizes; training runs data-parallel over every local GPU.
#: The learning curve (greedy decoding of the whole test split) is drawn every 5,000 steps, so
#: that evaluation stays a small share of the run.
PAPER_SCALE = TranslationConfig(
    n_train=200_000,
    n_valid=1_000,
    n_test=1_000,
    vocab_size=32_000,
    max_src_len=128,
    max_tgt_len=128,
    d_model=512,
    num_heads=8,
    num_layers=6,
    d_ff=2048,
    dropout=0.1,
    attention_dropout=0.1,
    ffn_dropout=0.1,
    steps=50_000,
    batch_tokens=8192,
    learning_rate=2 * 512**-0.5 * 20_000**-0.5,
    warmup_steps=20_000,
    schedule="inverse_sqrt",
    label_smoothing=0.1,
    compute_dtype="bfloat16",
    record_every=100,
    eval_every=5_000,
)
