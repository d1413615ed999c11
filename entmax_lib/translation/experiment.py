"""The Adaptively Sparse Transformer experiment in miniature: train, translate, analyse the heads.

:func:`run_experiment` trains three small encoder–decoder Transformers on the same data, with
the same initialisation and schedule, differing only in the attention normaliser — softmax,
1.5-entmax and learned α-entmax (Correia, Niculae & Martins, 2019) — then

1. scores greedy translations of the test split (BLEU, chrF, exact match);
2. reads every head's learned α and its trajectory during training;
3. measures, with teacher forcing on the test split, each head's attention density, each
   layer's head diversity (Jensen–Shannon), and head specialisations: positional heads,
   subword merging, the interrogation head, and (beyond the paper) how well context attention
   matches the gold word alignments.

Everything returned is plain Python (JSON-serialisable) and small; attention maps are kept only
for one example sentence and a few heads.
"""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from entmax_lib import metrics
from entmax_lib.translation.corpus import make_splits
from entmax_lib.translation.data import encode_examples
from entmax_lib.translation.model import ATTENTION_TYPES, ModelConfig, Transformer, greedy_decode
from entmax_lib.translation.tokenizer import DEFAULT_VOCAB_SIZE, train_tokenizer
from entmax_lib.translation.train import TrainConfig, cross_entropy, train

__all__ = [
    "DEFAULTS",
    "NORMALISERS",
    "analyse",
    "pick_example",
    "prepare_data",
    "run_experiment",
    "translate",
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
    "bisect_iters": None,
    "seed": 0,
    # training
    "steps": 800,
    "batch_size": 32,
    "learning_rate": 6e-3,
    "warmup_steps": 50,
    "label_smoothing": 0.0,
    "record_every": 10,
    # analysis
    "density_bins": 20,
    "verbose": False,
}

#: Oversampling of generated pairs so that enough of them fit the length caps.
_OVERSAMPLE = 1.35


def _fits(example, tokenizer, max_src_len, max_tgt_len):
    return (
        len(tokenizer.encode(example.src)) + 1 <= max_src_len
        and len(tokenizer.encode(example.tgt)) + 1 <= max_tgt_len
    )


def prepare_data(config, splits=None):
    """Corpus → tokenizer → padded arrays.

    Args:
      config: a dict with the data keys of :data:`DEFAULTS`.
      splits: optional ``{"train", "valid", "test"}`` lists of ``Example`` (e.g. from
        ``corpus.load_tsv``); default: generated with ``corpus.make_splits``.

    Returns:
      dict with "tokenizer", "examples" (per split, the kept pairs), "arrays" (per split, the
      output of ``data.encode_examples``) and "kept" (per split, [kept, available]).
      The joint BPE tokenizer is trained on the training split only. Pairs that need more than
      ``max_src_len`` / ``max_tgt_len`` positions are skipped (fixed shapes keep one compiled
      program per model); with generated data enough pairs are generated to fill every split.
    """
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


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


def _forward_impl(graphdef, state, src, tgt_in):
    model = nnx.merge(graphdef, state)
    return model(src, tgt_in, return_weights=True)


_forward = jax.jit(_forward_impl, static_argnums=0)


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


def _head_table(fn, weights, num_layers, num_heads):
    """[layer][head] of fn(weights[layer][:, head])."""
    return [
        [round(float(fn(weights[layer][:, head])), 4) for head in range(num_heads)]
        for layer in range(num_layers)
    ]


def pick_example(arrays):
    """Index of the first pair whose source has an interrogative word, a "?" and a word of ≥ 2 pieces
    (so that one sentence shows positional, merging and interrogation heads); 0 if none."""
    for i, words in enumerate(arrays["src_words"]):
        valid = words[words >= 0]
        split = np.bincount(valid).max() > 1 if valid.size else False
        if arrays["src_interrogative"][i].any() and arrays["src_question"][i].any() and split:
            return i
    return 0


_MAP_SCORES = {
    "positional_prev": "encoder_self",
    "merging_multi": "encoder_self",
    "interrogation": "encoder_self",
    "alignment_mass": "context",
}


