"""Infini-attention variants: what each public implementation computes, as infini.* keys, kept
apart so that the conventions and their sources (file:line) are read in one place."""
from .errors import fail, say
from .model_config import config_int

# The paper's convention and infini's defaults (docs/design.md §1, §1.8). Each preset is what the
# implementation's code computes (read at the commits named; file:line):
#   Beomi/InfiniTransformer @045f4eb, infini_llama/modeling_infini_llama.py: gate [1,H,1,1] (949);
#     the memory gets q/k before RoPE (997); no memory yet -> zeros, then mixed (1103, 1074-1077);
#     memory.repeat(1, groups, 1, 1) tiles the KV memories, so query head h reads h % Hkv (1113,
#     1123); sigma(q)M / sigma(q)z with no eps (1130); linear update only (1133-1156). Gemma's
#     config has segment_size (infini_gemma/configuration_infini_gemma.py:27, default 2048).
#   nanotron's infini-attention (fork RRaAy-H/nanotron-infini @f9b5509, src/nanotron/models/llama.py):
#     balance_factors [H] (493) through balance_act_type, orig_sigmoid among others (509-526), weighting
#     the memory (574-576, 600); q/k "without PE" (584); zeros before any write (629); einops repeat
#     "(n_kv_heads n)": h / group (640, 645); no eps (668, 696); delta rule (696-697).
#   lucidrains/infini-transformer-pytorch @5774bb3, infini_transformer_pytorch/infini_transformer.py:
#     eps 1e-10 clamped (78-85); delta off by default (92, 282); head_gates [H] (96); without past
#     memories the output is the local attention alone, so the first segment is "local" (134-135);
#     out * g + mem * (1 - g): the gate weights the local attention (153); un-rotated q and k (249,
#     264); wrapper.py:78 segment_length 512.
#   dingo-actual/infini-transformer @08d0a12, infini_transformer/compressive_memory.py: linear by
#     default (21); betas [1,H,1,Dv] (62); z starts at 1/dim_key (100); sigma of the un-rotated q/k
#     (143, 167); no eps (163, 172); the gate weights the memory (180-181).
#   jlamprou/Infini-Attention @3a86dd5, infiniAttention.py: beta [1] (50); RoPE applied (82) before
#     the memory reads and writes (98-100): "after"; denominator + 1e-8 (125, 131); linear
#     (use_delta=False, 129); the gate weights the memory (141-144); segment_size 2048 (53).
# Only the memory's conventions are mapped: a checkpoint must otherwise be a Hugging Face Llama or
# Gemma (lucidrains' and dingo's own models are not: fused qkv, GEGLU with biases, interleaved or
# partial RoPE, dingo's causal=False default).

KEYS = ["segment", "update", "first_segment", "memory_rope", "head_map", "gate_shape", "gate_sense",
        "z_init", "eps", "eps_mode"]
PAPER = {"segment": 2048, "update": "delta", "first_segment": "mix", "memory_rope": "before", "head_map": "group",
         "gate_shape": "head", "gate_sense": "memory", "z_init": 0.0, "eps": 1e-10, "eps_mode": "clamp"}
PRESETS = {
    "paper": {},
    "beomi": {"head_map": "modulo", "update": "linear"},
    "nanotron": {},
    "lucidrains": {"gate_sense": "local", "update": "linear", "first_segment": "local", "segment": 512},
    "dingo": {"gate_shape": "head_value", "update": "linear", "z_init": "1/D"},
    "jlamprou": {"memory_rope": "after", "gate_shape": "layer", "update": "linear", "eps": 1e-8, "eps_mode": "add"},
}
# Notes printed with a preset: where the file computes what the implementation does only nearly.
PRESET_NOTES = {
    "beomi": "Beomi divides by sigma(q).z with no eps; the 1e-10 clamp differs only where that denominator is below 1e-10",
    "nanotron": "nanotron divides by sigma(q).z with no eps; the 1e-10 clamp differs only where that denominator is below"
                " 1e-10 (and only its balance_act_type orig_sigmoid is what infini computes)",
    "dingo": "dingo divides by sigma(q).z with no eps; z starts at 1/D, so the 1e-10 clamp differs only where that"
             " denominator is below 1e-10",
}
GATE_NAMES = {"gate": "beomi", "balance_factors": "nanotron", "head_gates": "lucidrains", "betas": "dingo",
              "beta": "jlamprou"}
CHOICES = {"update": ("linear", "delta"), "first_segment": ("mix", "local"), "memory_rope": ("before", "after"),
           "head_map": ("group", "modulo"), "gate_shape": ("head", "head_value", "layer"),
           "gate_sense": ("memory", "local"), "eps_mode": ("clamp", "add")}
