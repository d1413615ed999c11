"""The Adaptively Sparse Transformer experiment in miniature: train, translate, analyse the heads.

:func:`run_experiment` trains small encoder–decoder Transformers on the same data, with the
same initialisation and schedule, differing only in the attention normaliser — by default
softmax, 1.5-entmax and learned α-entmax (Correia, Niculae & Martins, 2019) — then

1. scores greedy translations of the test split (BLEU, chrF, exact match);
2. reads every head's learned α and its trajectory during training;
3. measures, with teacher forcing on the test split, each head's attention density, each
   layer's head diversity (Jensen–Shannon), and head specialisations: positional heads,
   subword merging, the interrogation head, and (beyond the paper) how well context attention
   matches the gold word alignments.

Everything returned is plain Python (JSON-serialisable) and small; attention maps are kept only
for one example sentence and a few heads. An analysis the test split cannot support (no
interrogative word, no word of several pieces, no gold alignment, a single head) is left out of
the results and its reason is given under "skipped"; this is known before training.

Reference: Correia, Niculae & Martins (2019), Adaptively Sparse Transformers,
https://aclanthology.org/D19-1223/
"""

from __future__ import annotations

import functools
import math
import numbers
import time

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from entmax_lib import metrics
from entmax_book.translation.corpus import make_splits
from entmax_book.translation.data import encode_examples
from entmax_book.translation.model import ATTENTION_TYPES, ModelConfig, Transformer, greedy_decode
from entmax_book.translation.scoring import corpus_bleu, corpus_chrf
from entmax_book.translation.tokenizer import DEFAULT_VOCAB_SIZE, train_tokenizer
from entmax_book.translation.train import TrainConfig, cross_entropy, train

__all__ = [
    "DEFAULTS",
    "NORMALISERS",
    "PAPER_SCALE",
    "analyse",
    "check_config",
    "pick_example",
    "prepare_data",
    "run_experiment",
    "translate",
    "unmeasurable",
]

#: The three models of the paper's Table 1, in this order.
NORMALISERS = ("softmax", "entmax15", "alpha_entmax")

#: The chapter's settings (every key can be overridden in :func:`run_experiment`).
DEFAULTS = {
    # data: generated English→German pairs, pairs longer than the caps (in pieces) are skipped
    "n_train": 6000,
    "n_valid": 200,
    "n_test": 300,
    "corpus_seed": 0,
    "vocab_size": DEFAULT_VOCAB_SIZE,
    "max_src_len": 16,
    "max_tgt_len": 20,
    # model
    "normalisers": NORMALISERS,
    "d_model": 64,
    "num_heads": 4,
    "num_layers": 3,
    "d_ff": 128,
    "n_iter": None,
    "dropout": 0.0,
    "attention_dropout": 0.0,
    "ffn_dropout": 0.0,
    "seed": 0,
    # training
    "steps": 1000,
    "batch_size": 32,
    "learning_rate": 6e-3,
    "warmup_steps": 50,
    "label_smoothing": 0.0,
    "schedule": "cosine",
    "alpha_learning_rate": None,
    "batch_tokens": None,
    "compute_dtype": "float32",
    "record_every": 10,
    # learning curves: test loss and BLEU every this many steps (None: only at the end)
    "eval_every": 200,
    # analysis
    "density_bins": 20,
    "verbose": False,
}

