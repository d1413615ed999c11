"""Teacher-forced attention analyses of a trained translation Transformer (Correia et al., 2019, §5).

:func:`analyse` runs a model once over a split with teacher forcing and measures, per attention
type, layer and head: the density of the attention rows and the Jensen–Shannon diversity of a
layer's heads (:mod:`entmax_lib.metrics`); the paper's head specialisations — positional heads,
subword merging, the interrogation head — and, beyond the paper, the planted constructions of
the generated corpus and the agreement of context attention with gold word alignments
(:mod:`~entmax_book.translation.heads`); and the accuracy of the predictions on each planted
construction (:func:`construction_accuracy`).

The analyses that need word tags read them from the split's ``tags`` (see
:func:`entmax_book.translation.data.encode`); an analysis the split cannot support is left out
and its reason given (:func:`unmeasurable`), known before any training.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from entmax_book.translation import heads
from entmax_book.translation.config import AnalysisConfig
from entmax_book.translation.data import Split
from entmax_book.translation.model import ATTENTION_TYPES
from entmax_book.translation.tokenizer import PAD_ID
from entmax_book.translation.train import cross_entropy
from entmax_lib import metrics

__all__ = [
    "ablate_head",
    "alpha_modes",
    "analyse",
    "construction_accuracy",
    "head_ablations",
    "pick_example",
    "uniform_baseline",
    "unmeasurable",
]

#: The source tags the encoder-head analyses read (see ``corpus.tag_pieces``).
_SOURCE_TAGS = ("src_question", "src_interrogative", "src_compound_head", "src_marker")


def _forward_impl(graphdef, state, src, tgt_in):
    model = nnx.merge(graphdef, state)
    return model(src, tgt_in, return_weights=True)


_forward = jax.jit(_forward_impl, static_argnums=0)


def _masks(split, pad_id):
    """Which (query, key) pairs each attention type may use, and which queries are real tokens."""
    src_valid = split.src != pad_id  # (N, S)
    tgt_valid = split.tgt_in != pad_id  # (N, T)
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


def _tag(split, name):
    """The split's tag ``name`` ((N, S) or (N, T) bool), all False where the split has none."""
    if name in split.tags:
        return np.asarray(split.tags[name], bool)
    return np.zeros(split.src.shape if name.startswith("src_") else split.tgt_out.shape, bool)


def _has_multi_piece_word(src_words):
    return any(np.bincount(words[words >= 0]).max(initial=0) > 1 for words in src_words)


def unmeasurable(split: Split, num_heads: int) -> dict:
    """The analyses of :func:`analyse` that ``split`` cannot support, with the reason.

    Args:
      split: the evaluated :class:`~entmax_book.translation.data.Split`.
      num_heads: heads per attention.

    Returns:
      dict from result key ("js", "merging_multi", "interrogation", "alignment_mass", ...) to a
      sentence saying why it is not measured; empty when everything can be measured.

    >>> from entmax_book.translation.data import Example, Split
    >>> one = np.array([[5, 6, 1]])
    >>> split = Split((Example("a b", "c"),), one, one, one, np.array([[0, 1, -1]]), one, np.ones((1, 3, 3)))
    >>> sorted(unmeasurable(split, num_heads=2))
    ['interrogation', 'marker', 'marker_sink', 'merging_multi', 'positional_compound']
    """
    reasons = {}
    if num_heads < 2:
        reasons["js"] = "head diversity needs at least 2 heads per attention"
    if not _has_multi_piece_word(split.src_words):
        reasons["merging_multi"] = "no source word of the split has 2 or more pieces"
    if not np.any(_tag(split, "src_interrogative")):
        reasons["interrogation"] = "no source sentence of the split has a word tagged interrogative"
    if not np.any(_tag(split, "src_compound_head")):
        reasons["positional_compound"] = (
            "no source sentence of the split has a word tagged as a two-word noun"
        )
    if not np.any(_tag(split, "src_marker")):
        reasons["marker"] = "the split has no sentence tagged as a marker question"
    if "src_question" not in split.tags or np.all(_tag(split, "src_question").any(1)):
        reasons["marker_sink"] = "the split has no sentence tagged as a statement (without a question mark)"
    if not np.any(split.align):
        no_gold = "the split has no gold word alignment"
        for key in ("alignment_mass", "alignment_aer", "alignment_layer_mass", "alignment_layer_aer"):
            reasons[key] = no_gold
    return reasons


