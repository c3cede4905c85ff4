"""What the Explorer page's parts share: the session state, presentation mode and the charts' projector type."""

from __future__ import annotations

import streamlit as st

from app.render import figures
from app.session import keys

ss = st.session_state

# Only the open tab is drawn (a first map sooner, less work per slider move): its widgets keep their values
# while another tab is open, and across a visit to another page, as the URL and the export need them.
KEEP = "session"


def presenting() -> bool:
    return bool(ss.get(keys.PRESENT))


def chart(fig):
    """``fig`` as the page draws it: larger type in presentation mode (``figures.for_projector``)."""
    return figures.for_projector(fig) if presenting() and fig is not None else fig