#: :func:`run_experiment` settings for the paper's scale on a GPU (Correia, Niculae & Martins,
#: 2019, §4): Transformer-base (6 + 6 layers, 8 heads, d = 512, feed-forward 2048; Vaswani et
#: al., 2017), dropout 0.1, label smoothing 0.1, linear warm-up over 20,000 steps then
#: inverse-square-root decay to a peak of 2·512^(−1/2)·20000^(−1/2), batches of about 8,192
#: tokens, bfloat16 passes, a 32,000-piece joint subword vocabulary. Pass the splits of a real
#: corpus with ``splits=`` and its sizes as n_train, n_valid and n_test; training runs
#: data-parallel over every local GPU (see :func:`entmax_book.translation.train.train`). The
#: learning curve (greedy decoding of the whole test split) is drawn every 5,000 steps, not
#: the chapter's every 200, so that evaluation stays a small share of the run.
PAPER_SCALE = {
    "vocab_size": 32_000,
    "max_src_len": 128,
    "max_tgt_len": 128,
    "d_model": 512,
    "num_heads": 8,
    "num_layers": 6,
    "d_ff": 2048,
    "dropout": 0.1,
    "attention_dropout": 0.1,
    "ffn_dropout": 0.1,
    "steps": 50_000,
    "batch_tokens": 8192,
    "learning_rate": 2 * 512**-0.5 * 20_000**-0.5,
    "warmup_steps": 20_000,
    "schedule": "inverse_sqrt",
    "label_smoothing": 0.1,
    "compute_dtype": "bfloat16",
    "record_every": 100,
    "eval_every": 5_000,
}

_DATA_COUNTS = ("n_train", "n_valid", "n_test", "vocab_size", "max_src_len", "max_tgt_len")

#: Oversampling of generated pairs so that enough of them fit the length caps.
_OVERSAMPLE = 1.35


def _check_positive_int(config, name):
    value = config[name]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer (a count), got {value!r}.")


def _model_config(config, normaliser, vocab_size, pad_id=0):
    return ModelConfig(
        vocab_size=vocab_size,
        normaliser=normaliser,
        d_model=config["d_model"],
        num_heads=config["num_heads"],
        num_layers=config["num_layers"],
        d_ff=config["d_ff"],
        max_len=max(config["max_src_len"], config["max_tgt_len"]),
        pad_id=pad_id,
        n_iter=config["n_iter"],
        dropout=config["dropout"],
        attention_dropout=config["attention_dropout"],
        ffn_dropout=config["ffn_dropout"],
    )


def _train_config(config):
    steps = config["steps"]
    warmup = config["warmup_steps"]
    if isinstance(steps, numbers.Integral) and isinstance(warmup, numbers.Integral):
        warmup = min(warmup, steps // 2)
    return TrainConfig(
        steps=steps,
        batch_size=config["batch_size"],
        learning_rate=config["learning_rate"],
        warmup_steps=warmup,
        label_smoothing=config["label_smoothing"],
        seed=config["seed"],
        record_every=config["record_every"],
        schedule=config["schedule"],
        alpha_learning_rate=config["alpha_learning_rate"],
        batch_tokens=config["batch_tokens"],
        compute_dtype=config["compute_dtype"],
    )


def check_config(overrides):
    """The full settings: :data:`DEFAULTS` updated with ``overrides``, every value checked.

    Everything that can be checked before data preparation and training is: unknown keys,
    counts (pairs per split, sizes, steps) that are not positive integers, ``normalisers`` that
    is not a non-empty list of distinct known names, a learning rate that is not a positive
    finite number, a ``batch_size`` larger than ``n_train``, and the model and training
    settings (by building their :class:`ModelConfig` and :class:`TrainConfig`).

    Args:
      overrides: dict of settings, keys of :data:`DEFAULTS`.

    Returns:
      the settings dict.

    Raises:
      ValueError naming the setting.

    >>> check_config({"steps": 100})["steps"]
    100
    >>> check_config({"normalisers": "softmax"})
    Traceback (most recent call last):
    ...
    ValueError: normalisers must be a list of normaliser names such as ['softmax'], got the string 'softmax'.
    """
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}; known: {sorted(DEFAULTS)}.")
    config = {**DEFAULTS, **overrides}
    for name in (*_DATA_COUNTS, "density_bins"):
        _check_positive_int(config, name)
    if config["eval_every"] is not None:
        _check_positive_int(config, "eval_every")
    normalisers = config["normalisers"]
    if isinstance(normalisers, str):
        raise ValueError(
            f"normalisers must be a list of normaliser names such as [{normalisers!r}], "
            f"got the string {normalisers!r}."
        )
    if not isinstance(normalisers, list | tuple) or not normalisers:
        raise ValueError(f"normalisers must be a non-empty list of normaliser names, got {normalisers!r}.")
    if len(set(normalisers)) != len(normalisers):
        raise ValueError(f"normalisers must be distinct, got {list(normalisers)}.")
    for normaliser in normalisers:
        _model_config(config, normaliser, config["vocab_size"])
    _train_config(config)
    if config["batch_size"] > config["n_train"]:
        raise ValueError(f"batch_size={config['batch_size']} exceeds n_train={config['n_train']}.")
    return config


