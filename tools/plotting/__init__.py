"""The modes of tools/plot.py, one module per family of pictures; plot.py is the entry point."""
