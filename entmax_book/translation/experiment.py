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

import dataclasses
import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from entmax_book import progress as progress_bars
from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.corpus import Example, make_splits
from entmax_book.translation.data import CONSTRUCTIONS, encode_examples
from entmax_book.translation.model import ATTENTION_TYPES, Transformer, greedy_decode
from entmax_book.translation.scoring import corpus_bleu, corpus_chrf
from entmax_book.translation.tokenizer import PAD_ID, train_tokenizer
from entmax_book.translation.train import cross_entropy, train
from entmax_lib import metrics

__all__ = [
    "analyse",
    "construction_accuracy",
    "pick_example",
    "prepare_data",
    "run_experiment",
    "split_scores",
    "translate",
    "unmeasurable",
]

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
            if not isinstance(example, Example):
                raise TypeError(
                    f"splits[{name!r}][{n}] must be an Example(src, tgt, alignment), got {example!r}."
                )
            n_src, n_tgt = len(example.src.split()), len(example.tgt.split())
            for link in example.alignment:
                i, j = link
                if not (0 <= i < n_src and 0 <= j < n_tgt):
                    raise ValueError(
                        f"splits[{name!r}][{n}]: alignment link {tuple(link)} is outside the sentences "
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
        splits = make_splits(*counts, seed=config.corpus_seed)
        tokenizer, fitting = _fit_splits(config, splits, sizes)
        if all(len(fitting[name]) == size for name, size in sizes.items()):
            return splits, tokenizer, fitting
    short = {name: f"{len(fitting[name])} of {size}" for name, size in sizes.items()}
    raise ValueError(
        f"too few generated pairs fit max_src_len={config.max_src_len} and "
        f"max_tgt_len={config.max_tgt_len} (pairs kept per split: {short}); raise the caps."
    )


def prepare_data(config: TranslationConfig, splits=None):
    """Corpus → tokenizer → padded arrays.

    The joint BPE tokenizer is trained on the training split only. Pairs that need more than
    ``max_src_len`` / ``max_tgt_len`` positions are skipped (fixed shapes keep one compiled
    program per model). Generated data fill every split to its size (more pairs are generated
    until they do, or a ``ValueError`` gives the numbers); given splits keep what fits.

    Args:
      config: a :class:`~entmax_book.translation.config.TranslationConfig`.
      splits: optional ``{"train", "valid", "test"}`` lists of ``Example`` (e.g. from
        ``corpus.load_tsv``); default: generated with ``corpus.make_splits``.

    Returns:
      dict with "tokenizer", "examples" (per split, the kept pairs), "arrays" (per split, the
      output of ``data.encode_examples``) and "kept" (per split, [kept, available]).

    Raises:
      TypeError/ValueError naming the split and pair for items that are not ``Example`` or
      alignment links outside the sentences; ValueError for an empty split or one of which no
      pair fits the length caps.

    >>> small = TranslationConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, batch_size=8,
    ...                           max_src_len=32, max_tgt_len=40)
    >>> data = prepare_data(small)
    >>> data["arrays"]["test"]["src"].shape, data["kept"]["test"]
    ((4, 32), [4, 8])
    """
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
    arrays = {
        name: encode_examples(examples[name], tokenizer, config.max_src_len, config.max_tgt_len)
        for name in sizes
    }
    kept = {name: [len(examples[name]), len(splits[name])] for name in sizes}
    return {"tokenizer": tokenizer, "examples": examples, "arrays": arrays, "kept": kept}


def _forward_impl(graphdef, state, src, tgt_in):
    model = nnx.merge(graphdef, state)
    return model(src, tgt_in, return_weights=True)


_forward = jax.jit(_forward_impl, static_argnums=0)


@functools.partial(jax.jit, static_argnums=(0, 5))
def _test_loss(graphdef, state, src, tgt_in, tgt_out, pad_id):
    return cross_entropy(nnx.merge(graphdef, state)(src, tgt_in), tgt_out, pad_id)


def split_scores(model, arrays) -> dict:
    """Teacher-forced cross-entropy and token accuracy of ``model`` on a split (no dropout, no
    label smoothing).

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      arrays: dict with "src", "tgt_in" and "tgt_out" (from ``data.encode_examples``).

    Returns:
      {"loss": mean over the non-padding target pieces of − log p(reference piece),
      "accuracy": share of those pieces whose most probable piece is the reference}.
    """
    columns = [jnp.asarray(arrays[k]) for k in ("src", "tgt_in", "tgt_out")]
    loss, accuracy = _split_scores(*nnx.split(model), *columns, model.pad_id)
    return {"loss": float(loss), "accuracy": float(accuracy)}


@functools.partial(jax.jit, static_argnums=(0, 5))
def _split_scores(graphdef, state, src, tgt_in, tgt_out, pad_id):
    logits = nnx.merge(graphdef, state)(src, tgt_in)
    real = tgt_out != pad_id
    accuracy = jnp.sum((logits.argmax(-1) == tgt_out) & real) / jnp.maximum(jnp.sum(real), 1)
    return cross_entropy(logits, tgt_out, pad_id), accuracy


def _learning_curve_scores(data, config):
    """``evaluate(model)`` for :func:`train`: teacher-forced test loss and greedy test BLEU."""
    arrays, examples = data["arrays"]["test"], data["examples"]["test"]
    columns = [jnp.asarray(arrays[k]) for k in ("src", "tgt_in", "tgt_out")]
    refs = [e.tgt for e in examples]

    def evaluate(model):
        loss = _test_loss(*nnx.split(model), *columns, model.pad_id)
        hyps = translate(model, data["tokenizer"], arrays, config.max_tgt_len)
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

    >>> no = np.zeros((1, 3), bool)
    >>> arrays = {"src_words": np.array([[0, 1, -1]]), "src_interrogative": no, "src_question": no,
    ...           "src_compound_head": no, "src_marker": no, "align": np.ones((1, 2, 3))}
    >>> sorted(unmeasurable(arrays, num_heads=2))
    ['interrogation', 'marker', 'merging_multi', 'positional_compound']
    """
    reasons = {}
    if num_heads < 2:
        reasons["js"] = "head diversity needs at least 2 heads per attention"
    if not _has_multi_piece_word(arrays["src_words"]):
        reasons["merging_multi"] = "no source word of the split has 2 or more pieces"
    if not np.any(arrays["src_interrogative"]):
        reasons["interrogation"] = "no source sentence of the split has an interrogative word"
    if not np.any(arrays["src_compound_head"]):
        reasons["positional_compound"] = "no source sentence of the split has a two-word noun"
    if not np.any(arrays["src_marker"]):
        reasons["marker"] = "the split has no marker question"
    if np.all(arrays["src_question"].any(1)):
        reasons["marker_sink"] = "the split has no statement"
    if not np.any(arrays["align"]):
        no_gold = "the split has no gold word alignment"
        for key in ("alignment_mass", "alignment_aer", "alignment_layer_mass", "alignment_layer_aer"):
            reasons[key] = no_gold
    return reasons


def pick_example(arrays):
    """Index of the first pair that shows every planted construction at once: a marker question
    with a two-word noun and a word of ≥ 2 pieces; else the first with an interrogative word, a
    "?" and a word of ≥ 2 pieces; 0 if none.

    Args:
      arrays: the output of ``data.encode_examples``.

    Returns:
      the index.

    >>> no = np.zeros((2, 3), bool)
    >>> pick_example({"src_words": np.array([[0, 1, -1], [0, 0, 1]]),
    ...               "src_interrogative": np.array([[1, 0, 0], [1, 1, 0]], bool),
    ...               "src_question": np.array([[0, 1, 0], [0, 0, 1]], bool),
    ...               "src_marker": no, "src_compound_head": no})
    1
    """
    multi = [_has_multi_piece_word(words[None]) for words in arrays["src_words"]]
    for i, split in enumerate(multi):
        if split and arrays["src_marker"][i].any() and arrays["src_compound_head"][i].any():
            return i
    for i, split in enumerate(multi):
        if split and arrays["src_interrogative"][i].any() and arrays["src_question"][i].any():
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


def _first_pieces(mask):
    """The first piece of each run of True along the last axis (the first piece of a word)."""
    previous = np.concatenate([np.zeros_like(mask[..., :1]), mask[..., :-1]], axis=-1)
    return mask & ~previous


def _final_token(src, pad_id):
    """(N, S) bool: the last source piece before EOS (the final "." or "?")."""
    last = (src != pad_id).sum(1) - 2
    return np.arange(src.shape[1])[None, :] == last[:, None]


def _encoder_head_results(enc, arrays, src_valid, skip):
    """Encoder self-attention specialisations, each [layer][head]."""
    final = _final_token(arrays["src"], PAD_ID)
    statement = ~arrays["src_question"].any(1, keepdims=True) & src_valid & ~final
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
        "positional_compound": lambda w: metrics.positional_confidence(
            w, -1, _first_pieces(arrays["src_compound_head"]), src_valid
        ),
        "marker": lambda w: metrics.interrogation_score(w, arrays["src_question"], arrays["src_marker"]),
        # the sink check: the same weight on the final "." of statements
        "marker_sink": lambda w: metrics.interrogation_score(w, final, statement),
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
    "positional_compound": "encoder_self",
    "merging_multi": "encoder_self",
    "marker": "encoder_self",
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


def construction_accuracy(logits, arrays) -> dict:
    """Teacher-forced accuracy of the argmax prediction, overall and on each planted construction.

    accuracy = share of the counted target pieces whose most probable piece is the reference.
    "tokens" counts every non-padding target piece; each name of
    :data:`~entmax_book.translation.data.CONSTRUCTIONS` counts the pieces of its mask (None when
    the split has none).

    Args:
      logits: (N, T, V) decoder logits with teacher forcing.
      arrays: the split, from ``data.encode_examples``.

    Returns:
      {"tokens": float, "tgt_compound": float | None, ...}.

    >>> arrays = {"tgt_out": np.array([[3, 4, 0]]), "tgt_compound": np.array([[0, 1, 0]], bool),
    ...           "tgt_multi_piece": np.zeros((1, 3), bool), "tgt_marker": np.array([[1, 0, 0]], bool)}
    >>> construction_accuracy(np.eye(5)[[[3, 2, 0]]], arrays)
    {'tokens': 0.5, 'tgt_compound': 0.0, 'tgt_multi_piece': None, 'tgt_marker': 1.0}
    """
    correct = np.asarray(logits).argmax(-1) == arrays["tgt_out"]
    masks = {"tokens": arrays["tgt_out"] != PAD_ID, **{name: arrays[name] for name in CONSTRUCTIONS}}
    return {
        name: round(float(correct[mask].mean()), 4) if mask.any() else None for name, mask in masks.items()
    }


def analyse(model, arrays, example_index=0):
    """Teacher-forced attention analyses of one model on one split (Correia et al., 2019, §5).

    Runs the model once over ``arrays`` (the output of ``data.encode_examples``, N pairs) with
    teacher forcing and measures, with :mod:`entmax_lib.metrics`:

    * "test_loss": mean token cross-entropy; "accuracy": teacher-forced accuracy, overall and on
      each planted construction (:func:`construction_accuracy`);
    * "density" {type: [layer][head]}: mean share of the allowed keys with non-zero weight
      (allowed: real source tokens, or the causal prefix for decoder self-attention);
      "density_hist" {type: counts} over "density_bins" (row densities of all heads);
    * "js" {type: [layer]}: Jensen–Shannon divergence between the heads of a layer (log base H);
    * encoder self-attention heads, [layer][head]: "positional_prev"/"positional_next" (mean
      weight on the previous/next token), "merging" (the paper's subword-merging score, single-
      piece words scoring p_ii), "merging_multi" (only words of ≥ 2 pieces), "interrogation"
      (weight of interrogative words on "?"), "positional_compound" (weight of the first piece
      of a two-word noun's second word on the piece before it), "marker" (weight of the words of
      a marker question on its "?") and "marker_sink" (the sink check: weight of the words of a
      statement on its final ".");
    * context heads, [layer][head]: "alignment_mass" (attention on gold-aligned source pieces) and
      "alignment_aer" (AER of the argmax alignment); per layer, heads averaged:
      "alignment_layer_mass", "alignment_layer_aer";
    * "maps": for the best head of each of positional_compound, merging_multi, marker and
      alignment_mass, its (layer, head, score, α) and its attention map on pair ``example_index``;
    * "skipped": {key: reason} for the analyses above that ``arrays`` cannot support
      (:func:`unmeasurable`); those keys are absent.

    Args:
      model: a trained :class:`~entmax_book.translation.model.Transformer`.
      arrays: the evaluated split, from ``data.encode_examples``.
      example_index: the pair whose attention maps are kept.

    Returns:
      (the dict above, the attention weights {type: (layers, N, H, Lq, Lk) NumPy array}).
    """
    logits, weights = _forward(*nnx.split(model), jnp.asarray(arrays["src"]), jnp.asarray(arrays["tgt_in"]))
    loss = float(cross_entropy(logits, jnp.asarray(arrays["tgt_out"]), model.pad_id))
    weights = {k: np.asarray(v) for k, v in weights.items()}  # (layers, N, H, Lq, Lk)
    masks = _masks(arrays, model.pad_id)
    skip = unmeasurable(arrays, model.config.num_heads)
    out = {"test_loss": round(loss, 4), "accuracy": construction_accuracy(logits, arrays)}
    out.update(_density_results(weights, masks, np.linspace(0.0, 1.0, model.config.density_bins + 1)))
    if "js" not in skip:
        out.update(_diversity_results(weights, masks))
    out.update(_encoder_head_results(weights["encoder_self"], arrays, masks["encoder_self"][1], skip))
    if "alignment_mass" not in skip:
        out.update(_alignment_results(weights["context"], arrays["align"]))
    alphas = {k: np.asarray(v) for k, v in model.alphas().items()}
    out["maps"] = _head_maps(out, weights, alphas, arrays, example_index, model.pad_id)
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
    hyps = translate(model, tokenizer, arrays, config.max_tgt_len)
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
    entry.update(analyse(model, arrays, example_index)[0])
    entry["eval_seconds"] = round(time.perf_counter() - t0, 2)
    entry["decode_seconds"] = round(decode_seconds, 2)
    return entry


def _check_prepared(data, config):
    """Prepared data must have the config's length caps and room for a batch."""
    arrays = data["arrays"]
    shapes = (arrays["train"]["src"].shape[1], arrays["train"]["tgt_in"].shape[1])
    if shapes != (config.max_src_len, config.max_tgt_len):
        raise ValueError(
            f"data were prepared with max_src_len, max_tgt_len = {shapes}, the config has "
            f"({config.max_src_len}, {config.max_tgt_len}): prepare them with this config."
        )
    n_train = len(arrays["train"]["src"])
    if config.batch_tokens is None and config.batch_size > n_train:
        raise ValueError(f"batch_size={config.batch_size} exceeds the {n_train} training pairs kept.")


def _learning_curve(data, config):
    """The ``evaluate``/``eval_steps`` arguments of ``train`` for the config's learning curve."""
    if config.eval_every is None:
        return {}
    steps = sorted({*range(config.eval_every, config.steps + 1, config.eval_every), config.steps})
    return {"evaluate": _learning_curve_scores(data, config), "eval_steps": steps}


def run_experiment(config: TranslationConfig | None = None, splits=None, data=None, **changes):
    """Train and analyse one Transformer per normaliser of ``config``; return a JSON-able dict.

    The models differ only in their attention normaliser: the same data, initial weights and
    schedule. Every setting is checked, the prepared data matched against it, and the analyses
    the test split cannot support found (:func:`unmeasurable`), before any training.

    Args:
      config: a :class:`~entmax_book.translation.config.TranslationConfig` (default: the
        chapter's, ``TranslationConfig()``).
      splits: optional ``{"train", "valid", "test"}`` example lists (e.g. from ``load_tsv``);
        default: the generated corpus.
      data: optional output of :func:`prepare_data` for the same settings (saves preparing it
        twice); ``splits`` is then ignored.
      **changes: fields of the config to replace (``run_experiment(steps=4000)``).

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
      ValueError for a bad setting, before any data preparation or training;
      ``train.TrainingDiverged`` if a loss stops being finite.
    """
    config = TranslationConfig() if config is None else config
    if not isinstance(config, TranslationConfig):
        raise TypeError(f"config must be a TranslationConfig, got {type(config).__name__}.")
    config = dataclasses.replace(config, **changes)
    progress_bars.interactive()  # a bad ENTMAX_PROGRESS fails now, not after the training
    start = time.perf_counter()
    data = prepare_data(config, splits) if data is None else data
    _check_prepared(data, config)
    tokenizer, arrays = data["tokenizer"], data["arrays"]
    index = pick_example(arrays["test"])
    result = {
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(config).items()},
        "data": {"kept": data["kept"], "vocab_size": tokenizer.vocab_size},
        "example": _example_entry(tokenizer, data["examples"]["test"], index),
        "skipped": unmeasurable(arrays["test"], config.num_heads),
        "models": {},
    }
    curve = _learning_curve(data, config)
    for normaliser in config.normalisers:
        model = Transformer(config, normaliser, tokenizer.vocab_size)
        history = train(model, arrays["train"], desc=normaliser, **curve)
        result["models"][normaliser] = _model_entry(model, history, data, config, index)
    for key in ("bleu", "chrf", "alpha"):
        result[key] = {name: m[key] for name, m in result["models"].items()}
    result["seconds"] = round(time.perf_counter() - start, 2)
    return result