def _fits(example, tokenizer, max_src_len, max_tgt_len):
    return (
        len(tokenizer.encode(example.src)) + 1 <= max_src_len
        and len(tokenizer.encode(example.tgt)) + 1 <= max_tgt_len
    )


def prepare_data(config, splits=None):
    """Corpus → tokenizer → padded arrays.

    The joint BPE tokenizer is trained on the training split only. Pairs that need more than
    ``max_src_len`` / ``max_tgt_len`` positions are skipped (fixed shapes keep one compiled
    program per model); with generated data enough pairs are generated to fill every split.

    Args:
      config: a dict with the data keys of :data:`DEFAULTS`.
      splits: optional ``{"train", "valid", "test"}`` lists of ``Example`` (e.g. from
        ``corpus.load_tsv``); default: generated with ``corpus.make_splits``.

    Returns:
      dict with "tokenizer", "examples" (per split, the kept pairs), "arrays" (per split, the
      output of ``data.encode_examples``) and "kept" (per split, [kept, available]).

    Raises:
      ValueError for a count that is not a positive integer, splits with other keys, or a split
      of which no pair fits the length caps.

    >>> small = {"n_train": 40, "n_valid": 4, "n_test": 4, "vocab_size": 150}
    >>> data = prepare_data({**DEFAULTS, **small, "max_src_len": 32, "max_tgt_len": 40})
    >>> data["arrays"]["test"]["src"].shape, data["kept"]["test"]
    ((4, 32), [4, 6])
    """
    for name in _DATA_COUNTS:
        _check_positive_int(config, name)
    sizes = {"train": config["n_train"], "valid": config["n_valid"], "test": config["n_test"]}
    if splits is None:
        splits = make_splits(*(math.ceil(_OVERSAMPLE * sizes[k]) for k in sizes), seed=config["corpus_seed"])
    elif set(splits) != set(sizes):
        raise ValueError(f"splits must have the keys {sorted(sizes)}, got {sorted(splits)}.")
    texts = [text for e in splits["train"] for text in (e.src, e.tgt)]
    tokenizer = train_tokenizer(texts, config["vocab_size"], seed=config["corpus_seed"])
    examples, arrays, kept = {}, {}, {}
    for name, size in sizes.items():
        fitting = [
            e for e in splits[name] if _fits(e, tokenizer, config["max_src_len"], config["max_tgt_len"])
        ]
        examples[name] = fitting[:size]
        kept[name] = [len(examples[name]), len(splits[name])]
        if not examples[name]:
            raise ValueError(f"no {name} pair fits max_src_len/max_tgt_len; raise them.")
        arrays[name] = encode_examples(
            examples[name], tokenizer, config["max_src_len"], config["max_tgt_len"]
        )
    return {"tokenizer": tokenizer, "examples": examples, "arrays": arrays, "kept": kept}


def _forward_impl(graphdef, state, src, tgt_in):
    model = nnx.merge(graphdef, state)
    return model(src, tgt_in, return_weights=True)


_forward = jax.jit(_forward_impl, static_argnums=0)


@functools.partial(jax.jit, static_argnums=(0, 5))
def _test_loss(graphdef, state, src, tgt_in, tgt_out, pad_id):
    return cross_entropy(nnx.merge(graphdef, state)(src, tgt_in), tgt_out, pad_id)


def _learning_curve_scores(data, config):
    """``evaluate(model)`` for :func:`train`: teacher-forced test loss and greedy test BLEU."""
    arrays, examples = data["arrays"]["test"], data["examples"]["test"]
    columns = [jnp.asarray(arrays[k]) for k in ("src", "tgt_in", "tgt_out")]
    refs = [e.tgt for e in examples]

    def evaluate(model):
        loss = _test_loss(*nnx.split(model), *columns, model.config.pad_id)
        hyps = translate(model, data["tokenizer"], arrays, config["max_tgt_len"])
        return {"test_loss": float(loss), "test_bleu": corpus_bleu(hyps, refs)}

    return evaluate


