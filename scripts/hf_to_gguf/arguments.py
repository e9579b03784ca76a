"""The command line: flags per infini.* key, and the presets listed in --help from the tables in
variants.py so that the help cannot drift from what is written."""
import argparse
import sys

from .variants import CHOICES, GATE_NAMES, KEYS, PAPER, PRESETS


def parse_args():
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            print(f"convert-hf: {message} (see --help)", file=sys.stderr)
            sys.exit(2)

    def shown(v):
        return f"{v:g}" if isinstance(v, float) else str(v)

    p = Parser(description="Convert a Hugging Face Llama or Gemma checkpoint (with Infini-attention gates or"
                           " without) to a GGUF file for infini.",
               formatter_class=argparse.RawDescriptionHelpFormatter,
               epilog="presets (a flag overrides its key; config.json's segment_size, where present, the segment):\n"
                      "  paper       " + ", ".join(f"{k} {shown(PAPER[k])}" for k in KEYS) + "\n" + "\n".join(
                          f"  {v:11} " + (("as paper but " + ", ".join(f"{k} {shown(d)}" for k, d in PRESETS[v].items()))
                                          if PRESETS[v] else "as paper")
                          + f" (gate tensor '{next(n for n, x in GATE_NAMES.items() if x == v)}')"
                          for v in PRESETS if v != "paper"))
    p.add_argument("dir", help="checkpoint folder (config.json and weights)")
    p.add_argument("out", help="output .gguf (written whole or not at all)")
    p.add_argument("--variant", choices=list(PRESETS), help="the implementation whose conventions the gates were"
                   " trained with (default: inferred from the gate tensors' name)")
    p.add_argument("--outtype", choices=("f32", "f16"), default="f16", help="2-D matrices' type (default f16)")
    p.add_argument("--segment", type=int, help="infini.segment_length (default: config segment_size, else the preset's)")
    p.add_argument("--update", choices=CHOICES["update"], help="infini.memory_update")
    p.add_argument("--first-segment", dest="first_segment", choices=CHOICES["first_segment"], help="infini.first_segment")
    p.add_argument("--memory-rope", dest="memory_rope", choices=CHOICES["memory_rope"], help="infini.memory_rope")
    p.add_argument("--head-map", dest="head_map", choices=CHOICES["head_map"], help="infini.memory_head_map")
    p.add_argument("--gate-shape", dest="gate_shape", choices=CHOICES["gate_shape"], help="infini.gate_shape")
    p.add_argument("--gate-sense", dest="gate_sense", choices=CHOICES["gate_sense"], help="infini.gate_sense")
    p.add_argument("--z-init", dest="z_init", type=float, help="infini.memory_z_init (>= 0)")
    p.add_argument("--eps", type=float, help="infini.memory_eps (1e-30 to 1)")
    p.add_argument("--eps-mode", dest="eps_mode", choices=CHOICES["eps_mode"], help="infini.memory_eps_mode")
    return p.parse_args()
