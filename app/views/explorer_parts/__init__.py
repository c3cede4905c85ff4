"""The Explorer page's parts (``app/views/explorer.py`` is the page, which Streamlit runs as a script): its
sections (``sentences``: the sentences and the word; ``rail``: the weights and the map's controls; ``link``: the
URL and the copy-link row), one module per tab (``map_tab``, ``neighbours_tab``, ``similarity_tab``,
``senses_tab``, ``compare_tab``, ``export_tab``), the biLM runs behind progress bars (``embedding``) and what
several of them share (``common``). They draw with Streamlit and compute with the app's logic modules; none
imports the page, which draws itself when it is imported."""
