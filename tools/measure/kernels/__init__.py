"""The parts of h200_kernels.py: tables, logging, timer, light kernels, a module per section."""
