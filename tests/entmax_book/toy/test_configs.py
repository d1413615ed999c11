"""Tests for entmax_book.toy.configs: the named configurations."""

import dataclasses

import numpy as np
import pytest

from entmax_book.toy import configs


def test_original_is_the_demo():
    o = configs.ORIGINAL
    assert (o.dim, o.n_classes, o.n_informative) == (16, 4, 3)
    assert o.lengths == (4, 8, 16, 32) and o.seeds == (0, 1, 2)
    assert (o.steps, o.learning_rate, o.batch_size) == (5000, 5e-3, None)
    assert (o.n_train, o.n_test, o.attention_length) == (512, 2000, 16)
    assert o.alpha_init == pytest.approx(1.1 + 1.7 / (1 + np.exp(1.0)))
    assert o.data_per_seed and not o.balanced_classes and o.directions == "basis"


def test_the_recorded_runs_change_one_condition_at_a_time():
    changed = {k for k, v in vars(configs.DEMO).items() if vars(configs.ORIGINAL)[k] != v}
    assert changed == {"seeds"} and configs.DEMO.seeds == tuple(range(10))
    assert configs.config_for("demo_exact_gradient", {}).gradient == "closed_form"
    assert configs.config_for("stress", {}) == configs.STRESS
    chosen = {
        "softmax": {"distractor_score_std": [0.12345, 9.0]},
        "alpha_entmax": {"distractor_score_std": [0.0456, 2.0]},
    }
    done = {"stress": {"result": chosen}}
    fixed = configs.config_for("stress_fixed_scale", done)
    assert fixed.score_norm == 0.123 and fixed.variants == ("softmax", "alpha_entmax")
    # the second fixed scale is the one the learned-α model chose at the shortest L
    small = configs.config_for("stress_fixed_scale_small", done)
    assert small == dataclasses.replace(fixed, score_norm=0.046)


def test_a_run_that_needs_an_earlier_record_names_it():
    """Without the ``stress`` record, its fixed-scale run used to fail with a bare KeyError."""
    with pytest.raises(ValueError, match="record 'stress' first, or add it to --only"):
        configs.config_for("stress_fixed_scale", {})
    with pytest.raises(ValueError, match="unknown run"):
        configs.config_for("demo_typo", {})