def _masks(arrays, pad_id):
    """Which (query, key) pairs each attention type may use, and which queries are real tokens."""
    src_valid = arrays["src"] != pad_id  # (N, S)
    tgt_valid = arrays["tgt_in"] != pad_id  # (N, T)
    causal = np.tril(np.ones((tgt_valid.shape[1],) * 2, bool))
    return {
        "encoder_self": (src_valid[:, :, None] & src_valid[:, None, :], src_valid),
        "context": (tgt_valid[:, :, None] & src_valid[:, None, :], tgt_valid),
        "decoder_self": (tgt_valid[:, :, None] & tgt_valid[:, None, :] & causal, tgt_valid),
    }


def _round(x, digits=4):
    return np.round(np.asarray(x, np.float64), digits).tolist()


def _head_table(fn, weights):
    """[layer][head] of fn(weights[layer][:, head]) for weights (layers, N, H, Lq, Lk)."""
    layers, _, heads = weights.shape[:3]
    return [
        [round(float(fn(weights[layer][:, head])), 4) for head in range(heads)] for layer in range(layers)
    ]


def _has_multi_piece_word(src_words):
    return any(np.bincount(words[words >= 0]).max(initial=0) > 1 for words in src_words)


def unmeasurable(arrays, num_heads):
    """The analyses of :func:`analyse` that ``arrays`` cannot support, with the reason.

    Args:
      arrays: the output of ``data.encode_examples`` for the evaluated split.
      num_heads: heads per attention.

    Returns:
      dict from result key ("js", "merging_multi", "interrogation", "alignment_mass", ...) to a
      sentence saying why it is not measured; empty when everything can be measured.

    >>> arrays = {"src_words": np.array([[0, 1, -1]]), "src_interrogative": np.zeros((1, 3), bool),
    ...           "align": np.ones((1, 2, 3))}
    >>> sorted(unmeasurable(arrays, num_heads=2))
    ['interrogation', 'merging_multi']
    """
    reasons = {}
    if num_heads < 2:
        reasons["js"] = "head diversity needs at least 2 heads per attention"
    if not _has_multi_piece_word(arrays["src_words"]):
        reasons["merging_multi"] = "no source word of the split has 2 or more pieces"
    if not np.any(arrays["src_interrogative"]):
        reasons["interrogation"] = "no source sentence of the split has an interrogative word"
    if not np.any(arrays["align"]):
        no_gold = "the split has no gold word alignment"
        for key in ("alignment_mass", "alignment_aer", "alignment_layer_mass", "alignment_layer_aer"):
            reasons[key] = no_gold
    return reasons


def pick_example(arrays):
    """Index of the first pair whose source has an interrogative word, a "?" and a word of ≥ 2 pieces
    (so that one sentence shows positional, merging and interrogation heads); 0 if none.

    Args:
      arrays: the output of ``data.encode_examples``.

    Returns:
      the index.

    >>> pick_example({"src_words": np.array([[0, 1, -1], [0, 0, 1]]),
    ...               "src_interrogative": np.array([[1, 0, 0], [1, 1, 0]], bool),
    ...               "src_question": np.array([[0, 1, 0], [0, 0, 1]], bool)})
    1
    """
    for i, words in enumerate(arrays["src_words"]):
        split = _has_multi_piece_word(words[None])
        if arrays["src_interrogative"][i].any() and arrays["src_question"][i].any() and split:
            return i
    return 0


def _density_results(weights, masks, bins):
    """ "density" [layer][head], "density_hist" (row-density counts) and "density_bins"."""
    out = {"density": {}, "density_hist": {}}
    for kind in ATTENTION_TYPES:
        allowed, query_valid = masks[kind]
        # rows of padding queries have no allowed key → NaN density → left out of every mean
        row_allowed = allowed[:, None] & query_valid[:, None, :, None]
        density = np.stack([metrics.attention_density(w, row_allowed) for w in weights[kind]])
        out["density"][kind] = _round(np.nanmean(density, axis=(1, 3)))
        out["density_hist"][kind] = np.histogram(density[np.isfinite(density)], bins)[0].tolist()
    out["density_bins"] = _round(bins)
    return out


