"""The indexing lesson: gather, scatter_ and x[...] with every output cell wired to its source.

Modules, from the bottom up (only ``page`` imports Streamlit):

- ``parsing``: the page's tensor text and x[...] expressions both ways; IndexingError, Pos.
- ``tracing``: trace_gather / trace_scatter / trace_index, and the notes' callouts about them.
- ``explanation``: one out cell's formula with real numbers; the words around the pictures.
- ``snippets``: Python code that reproduces each view, runnable as-is.
- ``cases``: a page case from its texts to (trace, error, snippet); the group means.
- ``presets``: the notes' examples as presets, checked against what the notes print.
- ``examples``: the seeded random case and the x[...] tab's examples.
- ``seeded_pitfalls``: the "8 pitfalls" tab, run on tensors drawn from the seed.
- ``pitfalls``: the notes' own pitfall snippets run live, and the notes' callouts about them.
- ``notes_demos``: the "More pitfalls from the notes" tab as data (tabs, menus, captions).
- ``figures``: the Plotly pictures (a grid of cells per tensor, coloured by source).
- ``page_text``: the page's longer sentences (help texts, hints), marked for translation.
- ``links``: the lesson's ready-made links.
- ``page``: the Streamlit page.
"""
