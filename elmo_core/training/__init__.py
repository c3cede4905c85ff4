"""Training and scoring our own biLM: the language-model loss (lm), the training loop (train), the teacher's
targets (teacher) and perplexity with the model's identity (evaluate).

Imports from outside this package: elmo_core.model, elmo_core.data, elmo_core.paths and elmo_core.metrics.
"""