def _diversity_results(weights, masks):
    """ "js": per attention type, the Jensen–Shannon divergence between the heads of each layer."""
    js = {}
    for kind in ATTENTION_TYPES:
        allowed, query_valid = masks[kind]
        js[kind] = [round(metrics.head_diversity(w, allowed, query_valid), 4) for w in weights[kind]]
    return {"js": js}


def _encoder_head_results(enc, arrays, src_valid, skip):
    """Encoder self-attention specialisations, each [layer][head]."""
    scores = {
        "positional_prev": lambda w: metrics.positional_confidence(w, -1, src_valid, src_valid),
        "positional_next": lambda w: metrics.positional_confidence(w, +1, src_valid, src_valid),
        "merging": lambda w: metrics.subword_merging_score(w, arrays["src_words"]),
        "merging_multi": lambda w: metrics.subword_merging_score(
            w, arrays["src_words"], include_single=False
        ),
        "interrogation": lambda w: metrics.interrogation_score(
            w, arrays["src_question"], arrays["src_interrogative"]
        ),
    }
    return {key: _head_table(fn, enc) for key, fn in scores.items() if key not in skip}


def _alignment_results(ctx, gold):
    """Context attention against gold alignments: per head and per layer (heads averaged)."""
    layers, _, heads = ctx.shape[:3]
    per_head = [
        [metrics.alignment_agreement(ctx[l][:, h], gold) for h in range(heads)] for l in range(layers)
    ]
    per_layer = [metrics.alignment_agreement(ctx[l].mean(1), gold) for l in range(layers)]
    return {
        "alignment_mass": [[round(a["gold_mass"], 4) for a in row] for row in per_head],
        "alignment_aer": [[round(a["aer"], 4) for a in row] for row in per_head],
        "alignment_layer_mass": [round(a["gold_mass"], 4) for a in per_layer],
        "alignment_layer_aer": [round(a["aer"], 4) for a in per_layer],
    }


#: The specialisations whose best head's map is kept, and the attention type each is scored on.
_MAP_SCORES = {
    "positional_prev": "encoder_self",
    "merging_multi": "encoder_self",
    "interrogation": "encoder_self",
    "alignment_mass": "context",
}


def _head_maps(scores, weights, alphas, arrays, index, pad_id):
    """For each specialisation, the best head's (layer, head, score, α) and its map on one sentence."""
    src_len = int((arrays["src"][index] != pad_id).sum())
    tgt_len = int((arrays["tgt_in"][index] != pad_id).sum())
    maps = {}
    for score, kind in _MAP_SCORES.items():
        if score not in scores:
            continue
        table = np.asarray(scores[score])
        layer, head = (int(i) for i in np.unravel_index(np.argmax(table), table.shape))
        rows = src_len if kind == "encoder_self" else tgt_len
        maps[score] = {
            "type": kind,
            "layer": layer,
            "head": head,
            "score": float(table[layer, head]),
            "alpha": float(alphas[kind][layer][head]),
            "weights": _round(weights[kind][layer, index, head, :rows, :src_len], 3),
        }
    return maps