def uniform_baseline(split: Split) -> dict[str, float]:
    """The encoder head scores of a head with no preference: each query spreads its weight evenly.

    Every row gives weight 1/n to each of its sentence's n pieces (the end piece included,
    padding not), and :func:`analyse`'s encoder-head scores are computed on these weights. A
    piece of a k-piece word puts (k − 1)/n of its weight on the word's other pieces, and 1/n on
    the piece before it: a trained head has found something only where it scores well above this
    baseline.

    Args:
      split: the evaluated :class:`~entmax_book.translation.data.Split`.

    Returns:
      {key: score} for the encoder-head keys of :func:`analyse` that ``split`` supports
      ("positional_prev", "merging_multi", "marker", "top_key_share", ...).

    >>> from entmax_book.translation.data import Example, Split
    >>> ids, words = np.array([[5, 6, 7, 1]]), np.array([[0, 0, 1, -1]])  # a word of 2 pieces
    >>> split = Split((Example("a b", "c"),), ids, ids, ids, words, ids, np.ones((1, 4, 4)))
    >>> uniform_baseline(split)["merging_multi"]  # the word's other piece: 1 of 4
    0.25
    """
    src_valid = np.asarray(split.src) != PAD_ID  # (N, S)
    rows = src_valid[:, None, :] / src_valid.sum(1)[:, None, None]  # (N, 1, S)
    weights = np.broadcast_to(rows, (*src_valid.shape, src_valid.shape[1]))  # (N, S, S)
    skip = unmeasurable(split, num_heads=1)
    results = _encoder_head_results(weights[None, :, None], split, src_valid, skip)
    return {key: table[0][0] for key, table in results.items()}


def pick_example(split: Split) -> int:
    """Index of the first pair that shows every planted construction at once: a marker question
    with a two-word noun and a word of ≥ 2 pieces; else the first with an interrogative word, a
    "?" and a word of ≥ 2 pieces; 0 if none.

    Args:
      split: a :class:`~entmax_book.translation.data.Split`.

    Returns:
      the index.
    """
    multi = [_has_multi_piece_word(words[None]) for words in split.src_words]
    marker, compound = _tag(split, "src_marker"), _tag(split, "src_compound_head")
    interrogative, question = _tag(split, "src_interrogative"), _tag(split, "src_question")
    for i, split_word in enumerate(multi):
        if split_word and marker[i].any() and compound[i].any():
            return i
    for i, split_word in enumerate(multi):
        if split_word and interrogative[i].any() and question[i].any():
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


def _encoder_head_results(enc, split, src_valid, skip):
    """Encoder self-attention specialisations, each [layer][head]."""
    tag = {name: _tag(split, name) for name in _SOURCE_TAGS}
    final = _final_token(split.src, PAD_ID)
    statement = ~tag["src_question"].any(1, keepdims=True) & src_valid & ~final
    scores = {
        "positional_prev": lambda w: heads.positional_confidence(w, -1, src_valid, src_valid),
        "positional_next": lambda w: heads.positional_confidence(w, +1, src_valid, src_valid),
        "merging": lambda w: heads.subword_merging_score(w, split.src_words),
        "merging_multi": lambda w: heads.subword_merging_score(w, split.src_words, include_single=False),
        "interrogation": lambda w: heads.interrogation_score(
            w, tag["src_question"], tag["src_interrogative"]
        ),
        "positional_compound": lambda w: heads.positional_confidence(
            w, -1, _first_pieces(tag["src_compound_head"]), src_valid
        ),
        "marker": lambda w: heads.interrogation_score(w, tag["src_question"], tag["src_marker"]),
        # the sink check: the same weight on the final "." of statements
        "marker_sink": lambda w: heads.interrogation_score(w, final, statement),
        "top_key_share": lambda w: heads.top_key_share(w, src_valid, src_valid),
    }
    return {key: _head_table(fn, enc) for key, fn in scores.items() if key not in skip}


