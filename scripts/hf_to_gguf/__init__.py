"""The pieces of scripts/convert-hf.py (a Hugging Face checkpoint folder -> a GGUF file infini
runs), one concept a module; the script is the entry point."""
