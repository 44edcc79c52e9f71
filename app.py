"""Torch Playground entry point: page config, the page registry and the shared sidebar.

Run with ``streamlit run app.py``. Nothing else lives here.
"""

import os

# Idle OpenMP workers sleep instead of spinning. On a busy 2-core machine spinning workers
# made small torch calls 10-25x slower (flow page, torch backend at 240x320: 338 ms -> 13 ms).
# Must be set before torch is first imported; an explicit setting in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from ui.class_questions import show_class_question
from ui.classroom import finish_class_run, start_class_run
from ui.gc_freeze import after_script_run
from ui.i18n import start_language
from ui.links import link_snapshot, report_link, translate_link_labels
from ui.navigation import navigation_pages
from ui.settings import render_sidebar
from ui.turns import turn_released

st.set_page_config(page_title="Torch Playground", page_icon=":material/science:", layout="wide")

# The language first: the navigation's page titles are already in it (ui/i18n.py).
language, lang_rejected = start_language()
translate_link_labels(language)  # a link's menu labels, in this visitor's language
navigation = st.navigation(navigation_pages(language))
# The browser tab names the page, in the visitor's language (a class keeps several tabs open).
st.set_page_config(page_title=f"{navigation.title} · Torch Playground")
link = link_snapshot(lang_rejected)  # the URL as given, before controls correct it (ui/links.py)
# A class first: a following student may be sent to the teacher's view (ui/classroom.py).
class_places = start_class_run(navigation.url_path or "home")
render_sidebar()
# The page takes a turn after drawing its title (ui/turns.py); give it back however it ends.
with turn_released():
    try:
        navigation.run()
    except StopException:  # a page stopped at an error message: the link is still reported
        report_link(link)
        finish_class_run(class_places)
        show_class_question(class_places)
        raise
    finally:
        after_script_run()  # freeze new modules, collect now and then: ui/gc_freeze.py
report_link(link)  # notice for what the link could not set, and "Link to this view"
finish_class_run(class_places)  # publish the teacher's view, or detach a student who moved
show_class_question(class_places)  # a question asked of the class: ui/class_questions.py
