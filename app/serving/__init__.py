"""The server's shared resources: models, caches, the reference corpus, memory, downloads, background jobs.

Imports from outside this package: app.explore, app.render, Streamlit (the only users of st.cache_*), and
elmo_core's public API.
"""