def _alignment_results(ctx, gold):
    """Context attention against gold alignments: per head and per layer (heads averaged)."""
    layers, _, n_heads = ctx.shape[:3]
    per_head = [
        [heads.alignment_agreement(ctx[l][:, h], gold) for h in range(n_heads)] for l in range(layers)
    ]
    per_layer = [heads.alignment_agreement(ctx[l].mean(1), gold) for l in range(layers)]
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


def _head_maps(scores, weights, alphas, split, index, pad_id):
    """For each specialisation, the best head's (layer, head, score, α) and its map on one sentence."""
    src_len = int((split.src[index] != pad_id).sum())
    tgt_len = int((split.tgt_in[index] != pad_id).sum())
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


def construction_accuracy(logits, split: Split) -> dict:
    """Teacher-forced accuracy of the argmax prediction, overall and on each tagged construction.

    accuracy = share of the counted target pieces whose most probable piece is the reference.
    "tokens" counts every non-padding target piece; each target tag of the split (a name
    starting "tgt_", e.g. the generated corpus's planted constructions) counts the pieces of its
    mask (None when no piece has it).

    Args:
      logits: (N, T, V) decoder logits with teacher forcing.
      split: the :class:`~entmax_book.translation.data.Split`.

    Returns:
      {"tokens": float, "tgt_compound": float | None, ...}.
    """
    correct = np.asarray(logits).argmax(-1) == split.tgt_out
    targets = {name: np.asarray(mask, bool) for name, mask in split.tags.items() if name.startswith("tgt_")}
    masks = {"tokens": split.tgt_out != PAD_ID, **targets}
    return {
        name: round(float(correct[mask].mean()), 4) if mask.any() else None for name, mask in masks.items()
    }


def analyse(model, split: Split, config: AnalysisConfig, example_index: int = 0):
    """Teacher-forced attention analyses of one model on one split (Correia et al., 2019, §5).

    Runs the model once over ``split`` (N pairs) with teacher forcing and measures:

    * "test_loss": mean token cross-entropy; "accuracy": teacher-forced accuracy, overall and on
      each tagged construction (:func:`construction_accuracy`);
    * "density" {type: [layer][head]}: mean share of the allowed keys with non-zero weight
      (allowed: real source tokens, or the causal prefix for decoder self-attention);
      "density_hist" {type: counts} over "density_bins" (``config.density_bins`` bins of the
      row densities of all heads);
    * "js" {type: [layer]}: Jensen–Shannon divergence between the heads of a layer (log base H);
    * encoder self-attention heads, [layer][head]: "positional_prev"/"positional_next" (mean
      weight on the previous/next token), "merging" (the paper's subword-merging score, single-
      piece words scoring p_ii), "merging_multi" (only words of ≥ 2 pieces), "interrogation"
      (weight of interrogative words on "?"), "positional_compound" (weight of the first piece
      of a two-word noun's second word on the piece before it), "marker" (weight of the words of
      a marker question on its "?"), "marker_sink" (weight of the words of a statement on its
      final ".") and "top_key_share" (the sink check: the weight of a sentence's most-attended
      key, averaged over sentences, to compare with every other head's);
    * context heads, [layer][head]: "alignment_mass" (attention on gold-aligned source pieces) and
      "alignment_aer" (AER of the argmax alignment); per layer, heads averaged:
      "alignment_layer_mass", "alignment_layer_aer";
    * "maps": for the best head of each of positional_compound, merging_multi, marker and
      alignment_mass, its (layer, head, score, α) and its attention map on pair ``example_index``;
    * "skipped": {key: reason} for the analyses above that ``split`` cannot support
      (:func:`unmeasurable`); those keys are absent.

    Args:
      model: a trained :class:`~entmax_book.translation.model.Transformer`.
      split: the evaluated :class:`~entmax_book.translation.data.Split`.
      config: an :class:`~entmax_book.translation.config.AnalysisConfig`.
      example_index: the pair whose attention maps are kept.

    Returns:
      (the dict above, the attention weights {type: (layers, N, H, Lq, Lk) NumPy array}).
    """
    logits, weights = _forward(*nnx.split(model), jnp.asarray(split.src), jnp.asarray(split.tgt_in))
    loss = float(cross_entropy(logits, jnp.asarray(split.tgt_out), model.pad_id))
    weights = {k: np.asarray(v) for k, v in weights.items()}  # (layers, N, H, Lq, Lk)
    masks = _masks(split, model.pad_id)
    skip = unmeasurable(split, num_heads=weights["encoder_self"].shape[2])
    out = {"test_loss": round(loss, 4), "accuracy": construction_accuracy(logits, split)}
    out.update(_density_results(weights, masks, np.linspace(0.0, 1.0, config.density_bins + 1)))
    if "js" not in skip:
        out.update(_diversity_results(weights, masks))
    out.update(_encoder_head_results(weights["encoder_self"], split, masks["encoder_self"][1], skip))
    if "alignment_mass" not in skip:
        out.update(_alignment_results(weights["context"], split.align))
    alphas = {k: np.asarray(v) for k, v in model.alphas().items()}
    out["maps"] = _head_maps(out, weights, alphas, split, example_index, model.pad_id)
    out["skipped"] = skip
    return out, weights


