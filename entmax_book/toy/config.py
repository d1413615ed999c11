"""The toy's one config: :class:`ToyConfig`, every setting of task, model, training and sweep.

Every value is checked when a config is made, with :mod:`entmax_book.checks` (TypeError for a
wrong type, ValueError for a wrong value, the argument named), before any data are drawn or
any model is trained. The named configurations (the qjax demo, the stress setting, the
recorded runs' conditions) are in :mod:`entmax_book.toy.configs`.

The learned α is bounded as in the demo, α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8): above about
4, float32 entmax drops small support entries, so an unbounded α would be a hazard. Its
bounds and the logit of an initial α are here, with the setting ``alpha_init`` they check;
the map itself, :func:`entmax_book.toy.model.learned_alpha`, is the model's.
"""

from __future__ import annotations

import dataclasses
import math

from entmax_book import checks
from entmax_lib.attention import NORMALISERS

__all__ = [
    "DEMO_ALPHA_INIT",
    "GRADIENTS",
    "LEARNED_ALPHA_MIN",
    "LEARNED_ALPHA_SPAN",
    "ToyConfig",
    "logit_for_alpha",
]

#: Bounds of a learned α = LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN · sigmoid(a) ∈ (1.1, 2.8),
#: as in the qjax demo.
LEARNED_ALPHA_MIN, LEARNED_ALPHA_SPAN = 1.1, 1.7

#: The demo's initial learned α: a = −1, α = 1.1 + 1.7 · sigmoid(−1) ≈ 1.557.
DEMO_ALPHA_INIT = LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN / (1.0 + math.exp(1.0))

#: How the attention map is differentiated in training (see :func:`entmax_book.toy.model.forward`).
GRADIENTS = ("closed_form", "autodiff")


