"""The explorer's two pages, run by Streamlit as scripts (st.Page), shipped as modules of the package."""
