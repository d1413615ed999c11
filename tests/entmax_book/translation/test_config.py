"""The translation configs: every bad setting refused when a config is made, named."""

import dataclasses
import math

import pytest

from entmax_book.translation import configs
from entmax_book.translation.config import DataConfig, ModelConfig, TrainConfig, TranslationConfig


@pytest.mark.parametrize(
    ("setting", "error", "message"),
    [
        ({"normaliser": ["softmax"]}, TypeError, "normaliser must be a name"),
        ({"normaliser": "relu"}, ValueError, "normaliser must be one of"),
        ({"learning_rate": math.nan}, ValueError, "learning_rate"),
        ({"learning_rate": math.inf}, ValueError, "learning_rate"),
        ({"learning_rate": 0.0}, ValueError, "learning_rate"),
        ({"label_smoothing": math.nan}, ValueError, "label_smoothing"),
        ({"n_train": 0}, ValueError, "n_train must be an integer >= 1"),
        ({"n_valid": -3}, ValueError, "n_valid must be an integer >= 1"),
        ({"n_test": 0}, ValueError, "n_test must be an integer >= 1"),
        ({"n_train": 2.5}, TypeError, "n_train must be an integer"),
        ({"vocab_size": True}, TypeError, "vocab_size must be an integer"),
        ({"max_src_len": 0}, ValueError, "max_src_len"),
        ({"density_bins": 0}, ValueError, "density_bins"),
        ({"num_heads": 0}, ValueError, "num_heads must be an integer >= 1"),
        ({"num_heads": 3}, ValueError, "not divisible by num_heads"),
        ({"d_model": 0}, ValueError, "d_model"),
        ({"steps": 0}, ValueError, "steps must be an integer >= 1"),
        ({"batch_size": 0}, ValueError, "batch_size must be an integer >= 1"),
        ({"batch_size": 7000}, ValueError, "batch_size=7000 exceeds n_train"),
        ({"record_every": 0}, ValueError, "record_every"),
        ({"eval_every": 0}, ValueError, "eval_every must be an integer >= 1"),
        ({"n_iter": -1}, ValueError, "n_iter"),
        ({"n_iter": 0}, ValueError, "n_iter"),
        ({"n_iter": 2**40}, ValueError, r"n_iter must be an integer in \[1, 2147483647\]"),
        ({"dropout": 1.5}, ValueError, r"dropout must be in \[0, 1\)"),
        ({"ffn_dropout": -0.1}, ValueError, r"ffn_dropout must be in \[0, 1\)"),
        ({"attention_dropout": 1.0}, ValueError, "attention_dropout"),
        ({"schedule": "linear"}, ValueError, "schedule must be one of"),
        ({"schedule": "inverse_sqrt", "warmup_steps": 0}, ValueError, "warmup"),
        ({"alpha_learning_rate": -1.0}, ValueError, "alpha_learning_rate"),
        ({"alpha_learning_rate": math.nan}, ValueError, "alpha_learning_rate"),
        ({"seed": -1}, ValueError, r"seed must be an integer in \[0, "),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"seed": 2**70}, ValueError, r"seed must be an integer in \[0, "),
        ({"seed": 2**32 - 10_000}, ValueError, r"seed must be an integer in \[0, 4294957295\]"),
        ({"corpus_seed": -1}, ValueError, "corpus_seed"),
        ({"corpus_seed": "abc"}, TypeError, "corpus_seed"),
        ({"corpus_version": 4}, ValueError, r"corpus_version must be one of \[1, 2, 3\], got 4"),
        ({"corpus_version": "2"}, TypeError, "corpus_version must be an integer"),
        ({"label_smoothing": "0.1"}, TypeError, "label_smoothing"),
        ({"label_smoothing": None}, TypeError, "label_smoothing"),
        ({"compute_dtype": "float16"}, ValueError, "compute_dtype"),
        ({"batch_tokens": 0}, ValueError, "batch_tokens"),
        ({"batch_tokens": 1}, ValueError, "batch_tokens=1 cannot hold one pair"),
        ({"max_len": 10}, ValueError, "max_len=10 is shorter than the data's longest side"),
        ({"stepz": 3}, TypeError, "'stepz' is not a setting"),
    ],
)
def test_a_bad_setting_is_refused_with_its_name(setting, error, message):
    with pytest.raises(error, match=message):
        TranslationConfig().replace(**setting)


def test_replace_routes_each_field_to_its_part_and_checks_again():
    config = TranslationConfig().replace(seed=3, steps=400, normaliser="softmax", n_test=10, density_bins=5)
    assert (config.seed, config.train.steps, config.model.normaliser) == (3, 400, "softmax")
    assert (config.data.n_test, config.analysis.density_bins) == (10, 5)
    assert TranslationConfig().replace() == TranslationConfig()


def test_a_part_of_the_wrong_type_is_refused():
    with pytest.raises(TypeError, match="model must be a ModelConfig"):
        TranslationConfig(model=DataConfig())


def test_from_dict_reads_back_asdict():
    for config in (configs.RECIPE, configs.HARDER, configs.PAPER_SCALE, configs.condition("alpha_frozen", 2)):
        assert TranslationConfig.from_dict(dataclasses.asdict(config)) == config


def test_the_named_configurations_are_the_paper_s():
    scale = configs.PAPER_SCALE
    assert (scale.model.num_layers, scale.model.num_heads, scale.model.d_model, scale.model.d_ff) == (
        6,
        8,
        512,
        2048,
    )
    assert scale.train.batch_tokens == 8192 and scale.train.schedule == "inverse_sqrt"
    recipe = configs.RECIPE
    assert (recipe.model.dropout, recipe.train.label_smoothing, recipe.train.schedule) == (
        0.1,
        0.1,
        "inverse_sqrt",
    )
    assert configs.condition("alpha_frozen", 1).train.alpha_learning_rate == 0.0
    # HARDER is RECIPE on corpus version 3, its vocabulary and fewer training pairs, nothing else
    harder, changed = dataclasses.asdict(configs.HARDER), dataclasses.asdict(recipe)
    differ = {(part, key) for part in harder if isinstance(harder[part], dict) for key in harder[part]
              if harder[part][key] != changed[part][key]}  # fmt: skip
    assert {key for _, key in differ} == {"corpus_version", "vocab_size", "n_train"}
    assert configs.HARDER.data.corpus_version == 3 and recipe.data.corpus_version == 1
    assert configs.condition("alpha_frozen", 1, configs.HARDER).data.corpus_version == 3
    with pytest.raises(ValueError, match="unknown condition"):
        configs.condition("sparsemax_seed0", 0)


def test_each_part_checks_itself():
    with pytest.raises(ValueError, match="d_model=30 is not divisible"):
        ModelConfig(d_model=30, num_heads=4)
    with pytest.raises(ValueError, match="steps"):
        TrainConfig(steps=0)