def logit_for_alpha(alpha: float) -> float:
    """The logit a with 1.1 + 1.7 · sigmoid(a) = α, for 1.1 < α < 2.8.

    Args:
      alpha: the initial α of the learned variant (the setting ``alpha_init``).

    Returns:
      a = log(t / (1 − t)), t = (α − 1.1) / 1.7.

    >>> round(logit_for_alpha(DEMO_ALPHA_INIT), 6)
    -1.0
    """
    alpha = checks.positive("alpha_init", alpha)
    high = LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN
    if not LEARNED_ALPHA_MIN < alpha < high:
        raise ValueError(
            f"alpha_init must lie in ({LEARNED_ALPHA_MIN}, {high}) for α = 1.1 + 1.7·sigmoid(a), got {alpha}."
        )
    t = (alpha - LEARNED_ALPHA_MIN) / LEARNED_ALPHA_SPAN
    return math.log(t / (1.0 - t))


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    """Every setting of the toy experiment (see :mod:`entmax_book.toy` for the formulas).

    The defaults are the chapter's long-sequence stress setting
    (:data:`entmax_book.toy.configs.STRESS`); :data:`entmax_book.toy.configs.ORIGINAL` is the
    qjax demo. Change one setting with ``dataclasses.replace(config, steps=500)``. Every value
    is checked when the config is made, before any data are drawn or any model is trained.

    Attributes (the task, read by :mod:`entmax_book.toy.task`):
      dim: token dimension d.
      n_classes: number of classes C (C + 1 ≤ d: prototypes and u are orthonormal).
      n_informative: K, informative tokens per sequence.
      signal_strength: γ, length of the shared marker direction added to informative tokens.
      class_strength: ρ, norm of each class prototype μ_y.
      noise_std: σ, standard deviation of the isotropic Gaussian noise on every token.
      task_seed: seed of random directions (unused with ``directions="basis"``).
      directions: ``"random"`` (orthonormal directions from ``task_seed``) or ``"basis"``
        (prototypes on axes 0 … C−1 and u on axis C, as in the demo).
      balanced_classes: True draws every class ⌊n/C⌋ or ⌈n/C⌉ times; False draws labels
        i.i.d. uniformly (as the demo does).

    Attributes (the sweep and the training, read by :mod:`entmax_book.toy.experiment`):
      lengths: the sequence lengths L (distinct integers > K; an int is one length).
      seeds: the seeds S (distinct integers in [0, :data:`entmax_book.checks.SEED_MAX`]): initial weights and
        minibatch order.
      variants: names from :data:`entmax_lib.attention.NORMALISERS`.
      steps: Adam steps.
      batch_size: minibatch size, or None for full-batch steps.
      learning_rate: Adam's learning rate (β = 0.9, 0.999, ε = 1e-8).
      alpha_init: initial α of the learned variant, in (1.1, 2.8).
      n_train, n_test: training and test sequences per length (and per seed).
      train_seed, test_seed: seeds of the data (integers ≥ 0).
      data_per_seed: fresh training and test data for every seed (as the demo draws them).
      query_scale: multiplies the initial query (the initial score scale).
      score_norm: if given, the effective query W_k w / √d has this fixed norm
        (see :func:`entmax_book.toy.model.scores`).
      gradient: ``"closed_form"`` (the library's derivative rules) or ``"autodiff"``
        (autodiff through :func:`entmax_book.toy.model.bisection_entmax`, the demo's numerics).
      n_attention_examples: attention rows kept at ``attention_length`` (at most ``n_test``).
      attention_length: where attention rows are kept (default: the largest L).
      history_every: keep the training loss and the learned α every this many steps.

    The defaults make the task easy once the informative tokens are found: their mean has
    noise σ/√K = 0.5 per direction while neighbouring prototypes are ρ√2 ≈ 2.8 apart
    (≈ 99 % accuracy); an informative token stands γ = 3σ above the noise along u, so among
    hundreds of distractors some look alike. d = 8 keeps long sequences cheap on a CPU.

    >>> ToyConfig(steps=10).lengths
    (8, 64, 512)
    >>> ToyConfig(lengths=(4,))
    Traceback (most recent call last):
    ...
    ValueError: each entry of lengths must be an integer >= 5, got 4.
    """

    dim: int = 8
    n_classes: int = 4
    n_informative: int = 4
    signal_strength: float = 3.0
    class_strength: float = 2.0
    noise_std: float = 1.0
    task_seed: int = 0
    directions: str = "random"
    balanced_classes: bool = True
    lengths: tuple = (8, 64, 512)
    seeds: tuple = tuple(range(10))
    variants: tuple = tuple(NORMALISERS)
    steps: int = 3000
    batch_size: int | None = 64
    learning_rate: float = 5e-3
    alpha_init: float = DEMO_ALPHA_INIT
    n_train: int = 2048
    n_test: int = 1024
    train_seed: int = 0
    test_seed: int = 1234
    data_per_seed: bool = True
    query_scale: float = 1.0
    score_norm: float | None = None
    gradient: str = "autodiff"
    n_attention_examples: int = 0
    attention_length: int | None = None
    history_every: int = 50

    def __post_init__(self):
        self._check_task()
        self._check_training()
        self._check_sweep()

    def _set(self, name, value):
        object.__setattr__(self, name, value)  # normalise a field of the frozen dataclass

    def _check_task(self):
        for name, minimum in (("dim", 1), ("n_classes", 2), ("n_informative", 1), ("task_seed", 0)):
            self._set(name, checks.count(name, getattr(self, name), minimum))
        if self.n_classes + 1 > self.dim:
            raise ValueError(
                f"dim={self.dim} is too small for {self.n_classes} orthonormal prototypes plus a marker "
                "direction; need dim >= n_classes + 1."
            )
        for name in ("noise_std", "signal_strength", "class_strength"):
            self._set(name, checks.positive(name, getattr(self, name), allow_zero=True))
        if self.directions not in ("random", "basis"):
            raise ValueError(f"directions must be 'random' or 'basis', got {self.directions!r}.")
        self._set("balanced_classes", checks.boolean("balanced_classes", self.balanced_classes))

    def _check_training(self):
        self._set("steps", checks.count("steps", self.steps))
        self._set("batch_size", checks.optional_count("batch_size", self.batch_size))
        self._set("learning_rate", checks.positive("learning_rate", self.learning_rate))
        self._set("query_scale", checks.positive("query_scale", self.query_scale))
        if self.score_norm is not None:
            self._set("score_norm", checks.positive("score_norm", self.score_norm))
        if self.gradient not in GRADIENTS:
            raise ValueError(f"gradient must be one of {GRADIENTS}, got {self.gradient!r}.")
        logit_for_alpha(self.alpha_init)
        self._set("variants", checks.normaliser_names("variants", self.variants))
        seeds = [self.seeds] if checks.is_int(self.seeds) else self.seeds
        if isinstance(seeds, list | tuple):  # checks.SEED_MAX first: counts() knows only int64's bound
            seeds = [checks.count("each entry of seeds", s, 0, checks.SEED_MAX) for s in seeds]
        self._set("seeds", checks.counts("seeds", seeds, 0))

    def _check_sweep(self):
        # L = K would leave no distractor: the score gap and its spread would be undefined.
        self._set("lengths", checks.counts("lengths", self.lengths, self.n_informative + 1))
        for name, minimum in (("n_train", 1), ("n_test", 1), ("train_seed", 0), ("test_seed", 0)):
            self._set(name, checks.count(name, getattr(self, name), minimum))
        self._set("n_attention_examples", checks.count("n_attention_examples", self.n_attention_examples, 0))
        if self.n_attention_examples > self.n_test:
            raise ValueError(
                f"n_attention_examples={self.n_attention_examples} exceeds n_test={self.n_test}: "
                "the attention rows shown are test sequences."
            )
        self._set("history_every", checks.count("history_every", self.history_every))
        self._set("data_per_seed", checks.boolean("data_per_seed", self.data_per_seed))
        if self.batch_size is not None and self.batch_size > self.n_train:
            raise ValueError(f"batch_size={self.batch_size} exceeds n_train={self.n_train}.")
        if self.attention_length is not None and self.attention_length not in self.lengths:
            raise ValueError(
                f"attention_length={self.attention_length} is not one of lengths {self.lengths}."
            )