def analyse(model, arrays, config, example_index=0):
    """Teacher-forced attention analyses of one model on one split (Correia et al., 2019, §5).

    Runs the model once over ``arrays`` (the output of ``data.encode_examples``, N pairs) with
    teacher forcing and measures, with :mod:`entmax_lib.metrics`:

    * "test_loss": mean token cross-entropy;
    * "density" {type: [layer][head]}: mean share of the allowed keys with non-zero weight
      (allowed: real source tokens, or the causal prefix for decoder self-attention);
      "density_hist" {type: counts} over "density_bins" (row densities of all heads);
    * "js" {type: [layer]}: Jensen–Shannon divergence between the heads of a layer (log base H);
    * encoder self-attention heads, [layer][head]: "positional_prev"/"positional_next" (mean
      weight on the previous/next token), "merging" (the paper's subword-merging score, single-
      piece words scoring p_ii), "merging_multi" (only words of ≥ 2 pieces), "interrogation"
      (weight of interrogative words on "?");
    * context heads, [layer][head]: "alignment_mass" (attention on gold-aligned source pieces) and
      "alignment_aer" (AER of the argmax alignment); per layer, heads averaged:
      "alignment_layer_mass", "alignment_layer_aer";
    * "maps": for the best head of each of positional_prev, merging_multi, interrogation and
      alignment_mass, its (layer, head, score, α) and its attention map on pair ``example_index``;
    * "skipped": {key: reason} for the analyses above that ``arrays`` cannot support
      (:func:`unmeasurable`); those keys are absent.

    Args:
      model: a trained :class:`~entmax_book.translation.model.Transformer`.
      arrays: the evaluated split, from ``data.encode_examples``.
      config: settings with "density_bins".
      example_index: the pair whose attention maps are kept.

    Returns:
      (the dict above, the attention weights {type: (layers, N, H, Lq, Lk) NumPy array}).
    """
    logits, weights = _forward(*nnx.split(model), jnp.asarray(arrays["src"]), jnp.asarray(arrays["tgt_in"]))
    loss = float(cross_entropy(logits, jnp.asarray(arrays["tgt_out"]), model.config.pad_id))
    weights = {k: np.asarray(v) for k, v in weights.items()}  # (layers, N, H, Lq, Lk)
    masks = _masks(arrays, model.config.pad_id)
    skip = unmeasurable(arrays, model.config.num_heads)
    out = {"test_loss": round(loss, 4)}
    out.update(_density_results(weights, masks, np.linspace(0.0, 1.0, config["density_bins"] + 1)))
    if "js" not in skip:
        out.update(_diversity_results(weights, masks))
    out.update(_encoder_head_results(weights["encoder_self"], arrays, masks["encoder_self"][1], skip))
    if "alignment_mass" not in skip:
        out.update(_alignment_results(weights["context"], arrays["align"]))
    alphas = {k: np.asarray(v) for k, v in model.alphas().items()}
    out["maps"] = _head_maps(out, weights, alphas, arrays, example_index, model.config.pad_id)
    out["skipped"] = skip
    return out, weights


def translate(model, tokenizer, arrays, max_len):
    """Greedy translations (strings) of every source in ``arrays``.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      tokenizer: the :class:`~entmax_book.translation.tokenizer.SubwordTokenizer` of the data.
      arrays: dict with "src" (N, S) ids.
      max_len: target tokens to generate (at most the model's ``max_len``).

    Returns:
      list of N strings.
    """
    ids = greedy_decode(model, arrays["src"], max_len, tokenizer.bos_id, tokenizer.eos_id)
    return [tokenizer.decode(row) for row in ids]


def _example_entry(tokenizer, examples, index):
    """The test pair whose attention maps are kept, with its pieces."""
    example = examples[index]
    return {
        "index": index,
        "src": example.src,
        "tgt": example.tgt,
        "src_pieces": [*tokenizer.pieces(example.src), "</s>"],
        "tgt_pieces": [*tokenizer.pieces(example.tgt), "</s>"],  # what each decoder position predicts
    }


def _model_entry(model, history, data, config, example_index):
    """One trained model's results: translation scores, α, training history, samples and analyses."""
    tokenizer, arrays, examples = data["tokenizer"], data["arrays"]["test"], data["examples"]["test"]
    t0 = time.perf_counter()
    hyps = translate(model, tokenizer, arrays, config["max_tgt_len"])
    decode_seconds = time.perf_counter() - t0
    refs = [e.tgt for e in examples]
    entry = {
        "bleu": round(corpus_bleu(hyps, refs), 2),
        "chrf": round(corpus_chrf(hyps, refs), 2),
        "exact_match": round(float(np.mean([h == r for h, r in zip(hyps, refs, strict=True)])), 4),
        "alpha": {k: _round(v) for k, v in model.alphas().items()},
        "history": history,
        "train_seconds": round(history["seconds"], 2),
        "samples": [[e.src, h, e.tgt] for e, h in zip(examples[:5], hyps[:5], strict=True)],
    }
    entry.update(analyse(model, arrays, config, example_index)[0])
    entry["eval_seconds"] = round(time.perf_counter() - t0, 2)
    entry["decode_seconds"] = round(decode_seconds, 2)
    return entry