# (GGUF key, flag) per setting.
GGUF_KEYS = {"segment": ("infini.segment_length", "--segment"), "update": ("infini.memory_update", "--update"),
             "first_segment": ("infini.first_segment", "--first-segment"),
             "memory_rope": ("infini.memory_rope", "--memory-rope"), "head_map": ("infini.memory_head_map", "--head-map"),
             "gate_shape": ("infini.gate_shape", "--gate-shape"), "gate_sense": ("infini.gate_sense", "--gate-sense"),
             "z_init": ("infini.memory_z_init", "--z-init"), "eps": ("infini.memory_eps", "--eps"),
             "eps_mode": ("infini.memory_eps_mode", "--eps-mode")}


def choose_variant(args, cfg, gates, m):
    """The settings {key: (value, where)} and the gate tensors' kind, or None for a plain file."""
    overrides = {k: getattr(args, k) for k in KEYS if getattr(args, k) is not None}
    if not gates:
        if args.variant:
            fail(f"--variant {args.variant}: the checkpoint has no gate tensors (model.layers.N.self_attn."
                 f"{{{','.join(GATE_NAMES)}}}), and an Infini-attention variant needs them")
        if overrides:
            flag = GGUF_KEYS[next(iter(overrides))][1]
            fail(f"{flag}: the checkpoint has no gate tensors, so the file would have no Infini-attention memory")
        say("no gate tensors: a plain file (no infini.* keys); infini runs it with memory off")
        return None
    kinds = sorted({n.rsplit(".", 1)[1] for names in gates.values() for n in names})
    if len(kinds) > 1:
        fail(f"gate tensors of several kinds ({', '.join(kinds)}): one implementation's gates only")
    missing = [i for i in range(m.layers) if i not in gates]
    if missing:
        fail(f"gate tensors '{kinds[0]}' on layers {sorted(gates)} only (missing on {missing}): all layers or none")
    for i, names in gates.items():
        if len(names) > 1:
            fail(f"layer {i} has several gate tensors: {names}")
    kind = kinds[0]
    if args.variant:
        variant, origin = args.variant, "flag --variant"
    else:
        variant, origin = GATE_NAMES[kind], f"inferred from the gate tensors 'model.layers.N.self_attn.{kind}'"
        if "segment_size" in cfg and variant == "beomi":
            origin += " and config.json's segment_size"
    say(f"variant: {variant} ({origin})")
    settings = {}
    for k in KEYS:
        if k in overrides:
            settings[k] = (overrides[k], f"flag {GGUF_KEYS[k][1]}")
        elif k == "segment" and "segment_size" in cfg:
            settings[k] = (config_int(cfg, "segment_size", hi=1 << 24), "config segment_size")
        elif k in PRESETS[variant]:
            settings[k] = (PRESETS[variant][k], f"preset {variant}")
        else:
            settings[k] = (PAPER[k], f"preset {variant}" if variant == "paper" else f"preset {variant}, as the paper")
    if settings["z_init"][0] == "1/D":
        settings["z_init"] = (1.0 / m.head_dim, settings["z_init"][1] + f": 1/D, D = {m.head_dim}")
    if not 1 <= settings["segment"][0] <= 1 << 24:
        fail(f"segment {settings['segment'][0]} (must be 1 to 2^24)")
    if not 0.0 <= settings["z_init"][0] <= 1e30:
        fail(f"z init {settings['z_init'][0]:g} (infini reads 0 to 1e30)")
    if not 1e-30 <= settings["eps"][0] <= 1.0:
        fail(f"eps {settings['eps'][0]:g} (infini reads 1e-30 to 1)")
    if variant == "nanotron" and cfg.get("balance_act_type", "orig_sigmoid") != "orig_sigmoid":
        fail(f"config.json: balance_act_type '{cfg['balance_act_type']}': infini's gate is a sigmoid (orig_sigmoid)")
    for k in KEYS:
        v, where = settings[k]
        shown = f"{v:g}" if isinstance(v, float) else str(v)
        say(f"  {GGUF_KEYS[k][0]} = {shown} ({where})")
    if variant in PRESET_NOTES and settings["eps"][0] == PAPER["eps"] and settings["eps_mode"][0] == "clamp":
        say(f"  note: {PRESET_NOTES[variant]}")
    if variant == "jlamprou" and m.heads_kv not in (1, m.heads):
        say("  note: jlamprou's memory has one slot per query head and adds the KV heads' updates by broadcasting,"
            " which runs only for Hkv = 1 or Hq; group is what both give")
    return {k: v for k, (v, _) in settings.items()}, kind


def gate_values(shape, gate_shape, m, name):
    """The gate tensor's GGUF shape (numpy order) for gate_shape, after checking its HF shape."""
    dims = [d for d in shape if d != 1]
    if gate_shape == "head":
        want, text = (m.heads,), f"[{m.heads}] (one per query head)"
    elif gate_shape == "head_value":
        want, text = (m.heads, m.head_dim), f"[{m.heads}, {m.head_dim}] (per query head and value dim)"
    else:
        want, text = (1,), "[1] (one for the layer)"
    if dims != [d for d in want if d != 1]:
        fail(f"gate tensor '{name}' has shape {list(shape)}, which is not gate_shape {gate_shape} {text}")
    return want
