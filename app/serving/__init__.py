"""The server's shared resources, one of each per server process: models, caches, the reference corpus, memory,
downloads, background jobs. The only users of st.cache_*.

settings (environment variables), limits (the server's memory for models and biLM calls), startup (the startup and
bundled models, ``LoadedModel``), published (the published models: cache, load, downloads), uploads (a user's own
model), models (this session's model, resolved once per script run; the Compare tab's models), caches (parsed input,
activations), corpus (the reference corpus), jobs (UMAP's warm-up, the layer-0 vocabulary); below them, without
Streamlit: memory, downloads, background (threads, ``Job``), type_vectors, warm_up.

Imports from outside this package: app.explore, app.render, Streamlit (the only users of st.cache_*), and
elmo_core's public API (``from elmo_core import X``, X in ``elmo_core.__all__``).
"""
