"""ELMo Explorer's Streamlit app: ``streamlit_app.py`` wires the parts, lowest first: ``explore`` (the
computation), ``render`` (what is shown), ``serving`` (one server process's shared resources), ``session`` (one
visitor's state), ``views`` (the pages). Each part's ``__init__`` says what it may import; docs/ARCHITECTURE.md
draws them and tests/test_imports.py checks them."""