def run_experiment(splits=None, data=None, **overrides):
    """Train and analyse softmax, 1.5-entmax and α-entmax Transformers; return a JSON-able dict.

    All settings are checked (:func:`check_config`), and the analyses the test split cannot
    support are found (:func:`unmeasurable`), before any training.

    Args:
      splits: optional ``{"train", "valid", "test"}`` example lists (e.g. from ``load_tsv``);
        default: the generated corpus.
      data: optional output of :func:`prepare_data` for the same settings (saves preparing it
        twice); ``splits`` is then ignored.
      **overrides: any key of :data:`DEFAULTS`.

    Returns:
      dict with "config", "data" (kept/available pairs per split, vocabulary size), "example"
      (the test pair whose attention maps are kept, with its pieces), "skipped" (analysis →
      reason it is not measured, see :func:`unmeasurable`), "seconds", and per model under
      "models"[name]: "bleu", "chrf" (tokenised, see :mod:`~entmax_book.translation.scoring`;
      greedy test translations), "exact_match", "alpha" ({type: [layer][head]}), "history" (loss
      and α trajectories, see ``train.train``; with ``eval_every``, under "eval" the learning
      curve: "step", "test_loss" (teacher-forced) and "test_bleu" (greedy) of the test split,
      its last point at the final step), "samples" (five [source, translation,
      reference]), "train_seconds", "eval_seconds", "decode_seconds", and the analyses of
      :func:`analyse`. Also top-level "bleu", "chrf" and "alpha" ({model: ...}).

    Raises:
      ValueError for a bad setting, before any data preparation or training.
    """
    config = check_config(overrides)
    start = time.perf_counter()
    if data is None:
        data = prepare_data(config, splits)
    tokenizer, arrays = data["tokenizer"], data["arrays"]
    n_train = len(arrays["train"]["src"])
    if config["batch_size"] > n_train:
        raise ValueError(f"batch_size={config['batch_size']} exceeds the {n_train} training pairs kept.")
    skipped = unmeasurable(arrays["test"], config["num_heads"])
    if config["verbose"] and skipped:
        print("not measured:", skipped, flush=True)
    index = pick_example(arrays["test"])
    result = {
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()},
        "data": {"kept": data["kept"], "vocab_size": tokenizer.vocab_size},
        "example": _example_entry(tokenizer, data["examples"]["test"], index),
        "skipped": skipped,
        "models": {},
    }
    train_config = _train_config(config)
    curve = {}
    if config["eval_every"] is not None:
        every, steps = config["eval_every"], config["steps"]
        curve = {
            "evaluate": _learning_curve_scores(data, config),
            "eval_steps": sorted({*range(every, steps + 1, every), steps}),
        }
    for normaliser in config["normalisers"]:
        model_config = _model_config(config, normaliser, tokenizer.vocab_size, tokenizer.pad_id)
        model = Transformer(model_config, seed=config["seed"])
        progress = None
        if config["verbose"]:
            progress = lambda step, loss, n=normaliser: print(f"{n} step {step} loss {loss:.3f}", flush=True)
        history = train(model, arrays["train"], train_config, progress, desc=normaliser, **curve)
        entry = _model_entry(model, history, data, config, index)
        result["models"][normaliser] = entry
        if config["verbose"]:
            shown = ("bleu", "chrf", "exact_match", "train_seconds", "decode_seconds", "eval_seconds")
            print(normaliser, {k: entry[k] for k in shown}, flush=True)
    for key in ("bleu", "chrf", "alpha"):
        result[key] = {name: m[key] for name, m in result["models"].items()}
    result["seconds"] = round(time.perf_counter() - start, 2)
    return result