def _head_maps(out, weights, alphas, arrays, index, pad_id):
    """For each specialisation, the best head's (layer, head, score, α) and its map on one sentence."""
    src_len = int((arrays["src"][index] != pad_id).sum())
    tgt_len = int((arrays["tgt_in"][index] != pad_id).sum())
    maps = {}
    for score, kind in _MAP_SCORES.items():
        table = np.asarray(out[score])
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
      alignment_mass, its (layer, head, score, α) and its attention map on pair ``example_index``.

    Returns:
      (the dict above, the attention weights {type: (layers, N, H, Lq, Lk) NumPy array}).
    """
    weights_jax = _forward(*nnx.split(model), jnp.asarray(arrays["src"]), jnp.asarray(arrays["tgt_in"]))
    logits, weights = weights_jax
    loss = float(cross_entropy(logits, jnp.asarray(arrays["tgt_out"]), model.config.pad_id))
    weights = {k: np.asarray(v) for k, v in weights.items()}  # (layers, N, H, Lq, Lk)
    masks = _masks(arrays, model.config.pad_id)
    layers, heads = model.config.num_layers, model.config.num_heads
    out = {"test_loss": round(loss, 4), "density": {}, "density_hist": {}, "js": {}}
    bins = np.linspace(0.0, 1.0, config["density_bins"] + 1)
    for kind in ATTENTION_TYPES:
        allowed, query_valid = masks[kind]
        allowed4 = allowed[:, None]  # (N, 1, Lq, Lk)
        # rows of padding queries have no allowed key → NaN density → left out of every mean
        row_allowed = allowed4 & query_valid[:, None, :, None]
        density = np.stack(
            [metrics.attention_density(weights[kind][layer], row_allowed) for layer in range(layers)]
        )
        out["density"][kind] = _round(np.nanmean(density, axis=(1, 3)))  # [layer][head]
        rows = density[np.isfinite(density)]
        out["density_hist"][kind] = np.histogram(rows, bins)[0].tolist()
        out["js"][kind] = [
            round(metrics.head_diversity(weights[kind][layer], allowed, query_valid), 4)
            for layer in range(layers)
        ]
    out["density_bins"] = _round(bins)

    enc = weights["encoder_self"]
    src_valid = masks["encoder_self"][1]
    out["positional_prev"] = _head_table(
        lambda w: metrics.positional_confidence(w, -1, src_valid, src_valid), enc, layers, heads
    )
    out["positional_next"] = _head_table(
        lambda w: metrics.positional_confidence(w, +1, src_valid, src_valid), enc, layers, heads
    )
    out["merging"] = _head_table(
        lambda w: metrics.subword_merging_score(w, arrays["src_words"]), enc, layers, heads
    )
    out["merging_multi"] = _head_table(
        lambda w: metrics.subword_merging_score(w, arrays["src_words"], include_single=False),
        enc,
        layers,
        heads,
    )
    out["interrogation"] = _head_table(
        lambda w: metrics.interrogation_score(w, arrays["src_question"], arrays["src_interrogative"]),
        enc,
        layers,
        heads,
    )
    ctx = weights["context"]
    agreements = [
        [metrics.alignment_agreement(ctx[layer][:, head], arrays["align"]) for head in range(heads)]
        for layer in range(layers)
    ]
    out["alignment_mass"] = [[round(a["gold_mass"], 4) for a in row] for row in agreements]
    out["alignment_aer"] = [[round(a["aer"], 4) for a in row] for row in agreements]
    layer_mean = [metrics.alignment_agreement(ctx[layer].mean(1), arrays["align"]) for layer in range(layers)]
    out["alignment_layer_mass"] = [round(a["gold_mass"], 4) for a in layer_mean]
    out["alignment_layer_aer"] = [round(a["aer"], 4) for a in layer_mean]
    alphas = {k: np.asarray(v) for k, v in model.alphas().items()}
    out["maps"] = _head_maps(out, weights, alphas, arrays, example_index, model.config.pad_id)
    return out, weights


def translate(model, tokenizer, arrays, max_len):
    """Greedy translations (strings) of every source in ``arrays``."""
    ids = greedy_decode(model, arrays["src"], max_len, tokenizer.bos_id, tokenizer.eos_id)
    return [tokenizer.decode(row) for row in ids]


# ---------------------------------------------------------------------------------------------
# The experiment
# ---------------------------------------------------------------------------------------------


def run_experiment(splits=None, data=None, **overrides):
    """Train and analyse softmax, 1.5-entmax and α-entmax Transformers; return a JSON-able dict.

    Args:
      splits: optional ``{"train", "valid", "test"}`` example lists (e.g. from ``load_tsv``);
        default: the generated corpus.
      data: optional output of :func:`prepare_data` for the same settings (saves preparing it
        twice); ``splits`` is then ignored.
      **overrides: any key of :data:`DEFAULTS`.

    Returns:
      dict with "config", "data" (kept/available pairs per split, vocabulary size), "example"
      (the test pair whose attention maps are kept, with its pieces), "seconds", and per model
      under "models"[name]: "bleu", "chrf" (sacrebleu, greedy test translations),
      "exact_match", "alpha" ({type: [layer][head]}), "history" (loss and α trajectories, see
      ``train.train``), "samples" (five [source, translation, reference]), "train_seconds",
      "eval_seconds", "decode_seconds", and the analyses of :func:`analyse`. Also top-level
      "bleu", "chrf" and "alpha" ({model: ...}).
    """
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}; known: {sorted(DEFAULTS)}.")
    config = {**DEFAULTS, **overrides}
    start = time.perf_counter()
    if data is None:
        data = prepare_data(config, splits)
    tokenizer, arrays = data["tokenizer"], data["arrays"]
    result = {
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()},
        "data": {"kept": data["kept"], "vocab_size": tokenizer.vocab_size},
        "models": {},
    }
    index = pick_example(arrays["test"])
    example = data["examples"]["test"][index]
    result["example"] = {
        "index": index,
        "src": example.src,
        "tgt": example.tgt,
        "src_pieces": [*tokenizer.pieces(example.src), "</s>"],
        "tgt_pieces": [*tokenizer.pieces(example.tgt), "</s>"],  # what each decoder position predicts
    }
    for normaliser in config["normalisers"]:
        model_config = ModelConfig(
            vocab_size=tokenizer.vocab_size,
            normaliser=normaliser,
            d_model=config["d_model"],
            num_heads=config["num_heads"],
            num_layers=config["num_layers"],
            d_ff=config["d_ff"],
            max_len=max(config["max_src_len"], config["max_tgt_len"]),
            pad_id=tokenizer.pad_id,
            bisect_iters=config["bisect_iters"],
        )
        train_config = TrainConfig(
            steps=config["steps"],
            batch_size=config["batch_size"],
            learning_rate=config["learning_rate"],
            warmup_steps=min(config["warmup_steps"], config["steps"] // 2),
            label_smoothing=config["label_smoothing"],
            seed=config["seed"],
            record_every=config["record_every"],
        )
        model = Transformer(model_config, seed=config["seed"])
        progress = None
        if config["verbose"]:
            progress = lambda step, loss, n=normaliser: print(f"{n} step {step} loss {loss:.3f}", flush=True)
        history = train(model, arrays["train"], train_config, progress)
        t0 = time.perf_counter()
        hyps = translate(model, tokenizer, arrays["test"], config["max_tgt_len"])
        decode_seconds = time.perf_counter() - t0
        refs = [e.tgt for e in data["examples"]["test"]]
        entry = {
            "bleu": round(metrics.corpus_bleu(hyps, refs), 2),
            "chrf": round(metrics.corpus_chrf(hyps, refs), 2),
            "exact_match": round(float(np.mean([h == r for h, r in zip(hyps, refs, strict=True)])), 4),
            "alpha": {k: _round(v) for k, v in model.alphas().items()},
            "history": history,
            "train_seconds": round(history["seconds"], 2),
            "samples": [
                [e.src, h, e.tgt] for e, h in zip(data["examples"]["test"][:5], hyps[:5], strict=True)
            ],
        }
        analysis, _ = analyse(model, arrays["test"], config, index)
        entry.update(analysis)
        entry["eval_seconds"] = round(time.perf_counter() - t0, 2)
        entry["decode_seconds"] = round(decode_seconds, 2)
        result["models"][normaliser] = entry
        if config["verbose"]:
            shown = ("bleu", "chrf", "exact_match", "train_seconds", "decode_seconds", "eval_seconds")
            print(normaliser, {k: entry[k] for k in shown}, flush=True)
    result["bleu"] = {name: m["bleu"] for name, m in result["models"].items()}
    result["chrf"] = {name: m["chrf"] for name, m in result["models"].items()}
    result["alpha"] = {name: m["alpha"] for name, m in result["models"].items()}
    result["seconds"] = round(time.perf_counter() - start, 2)
    return result
