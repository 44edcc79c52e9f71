"""The lessons, one package per page, each named by its URL slug (``/warp`` is ``lessons/warp/``).

A lesson's package holds everything that lesson is: ``page.py`` (the Streamlit story, the only
module of the lesson that imports Streamlit), its pure modules (computation, figures, presets,
snippets, notes callouts, texts), ``links.py`` (its ready-made lesson links) and ``README.md``
(its reference). ``registry.py`` lists every lesson and puts their links together.
"""