def alpha_modes(alphas, dense_below: float = 1.25, sparse_above: float = 1.75) -> dict:
    """How many heads have a dense α (below ``dense_below``) and a sparse α (above ``sparse_above``).

    Two counts, not a bimodality coefficient: heads piled up at the clamp α = 1.01 with a tail
    make a coefficient look bimodal without any head near α = 2, but give a sparse count of 0.

    Args:
      alphas: {attention type: (layers, heads) α}, e.g. ``model.alphas()``, or one array.

    Returns:
      {"dense": int, "sparse": int, "heads": int}.

    >>> alpha_modes({"encoder_self": np.array([[1.01, 1.02, 1.5, 1.9]])})
    {'dense': 2, 'sparse': 1, 'heads': 4}
    """
    values = np.concatenate(
        [np.ravel(v) for v in (alphas.values() if isinstance(alphas, dict) else [alphas])]
    )
    return {
        "dense": int(np.sum(values < dense_below)),
        "sparse": int(np.sum(values > sparse_above)),
        "heads": int(values.size),
    }


def _attention_module(model, kind, layer):
    if kind == "encoder_self":
        return model.encoder_layers[layer].self_attention
    decoder = model.decoder_layers[layer]
    return decoder.context_attention if kind == "context" else decoder.self_attention


def ablate_head(model, kind: str, layer: int, head: int):
    """A copy of ``model`` in which one head contributes nothing.

    The head's slice of its attention's output projection is set to zero, so its weighted values
    never reach the residual stream; every other weight is shared unchanged.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      kind: one of :data:`~entmax_book.translation.model.ATTENTION_TYPES`.
      layer, head: which head.

    Returns:
      the ablated copy (``model`` is unchanged).
    """
    if kind not in ATTENTION_TYPES:
        raise ValueError(f"kind must be one of {ATTENTION_TYPES}, got {kind!r}.")
    ablated = nnx.clone(model)
    out = _attention_module(ablated, kind, layer).out
    out.kernel.value = out.kernel.value.at[head].set(0.0)
    return ablated


@functools.partial(jax.jit, static_argnums=0)
def _logits(graphdef, state, src, tgt_in):
    return nnx.merge(graphdef, state)(src, tgt_in)


def head_ablations(model, split: Split, kinds=ATTENTION_TYPES) -> dict:
    """The causal test of a head's role: each construction's accuracy with one head ablated.

    Args:
      model: a trained :class:`~entmax_book.translation.model.Transformer`.
      split: the evaluated :class:`~entmax_book.translation.data.Split`.
      kinds: the attention types whose heads are ablated, one at a time.

    Returns:
      {"intact": construction_accuracy of the model, kind: [layer][head] {construction: accuracy
      with that head ablated}} (see :func:`construction_accuracy`; forward passes only).
    """
    src, tgt_in = jnp.asarray(split.src), jnp.asarray(split.tgt_in)
    graphdef, state = nnx.split(model)
    out = {"intact": construction_accuracy(_logits(graphdef, state, src, tgt_in), split)}
    layers, n_heads = len(model.encoder_layers), model.encoder_layers[0].self_attention.num_heads
    for kind in kinds:
        out[kind] = [
            [
                construction_accuracy(
                    _logits(*nnx.split(ablate_head(model, kind, layer, head)), src, tgt_in), split
                )
                for head in range(n_heads)
            ]
            for layer in range(layers)
        ]
    return out
