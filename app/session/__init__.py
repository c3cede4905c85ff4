"""One visitor's session: its keys (``keys``), the link's round trip (``link``; one checked value: ``link_values``),
the widgets' rules (``widgets``).

Imports from outside this package: app.explore, app.render, app.serving, Streamlit, and elmo_core's public API.
"""
