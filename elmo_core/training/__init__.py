"""Training and scoring our own biLM: the language-model loss (lm), training (train: the entry; config: the
run's settings and learning-rate schedule; prepare: the corpus, vocabulary, model and teacher inputs a run
starts with; batches: each epoch's batches; loop: the steps, log and dev score; checkpoints: resumable state,
exported models, init_from), the teacher's targets (teacher) and perplexity with the model's identity (evaluate).

Imports from outside this package: elmo_core.model, elmo_core.data, elmo_core.paths and elmo_core.metrics.
"""
