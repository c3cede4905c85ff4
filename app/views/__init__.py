"""The explorer's two pages, run by Streamlit as scripts (st.Page), shipped as modules of the package, and the parts
every page shares: the sidebar's model panel (``model_panel``) and the page's frame (``layout``). Widgets only.

Imports from outside this package: app.explore, app.render, app.serving, app.session, Streamlit, and elmo_core's
public API.
"""
