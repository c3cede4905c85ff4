"""One visitor's session: its keys, the link's round trip, the widgets' rules.

Imports from outside this package: app.explore, app.render, app.serving, Streamlit, and elmo_core's public API.
"""
